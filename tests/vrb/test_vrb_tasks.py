"""VRB task hooks: level names, seeded subset, corruption at image load, prompts, records, groups, sample."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest
from PIL import Image

from lmms_eval_tasks.corruptions import VRB_PAPER_CORRUPTIONS, corrupt
from lmms_eval_tasks.tasks.vrb import config as vrb_config
from lmms_eval_tasks.tasks.vrb import generate, hooks, make_sample
from lmms_eval_tasks.tasks.vrb.scoring import score


@pytest.fixture()
def sample_docs():
    from datasets import load_dataset

    path = hooks.Path(hooks.__file__).parent / "sample" / make_sample.SAMPLE_FILE
    return load_dataset("parquet", data_files=str(path), split="train")


def _doc(dataset, task: str, index: int = 0) -> dict:
    return hooks.HOOKS.process_docs_for(task)(dataset)[index]


def test_task_level_names() -> None:
    assert hooks.task_level("vrb_clean") == ("clean", 0)
    assert hooks.task_level("vrb_zoom_blur_s3") == ("zoom_blur", 3)
    assert hooks.task_level("vrb_sample_gaussian_noise_s5") == ("gaussian_noise", 5)
    for bad in ("vrb_zoom_blur_s6", "vrb_fog_s1", "vrb_s3", "dare_clean"):
        with pytest.raises(ValueError, match="not a VRB task"):
            hooks.task_level(bad)


def test_seeded_subset_selects_whole_images_in_dataset_order() -> None:
    image_ids = [5, 5, 3, 9, 3, 7, 9, 1]
    chosen = hooks.select_subset(image_ids, images=2, seed=0)
    assert chosen == hooks.select_subset(image_ids, images=2, seed=0)  # reproducible
    picked = {image_ids[index] for index in chosen}
    assert len(picked) == 2
    assert chosen == [
        index for index, image_id in enumerate(image_ids) if image_id in picked
    ]  # all questions
    # the draw is random.Random(seed).sample over the sorted distinct ids
    assert picked == set(random.Random(0).sample([1, 3, 5, 7, 9], 2))
    assert hooks.select_subset(image_ids, images=10, seed=0) == list(range(8))


def test_prepare_docs_uses_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from datasets import Dataset

    dataset = Dataset.from_dict({"image_id": [1, 1, 2, 3, 3, 3], "question_id": list(range(6))})
    monkeypatch.setenv(vrb_config.IMAGES_ENV, "2")
    monkeypatch.setenv(vrb_config.SEED_ENV, "4")
    subset = hooks.prepare_docs(dataset, "vrb_snow_s1")
    assert len(set(subset["image_id"])) == 2
    assert (
        subset["question_id"] == hooks.prepare_docs(dataset, "vrb_clean")["question_id"]
    )  # same at every level
    assert len(hooks.prepare_docs(dataset, "vrb_sample_clean")) == 6  # the sample is used whole
    monkeypatch.setenv(vrb_config.IMAGES_ENV, "zero")
    with pytest.raises(ValueError, match=vrb_config.IMAGES_ENV):
        hooks.prepare_docs(dataset, "vrb_clean")


def test_doc_to_visual_is_corrupt_seeded_by_image_id(sample_docs, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_doc = _doc(sample_docs, "vrb_sample_clean")
    clean = np.asarray(hooks.doc_to_visual(clean_doc)[0])
    stored = Image.open(io.BytesIO(clean_doc["image"]["bytes"]))  # the docs keep images undecoded
    assert np.array_equal(clean, np.asarray(stored.convert("RGB")))
    doc = _doc(sample_docs, "vrb_sample_gaussian_noise_s3")
    seen = np.asarray(hooks.doc_to_visual(doc)[0])
    seed = hooks.image_seed(0, doc["image_id"])
    assert np.array_equal(seen, corrupt(clean, "gaussian_noise", 3, seed=seed, profile="vrb"))
    assert np.array_equal(seen, np.asarray(hooks.doc_to_visual(doc)[0]))  # deterministic
    assert not np.array_equal(seen, clean)
    monkeypatch.setenv(vrb_config.SEED_ENV, "1")
    reseeded = np.asarray(hooks.doc_to_visual(doc)[0])
    assert np.array_equal(
        reseeded, corrupt(clean, "gaussian_noise", 3, seed=hooks.image_seed(1, doc["image_id"]))
    )
    assert not np.array_equal(reseeded, seen)
    monkeypatch.setenv(vrb_config.PROFILE_ENV, "imagenet_c")
    other = np.asarray(hooks.doc_to_visual(doc)[0])
    reseed = hooks.image_seed(1, doc["image_id"])
    assert np.array_equal(other, corrupt(clean, "gaussian_noise", 3, seed=reseed, profile="imagenet_c"))
    monkeypatch.setenv(vrb_config.PROFILE_ENV, "nope")
    with pytest.raises(ValueError, match=vrb_config.PROFILE_ENV):
        hooks.doc_to_visual(doc)


def test_image_seed_depends_on_seed_and_image() -> None:
    assert hooks.image_seed(0, 1) == hooks.image_seed(0, 1)
    assert len({hooks.image_seed(0, 1), hooks.image_seed(0, 2), hooks.image_seed(1, 1)}) == 3
    assert 0 <= hooks.image_seed(3, 123) < 2**63


def test_prompts(sample_docs, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _doc(sample_docs, "vrb_sample_clean")
    assert hooks.LLAVA_PROMPT == (
        "Answer the given question in a single word using the image as context: {question}"
    )  # the official code's prompt, byte for byte (no trailing newline)
    assert hooks.doc_to_text(doc, {"prompt": "vrb_llava"}) == (
        "Answer the given question in a single word using the image as context: How many circles are there?"
    )
    vqav2 = generate.SPECIFIC_KWARGS["qwen2_vl"]
    assert (
        hooks.doc_to_text(doc, vqav2)
        == "How many circles are there?\nAnswer the question using a single word or phrase."
    )
    assert hooks.doc_to_text(doc, None) == hooks.doc_to_text(doc, generate.SPECIFIC_KWARGS["default"])
    monkeypatch.setenv(vrb_config.PROMPT_ENV, "vqav2")
    assert hooks.doc_to_text(doc, {"prompt": "vrb_llava"}).endswith("single word or phrase.")


def test_records_score_and_carry_the_run_parameters(sample_docs) -> None:
    records = []
    for task in ("vrb_sample_clean", "vrb_sample_brightness_s1"):
        docs = hooks.HOOKS.process_docs_for(task)(sample_docs)
        for doc in docs:
            records.append(hooks.make_record(doc, [doc["multiple_choice_answer"]], task))
    assert records[0]["answers"] == [item["answer"] for item in sample_docs[0]["answers"]]
    assert {(r["corruption"], r["severity"]) for r in records} == {("clean", 0), ("brightness", 1)}
    assert {r["profile"] for r in records} == {"vrb"} and {r["seed"] for r in records} == {0}
    metrics = score(records)[1]
    # answering the consensus answer: >= 4 of 10 annotators agree on every sample question -> accuracy 1
    assert metrics["accuracy_by_level"] == {"clean": 1.0, "brightness_s1": 1.0}


def test_random_answer_space() -> None:
    rng = random.Random(0)
    assert {hooks.random_answer("vrb_clean", {"answer_type": "yes/no"}, rng) for _ in range(50)} == {
        "yes",
        "no",
    }
    numbers = {hooks.random_answer("vrb_clean", {"answer_type": "number"}, rng) for _ in range(200)}
    assert numbers <= {str(n) for n in range(11)} and len(numbers) > 5
    assert hooks.random_answer("vrb_clean", {"answer_type": "other"}, rng) in hooks.OTHER_ANSWERS


def test_groups() -> None:
    groups = {spec.group: list(spec.members) for spec in generate.group_specs()}
    assert len(groups["vrb"]) == 71 and len(set(groups["vrb"])) == 71
    assert groups["vrb_snow"] == ["vrb_clean"] + [f"vrb_snow_s{k}" for k in range(1, 6)]
    assert groups["vrb_s3"] == [f"vrb_{name}_s3" for name in VRB_PAPER_CORRUPTIONS]
    classes = [groups[f"vrb_{name}"] for name in generate.CLASSES]
    corrupted = sorted(task for members in classes for task in members if task != "vrb_clean")
    assert corrupted == sorted(
        task for task in groups["vrb"] if task != "vrb_clean"
    )  # each level exactly once
    assert len(groups["vrb_sample"]) == 16
    assert set(groups) & set(generate.TASKS) == set()


def test_sample_is_regenerated_identically() -> None:
    path = hooks.Path(hooks.__file__).parent / "sample" / make_sample.SAMPLE_FILE
    assert make_sample.sample_files()[make_sample.SAMPLE_FILE] == path.read_bytes()
    rows = make_sample.rows()
    assert len(rows) == 12 and all(len(row["answers"]) == 10 for row in rows)
    assert {row["answer_type"] for row in rows} == {"number", "other", "yes/no"}


def test_vrb_official_images_are_the_official_quality_95_jpeg_and_a_server_gets_that_file(
    sample_docs, monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64

    from PIL import JpegImagePlugin

    from lmms_eval_tasks.corruptions import engine
    from lmms_eval_tasks.models.openai_pipelined import EncodingCache, cached_chat_messages

    def sent(image) -> tuple[str, bytes]:
        """What `openai_pipelined` puts in the request for `image`: the data URL's head and decoded bytes."""
        content = [{"type": "image", "url": image}, {"type": "text", "text": "q"}]
        messages = cached_chat_messages(EncodingCache(4))(messages=[{"role": "user", "content": content}])
        head, data = messages.to_openai_messages()[0]["content"][0]["image_url"]["url"].split(",", 1)
        return head, base64.b64decode(data)

    doc = _doc(sample_docs, "vrb_sample_gaussian_noise_s3")
    clean = np.asarray(Image.open(io.BytesIO(doc["image"]["bytes"])).convert("RGB"))
    seed = hooks.image_seed(0, doc["image_id"])
    head, png = sent(hooks.doc_to_visual(doc)[0])  # default profile `vrb`: lossless PNG of the corruption
    assert head == "data:image/png;base64"
    assert np.array_equal(
        np.asarray(Image.open(io.BytesIO(png))), corrupt(clean, "gaussian_noise", 3, seed=seed)
    )

    monkeypatch.setenv(vrb_config.PROFILE_ENV, "vrb_official")
    image = hooks.doc_to_visual(doc)[0]
    official = corrupt(clean, "gaussian_noise", 3, seed=seed, profile="vrb_official")
    assert np.array_equal(
        np.asarray(image), official
    )  # in-process models: the pixels the official reader gets
    head, jpeg = sent(image)
    assert head == "data:image/jpeg;base64"
    assert jpeg == engine.saved_file(clean, "gaussian_noise", 3, seed=seed, profile="vrb_official")
    received = Image.open(io.BytesIO(jpeg))
    assert np.array_equal(np.asarray(received.convert("RGB")), official)  # a Pillow server decodes the same
    # cv2.imwrite's default: quality 95 (the IJG tables scaled as Pillow's quality=95 scales them), 4:2:0.
    before_saving = engine._corrupted(clean, "gaussian_noise", 3, seed, "vrb_official", None)
    reference = io.BytesIO()
    Image.fromarray(before_saving).save(reference, "JPEG", quality=95)
    expected = Image.open(reference)
    assert received.format == "JPEG" and received.quantization == expected.quantization
    assert (
        len(received.quantization) == 2 and received.quantization[0][0] == 2
    )  # luma DC step at q95: 16 x 0.1
    assert JpegImagePlugin.get_sampling(received) == JpegImagePlugin.get_sampling(expected) == 2  # 4:2:0
    assert received.size == (clean.shape[1], clean.shape[0])

    clean_doc = _doc(sample_docs, "vrb_sample_clean")  # the clean level is the dataset's image, as officially
    assert sent(hooks.doc_to_visual(clean_doc)[0])[0] == "data:image/png;base64"
