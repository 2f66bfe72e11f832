"""The tiny random LLaVA: deterministic, idempotent build, and the host's real llava_hf wrapper on it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lmms_eval_tasks.models.tiny_llava import MANIFEST_NAME, build_tiny_llava, is_complete_build

MODEL_ARGS = "pretrained={},device=cpu,device_map=cpu"


def _hashes(folder: Path) -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.iterdir())
        if path.is_file() and path.name != MANIFEST_NAME  # the manifest records its own folder's path
    }


def test_two_builds_are_byte_identical_and_small(tiny_llava_dir: Path, tmp_path: Path) -> None:
    second = build_tiny_llava(tmp_path / "again", seed=0)
    assert _hashes(second) == _hashes(tiny_llava_dir)
    assert {"model.safetensors", "config.json", "tokenizer.json", "processor_config.json"} <= set(
        _hashes(second)
    )
    total_bytes = sum(path.stat().st_size for path in second.iterdir())
    assert total_bytes < 1_000_000, total_bytes


def test_build_is_idempotent_and_keyed_by_seed(tmp_path: Path) -> None:
    folder = build_tiny_llava(tmp_path / "model", seed=1)
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    assert manifest["seed"] == 1 and manifest["recipe_version"] >= 1
    modified = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}

    assert build_tiny_llava(folder, seed=1) == folder
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == modified  # nothing rewritten

    weights_seed_1 = _hashes(folder)["model.safetensors"]
    build_tiny_llava(folder, seed=2)  # another seed replaces the build
    assert json.loads((folder / MANIFEST_NAME).read_text())["seed"] == 2
    assert _hashes(folder)["model.safetensors"] != weights_seed_1
    assert not is_complete_build(folder, seed=1)


def test_damaged_build_is_rebuilt(tmp_path: Path) -> None:
    folder = build_tiny_llava(tmp_path / "model", seed=0)
    expected = _hashes(folder)
    (folder / "model.safetensors").write_bytes(b"truncated")
    assert not is_complete_build(folder, seed=0)
    build_tiny_llava(folder, seed=0)
    assert _hashes(folder) == expected


def test_refuses_to_overwrite_a_foreign_folder(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="tiny_llava_manifest.json"):
        build_tiny_llava(folder)
    assert (folder / "notes.txt").read_text() == "keep me"


def test_module_cli_builds_and_prints_the_folder(tiny_llava_dir: Path, tmp_path: Path) -> None:
    from lmms_eval_tasks.cli import main

    target = tmp_path / "cli"
    assert main(["build-tiny-llava", "--output", str(target), "--seed", "0"]) == 0
    assert _hashes(target) == _hashes(tiny_llava_dir)


def test_host_classes_load_it(tiny_llava_dir: Path) -> None:
    from transformers import AutoProcessor, LlavaForConditionalGeneration

    model = LlavaForConditionalGeneration.from_pretrained(tiny_llava_dir)
    processor = AutoProcessor.from_pretrained(tiny_llava_dir)
    image_token_id = processor.tokenizer.convert_tokens_to_ids("<image>")
    assert model.config.image_token_id == image_token_id
    assert processor.tokenizer.eos_token == "</s>" and processor.chat_template


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[None]:
    """Torch's thread pool crawls when other processes share the 2 cores; one thread is plenty here."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def llava_hf(tiny_llava_dir: Path) -> Iterator[Any]:
    """The host's chat llava_hf wrapper (what ``--model llava_hf`` resolves to) on the tiny model."""
    from lmms_eval.models import get_model

    model_class = get_model("llava_hf")
    assert model_class.__module__ == "lmms_eval.models.chat.llava_hf"
    with _one_torch_thread():
        yield model_class.create_from_arg_string(MODEL_ARGS.format(tiny_llava_dir))


def _square_doc():
    from PIL import Image

    return {
        "question": "Is the square red? Please answer yes or no.",
        "image": Image.new("RGB", (48, 36), "red"),
    }


def test_llava_hf_generate_until_in_process(llava_hf) -> None:
    from lmms_eval.api.instance import Instance

    doc = _square_doc()
    llava_hf.task_dict = {"tiny": {"test": {0: doc}}}

    def doc_to_messages(document):
        content = [
            {"type": "image", "url": document["image"]},
            {"type": "text", "text": document["question"]},
        ]
        return [{"role": "user", "content": content}]

    request = Instance(
        "generate_until",
        ("", doc_to_messages, {"max_new_tokens": 32}, 0, "tiny", "test"),
        idx=0,
        metadata={"task": "tiny", "doc_id": 0, "repeats": 1},
    )
    first = llava_hf.generate_until([request])[0]
    again = llava_hf.generate_until([request])[0]
    # The wrapper logs and swallows generation errors, returning "" with no token counts: rule that out.
    assert first.token_counts is not None and 1 <= first.token_counts.output_tokens <= 32
    assert first.text and first.text == again.text  # greedy decoding of fixed weights


def _chat_request(question: str, with_image: bool, index: int = 0) -> Any:
    from lmms_eval.api.instance import Instance

    def doc_to_messages(document):
        content = [{"type": "image", "url": document["image"]}] if with_image else []
        return [{"role": "user", "content": [*content, {"type": "text", "text": question}]}]

    return Instance(
        "generate_until",
        ("", doc_to_messages, {"max_new_tokens": 8}, 0, "tiny", "test"),
        idx=index,
        metadata={"task": "tiny", "doc_id": 0, "repeats": 1},
    )


def test_text_only_requests_are_answered_by_chat_llava_hf_also_concurrently(
    llava_hf, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host passes images=[] for a request without image and answers "" (the error is swallowed); with
    the pack's fix it answers. Calls from several threads at once on the one wrapper give the answers of
    sequential calls: the fix swaps nothing on the shared wrapper."""
    from concurrent.futures import ThreadPoolExecutor

    from lmms_eval.models.chat.llava_hf import LlavaHf

    from lmms_eval_tasks.host import patches as host
    from lmms_eval_tasks.host.patch_kit import unwrapped

    monkeypatch.setattr(LlavaHf, "generate_until", unwrapped(LlavaHf.generate_until))
    llava_hf.task_dict = {"tiny": {"test": {0: _square_doc()}}}
    text_only = _chat_request("Is the sky blue? Answer yes or no.", with_image=False)
    with _one_torch_thread():
        (unfixed,) = llava_hf.generate_until([text_only])
        assert unfixed.text == "" and unfixed.token_counts is None  # the host bug, swallowed
        assert host.apply_patch("llava_hf_text_only").state == "applied"
        processor = llava_hf._image_processor
        requests = [
            _chat_request("Is the sky blue?", with_image=index % 2 == 0, index=index) for index in range(6)
        ]
        sequential = [llava_hf.generate_until([request])[0].text for request in requests]
        with ThreadPoolExecutor(max_workers=3) as pool:
            concurrent = [
                result[0].text for result in pool.map(lambda r: llava_hf.generate_until([r]), requests)
            ]
    assert all(sequential) and concurrent == sequential
    assert llava_hf._image_processor is processor  # nothing swapped on the shared wrapper


def test_simple_llava_hf_refuses_text_only_requests_it_would_answer_with_the_previous_inputs(
    tiny_llava_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--force_simple llava_hf builds no inputs for a request without an image: after an image request it
    answers with that request's inputs (the same answer), silently. The pack refuses such a batch, naming
    the way out, before generating anything."""
    from lmms_eval.api.instance import Instance
    from lmms_eval.models.simple.llava_hf import LlavaHf

    from lmms_eval_tasks.host import patches as host
    from lmms_eval_tasks.host.host_bug_fixes import TextOnlyRequestRefused
    from lmms_eval_tasks.host.patch_kit import unwrapped

    monkeypatch.setattr(LlavaHf, "generate_until", unwrapped(LlavaHf.__dict__["generate_until"]))
    with _one_torch_thread():
        model = LlavaHf.create_from_arg_string(MODEL_ARGS.format(tiny_llava_dir))
    docs = {0: _square_doc(), 1: {"question": "What is two plus two?", "image": None}}
    model.task_dict = {"tiny": {"test": docs}}

    def request(doc_id: int, with_image: bool) -> Any:
        visual = (lambda document: [document["image"]]) if with_image else (lambda document: [])
        arguments = (docs[doc_id]["question"], {"max_new_tokens": 8}, visual, doc_id, "tiny", "test")
        return Instance(
            "generate_until", arguments, idx=doc_id, metadata={"task": "tiny", "doc_id": doc_id, "repeats": 1}
        )

    batch = [request(0, True), request(1, False)]
    with _one_torch_thread():
        image_answer, text_answer = model.generate_until(batch)
    assert image_answer and text_answer == image_answer  # the host bug: the previous request's inputs
    assert host.apply_patch("llava_hf_simple_text_only").state == "applied"
    with pytest.raises(TextOnlyRequestRefused, match="run without --force_simple"):
        model.generate_until(batch)
    with _one_torch_thread():
        assert model.generate_until(batch[:1]) == [image_answer]  # image requests as before


def test_llava_loglikelihood_in_process(fixed_llava_hf, tiny_llava_dir: Path) -> None:
    """Loglikelihood on transformers 5, for the host's llava_hf (with the pack's fix) and the pack's LLaVA.

    The host's own llava_hf loglikelihood tokenizes the context, which holds ``<image>``, without images;
    transformers 5's processors reject that. Both models here pass the image with its image tokens.
    """
    from lmms_eval.api.instance import Instance
    from lmms_eval.models import get_model

    doc = _square_doc()
    request = Instance(
        "loglikelihood",
        (doc["question"], "Yes", lambda document: [document["image"]], 0, "tiny", "test"),
        idx=0,
        metadata={"task": "tiny", "doc_id": 0, "repeats": 1},
    )
    with _one_torch_thread():
        pack_llava = get_model("llava_transformers").create_from_arg_string(f"pretrained={tiny_llava_dir}")
    for model in (fixed_llava_hf, pack_llava):
        model.task_dict = {"tiny": {"test": {0: doc}}}
        with _one_torch_thread():
            [(value, is_greedy)] = model.loglikelihood([request])
        assert math.isfinite(value) and value > 0 and isinstance(is_greedy, bool), type(model)


def test_simple_evaluate_runs_llava_hf_on_the_tiny_model(
    tiny_llava_dir: Path, tiny_models_task_dir: Path
) -> None:
    """The full harness path (task YAML, parquet images, chat llava_hf, scoring) in process."""
    from lmms_eval.evaluator import simple_evaluate
    from lmms_eval.tasks import TaskManager

    task_manager = TaskManager(include_path=str(tiny_models_task_dir), include_defaults=False)
    with _one_torch_thread():
        output = simple_evaluate(
            model="llava_hf",
            model_args=MODEL_ARGS.format(tiny_llava_dir),
            tasks=["tiny_models_yesno"],
            task_manager=task_manager,
            log_samples=True,
            bootstrap_iters=0,
        )
    samples = output["samples"]["tiny_models_yesno"]
    assert len(samples) == 8
    for sample in samples:
        # The wrapper logs and swallows generation errors (answer "", no token counts): rule that out.
        [answer] = sample["filtered_resps"]
        [counts] = sample["token_counts"]
        assert isinstance(answer, str) and answer and counts and 1 <= counts["output_tokens"] <= 8, sample
    # exact_match recomputed by hand from the logged answers: the harness scored what the model said.
    hits = sum(sample["filtered_resps"][0].strip() == sample["target"] for sample in samples)
    assert output["results"]["tiny_models_yesno"]["exact_match,none"] == pytest.approx(hits / 8)


@pytest.fixture
def loglikelihood_fixes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pack's host fixes for loglikelihood (evaluator + llava_hf), undone after the test."""
    import lmms_eval.evaluator as evaluator
    from lmms_eval.models.simple.llava_hf import LlavaHf

    from lmms_eval_tasks.host import patches as host

    monkeypatch.setattr(LlavaHf, "loglikelihood", LlavaHf.loglikelihood)
    monkeypatch.setattr(evaluator, "unwrap_generation_output", evaluator.unwrap_generation_output)
    host.apply_patch("llava_hf_loglikelihood")
    host.apply_patch("loglikelihood_result")


@pytest.fixture
def fixed_llava_hf(llava_hf, loglikelihood_fixes: None):
    """The chat wrapper with the fixes installed."""
    return llava_hf


def test_fixed_loglikelihood_is_the_mean_continuation_loss(fixed_llava_hf) -> None:
    import torch
    from lmms_eval.api.instance import Instance

    doc = _square_doc()
    fixed_llava_hf.task_dict = {"tiny": {"test": {0: doc}}}
    cases = {"image": lambda document: [document["image"]], "text only": lambda document: []}
    for label, doc_to_visual in cases.items():
        requests = [
            Instance(
                "loglikelihood",
                (doc["question"], continuation, doc_to_visual, 0, "tiny", "test"),
                idx=index,
                metadata={"task": "tiny", "doc_id": 0, "repeats": 1},
            )
            for index, continuation in enumerate(["Yes", "No"])
        ]
        results = fixed_llava_hf.loglikelihood(requests)
        for continuation, (value, is_greedy) in zip(["Yes", "No"], results, strict=True):
            # Recompute by hand: token log-probs of everything after the templated prompt.
            processor, model = fixed_llava_hf._image_processor, fixed_llava_hf.model
            images = doc_to_visual(doc) or None
            user = ("<image>" if images else "") + "\n" + doc["question"]  # the host's prompt, as it is
            prompt = processor.tokenizer.apply_chat_template(
                [{"role": "user", "content": user}], tokenize=False, add_generation_prompt=True
            )
            full = processor.tokenizer.apply_chat_template(
                [{"role": "user", "content": user}, {"role": "assistant", "content": continuation}],
                tokenize=False,
            )
            assert full.startswith(prompt) and full[len(prompt) :] == f" {continuation}</s>\n"
            inputs = processor(text=[full], images=images, return_tensors="pt")
            start = processor(text=[prompt], images=images, return_tensors="pt")["input_ids"].shape[1]
            with torch.inference_mode():
                logits = model(**inputs).logits[0]
            targets = inputs["input_ids"][0, start:]
            log_probs = torch.log_softmax(logits[start - 1 : -1].float(), dim=-1)
            token_log_probs = log_probs.gather(1, targets[:, None])[:, 0]
            assert len(targets) >= 3, label  # " Yes", "</s>", "\n" at least
            assert value == pytest.approx(float(-token_log_probs.mean()), rel=1e-5), label
            assert is_greedy == bool((log_probs.argmax(-1) == targets).all()), label


def test_multiple_choice_runs_on_simple_llava_hf_with_the_fixes(
    loglikelihood_fixes: None, tiny_llava_dir: Path, tiny_models_task_dir: Path
) -> None:
    """``--model llava_hf --force_simple``: the chat class refuses multiple_choice tasks (host design)."""
    from lmms_eval.evaluator import simple_evaluate
    from lmms_eval.tasks import TaskManager

    task_manager = TaskManager(include_path=str(tiny_models_task_dir), include_defaults=False)
    with _one_torch_thread():
        output = simple_evaluate(
            model="llava_hf",
            model_args=MODEL_ARGS.format(tiny_llava_dir),
            force_simple=True,
            tasks=["tiny_models_choice", "tiny_models_yesno"],
            task_manager=task_manager,
            log_samples=True,
            bootstrap_iters=0,
        )
    samples = output["samples"]["tiny_models_choice"]
    correct = 0
    for sample in samples:
        scores = [value for value, _ in sample["filtered_resps"]]
        assert len(scores) == 2 and all(math.isfinite(value) and value > 0 for value in scores)
        correct += ["Yes", "No"][scores.index(min(scores))] == sample["target"]  # host: argmin of the loss
    assert output["results"]["tiny_models_choice"]["acc,none"] == pytest.approx(correct / len(samples))
    # the simple class's generate_until (string prompt with "<image>" prepended) works on the model too
    answers = [sample["filtered_resps"][0] for sample in output["samples"]["tiny_models_yesno"]]
    assert len(answers) == 8 and all(isinstance(answer, str) and answer for answer in answers)


def test_host_patches_for_a_run_patch_only_what_its_models_need(monkeypatch: pytest.MonkeyPatch) -> None:
    import lmms_eval.evaluator as evaluator
    from lmms_eval.models.simple.llava_hf import LlavaHf

    from lmms_eval_tasks.host import patches as host

    def install_host_fixes(models: list[str]) -> None:
        # the bug fixes a run's models need (the launcher installs the task index and failure recorder)
        integration = ("pack_task_index", "failure_recorder")
        names = [name for name in host.patches_for(models) if name not in integration]
        host.apply_patches(models, names)

    monkeypatch.setattr(
        LlavaHf, "loglikelihood", getattr(LlavaHf.loglikelihood, "__wrapped__", LlavaHf.loglikelihood)
    )
    monkeypatch.setattr(LlavaHf, "generate_until", LlavaHf.__dict__["generate_until"])
    monkeypatch.setattr(evaluator, "unwrap_generation_output", evaluator.unwrap_generation_output)
    host_method = LlavaHf.loglikelihood
    install_host_fixes(["random_guess"])
    assert evaluator.unwrap_generation_output((-0.5, False))[0] == (-0.5, False)
    assert LlavaHf.loglikelihood is host_method
    install_host_fixes(["llava_hf"])
    patched = LlavaHf.loglikelihood
    assert patched is not host_method and patched.__wrapped__ is host_method
    install_host_fixes(["llava_hf"])  # idempotent
    assert LlavaHf.loglikelihood is patched
