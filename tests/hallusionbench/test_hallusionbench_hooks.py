"""HallusionBench hooks: docs, records, judging through a local fake OpenAI server, reports, variants."""

from __future__ import annotations

import functools
import json
import os
import random
from argparse import Namespace
from pathlib import Path

import pytest
import yaml
from fake_openai import FakeOpenAIServer, always_fail

from lmms_eval_tasks.framework import hook_factory
from lmms_eval_tasks.reporting import schema as reports
from lmms_eval_tasks.tasks.hallusionbench import hooks, scoring, task_docs

TASK_DIR = Path(hooks.__file__).resolve().parent


@pytest.fixture
def judge_env(monkeypatch, tmp_path):
    """No endpoint configured, a private judge cache, quick retries."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "AZURE_", "LMMS_EVAL_TASKS_JUDGE")) or name in (
            "API_TYPE",
            "MODEL_VERSION",
        ):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_CACHE", str(tmp_path / "judge_cache.sqlite"))
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MAX_RETRIES", "1")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_BACKOFF_BASE", "0.01")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_BACKOFF_MAX", "0.02")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_SELF_TEST", "off")  # these tests count the run's own calls
    return monkeypatch


def use_server(monkeypatch, server: FakeOpenAIServer) -> None:
    monkeypatch.setenv("OPENAI_API_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


@functools.cache
def _sample_dataset():
    from datasets import load_dataset

    image_file = str(TASK_DIR / "sample" / "image.parquet")
    image_split = load_dataset("parquet", data_files=image_file, split="train")
    return hooks.process_docs_sample(image_split)


def sample_docs() -> list[dict]:
    """The sample task's 29 documents (fresh dicts each call)."""
    return list(_sample_dataset())


def answer(doc: dict) -> str:
    return "Yes." if doc["gt_answer"] == "1" else "No."


def records_for(task: str, docs: list[dict], predictions: list[str]) -> list[dict]:
    return [
        hooks.make_record(doc, [prediction], task) for doc, prediction in zip(docs, predictions, strict=True)
    ]


def run_aggregations(task: str, records: list[dict], output: Path) -> dict[str, float]:
    """Call every aggregation the task's YAML declares, as the host does (one list per metric key), and
    return those values plus every other metric of the task's report (null there when undefined)."""
    keys = hooks.metric_keys(task)
    per_key = {key: [] for key in keys}
    for record in records:
        returned = hook_factory.record_under_keys(record, keys)
        for key in keys:
            per_key[key].append(returned[key])
    args = Namespace(output_path=str(output))
    values = {key: getattr(task_docs, f"aggregate_{key}")(per_key[key], args=args) for key in keys}
    report = reports.read_report(reports.latest_report_path(output, task))
    return {**report["metrics"], **values}


def rule_reply_table(records: list[dict]) -> dict[str, str]:
    """What a sensible judge answers for each prompt: the rule verdict, in judge-like wording."""
    predictions = [record["prediction"] for record in records]
    table = {}
    wording = {"correct": "Correct.", "incorrect": "The prediction is incorrect.", "unclear": "unclear"}
    for request in scoring.correctness_requests(records, predictions):
        table[request.prompt] = wording[request.rule_reply]
    structure = scoring.build_structure(scoring.parse_questions(records))
    every_pair_member = [
        offset for offset, reference in enumerate(structure.reference_of) if reference is not None
    ]
    for request in scoring.consistency_requests(structure, predictions, every_pair_member):
        table[request.prompt] = {"same": "Same", "different": "different", None: "different"}[
            request.rule_reply
        ]
    return table


# ---- YAML and docs ---------------------------------------------------------------------------------------


def _yaml(path: Path) -> dict:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: "!function " + loader.construct_scalar(node))
    config = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
    if "include" in config:  # the host's rule: the included template first, the file's own keys on top
        return {**_yaml(path.parent / config.pop("include")), **config}
    return config


def test_every_task_yaml_is_wired_to_the_shared_hooks():
    tasks = {}
    for path in sorted((TASK_DIR / "yaml").glob("*.yaml")):
        config = _yaml(path)
        task = config["task"]
        tasks[task] = config
        package = "!function lmms_eval_tasks.tasks.hallusionbench"
        assert config["process_results"] == f"{package}.hooks.process_results"
        assert config["process_docs"] == f"{package}.task_docs.process_docs_{task}"
        assert config["generation_kwargs"]["max_new_tokens"] == 128
        names = [entry["metric"] for entry in config["metric_list"]]
        # the variant's keys, plus the screening count next to its count column; what process_results returns
        assert names == [*hooks.RESULT_KEYS[hooks.TASKS[task].variant], "screened_outputs"]
        assert names == list(hooks.HOOKS.metric_keys(task))
        for entry in config["metric_list"]:
            function = entry["aggregation"].removeprefix(f"{package}.task_docs.")
            assert callable(getattr(task_docs, function)), function
    assert set(tasks) == set(hooks.TASKS)
    assert tasks["hallusionbench"]["dataset_path"] == hooks.HF_DATASET


def test_official_tasks_add_the_no_image_questions_and_the_vlmevalkit_variant_does_not():
    from datasets import load_dataset

    image_file = str(TASK_DIR / "sample" / "image.parquet")
    image_split = load_dataset("parquet", data_files=image_file, split="train")
    assert len(hooks.prepare_docs(image_split, "hallusionbench_sample")) == 29
    assert len(hooks.prepare_docs(image_split, "hallusionbench_offline_sample")) == 29
    assert len(hooks.prepare_docs(image_split, "hallusionbench_vlmevalkit_sample")) == 24
    documents = hooks.HOOKS.process_docs_for("hallusionbench_vlmevalkit_sample")(image_split)
    assert set(documents["pack_task"]) == {"hallusionbench_vlmevalkit_sample"}


def test_sample_docs_hold_every_question_and_no_image_ones_have_no_visual():
    docs = sample_docs()
    assert len(docs) == 29
    no_image = [doc for doc in docs if doc["visual_input"] == "0"]
    assert len(no_image) == 5 and all(doc["image"] is None for doc in no_image)
    assert all(hooks.doc_to_visual(doc) == [] for doc in no_image)
    visuals = hooks.doc_to_visual(docs[0])
    assert len(visuals) == 1 and visuals[0].mode == "RGB"
    assert hooks.doc_to_text(docs[0]) == docs[0]["question"]
    assert (
        hooks.doc_to_text(docs[0], {"pre_prompt": "Q: ", "post_prompt": " A:"})
        == f"Q: {docs[0]['question']} A:"
    )
    # re-adding is refused: the split already has the no-image questions
    from datasets import Dataset

    assert len(hooks.process_docs_sample(Dataset.from_list(docs))) == 29


def test_random_answer_is_yes_or_no_and_seeded():
    doc = {"question": "Is it?"}
    first = [hooks.random_answer("hallusionbench", doc, random.Random(3)) for _ in range(5)]
    assert first == [hooks.random_answer("hallusionbench", doc, random.Random(3)) for _ in range(5)]
    answers = {hooks.random_answer("hallusionbench", doc, random.Random(seed)) for seed in range(40)}
    assert answers == {"Yes", "No"}


def test_process_results_logs_the_record_once():
    doc = {**sample_docs()[0], "pack_task": "hallusionbench_sample"}
    returned = hooks.process_results(doc, ["Yes"])
    assert list(returned) == [*hooks.OFFICIAL_RESULT_KEYS, "screened_outputs"]  # what the YAML lists
    assert returned["aAcc"]["prediction"] == "Yes" and returned["aAcc"]["task"] == "hallusionbench_sample"
    assert returned["fAcc"].record is returned["aAcc"]
    # the host logs non-JSON values with str() (lmms_eval.utils.handle_non_serializable; see the e2e test)
    logged = json.loads(json.dumps(returned, default=str))
    assert logged["qAcc"] == "see 'aAcc'" and "image" not in logged["aAcc"]


# ---- scoring through the aggregations ----------------------------------------------------------------------


def test_llm_judge_three_repeats_scored_once_with_reports(judge_env, tmp_path):
    docs = sample_docs()
    predictions = [answer(doc) for doc in docs]
    predictions[1] = "Yes, they are."  # VD illusion figure 1 (gt no): wrong
    predictions[25] = "I cannot tell without the image."  # a VS no-image question: unclear -> counts as right
    records = records_for("hallusionbench_sample", docs, predictions)
    table = rule_reply_table(records)
    with FakeOpenAIServer(lambda prompt: table[prompt]) as server:
        use_server(judge_env, server)
        values = run_aggregations("hallusionbench_sample", records, tmp_path)
        calls = server.call_count()
        # a second pass over the same records reuses the computed metrics: no new judge call
        again = run_aggregations("hallusionbench_sample", records, tmp_path)
        assert server.call_count() == calls
    assert again == values
    # 29 correctness prompts + 1 consistency prompt, 3 repeats each: only the illusion figure-1 answer is
    # wrong with its figure-0 answer right, the one case here where the decision tree reads the flag;
    # identical prompts are sent once
    folder = reports.latest_report_path(tmp_path, "hallusionbench_sample").parent
    report = reports.read_report(folder / "hallusionbench_sample_report.json")
    usage = report["details"]["judge_usage"]
    assert usage["replies"] == (29 + 1) * 3 and 0 < usage["calls"] <= usage["replies"]
    assert report["provenance"]["judge"]["repeats"] == 3 and report["provenance"]["judge"]["kind"] == "openai"
    assert values["judge_is_rule_based"] == 0 and values["unjudged_verdicts"] == 0
    # the LLM replied what the rule judge would: the numbers equal rule-judged scoring
    rule = scoring.score([dict(record) for record in records], judge="rule")[0]
    for key in ("aAcc", "fAcc", "qAcc", "LH", "VI", "Mixed", "pct_diff", "fp_ratio", "VS_chart_qAcc"):
        assert values[key] == pytest.approx(rule[key]), key
    assert values["aAcc"] == pytest.approx(100 * 28 / 29)  # only the illusion figure-1 answer is wrong
    # the pack's files: report, per-sample verdicts, the leaderboard rows
    samples = [
        json.loads(line) for line in (folder / "hallusionbench_sample_samples.jsonl").read_text().splitlines()
    ]
    # figure 0 right, figure 1 wrong with the same answer ("Yes, they are." vs "Yes.") -> Mixed
    assert samples[1]["judge_verdicts"] == ["incorrect"] * 3 and samples[1]["consistency_same"] == [True] * 3
    assert samples[1]["diagnosis"] == ["Mixed"] * 3
    leaderboard = json.loads((folder / "hallusionbench_sample" / "HallusionBench_result.json").read_text())
    assert len(leaderboard) == 29
    assert list(leaderboard[0]) == [*scoring.OFFICIAL_FIELDS, "model_prediction"]
    assert leaderboard[25]["model_prediction"] == "I cannot tell without the image."
    assert leaderboard[25]["filename"] is None
    # records were annotated in place (what --log_samples shows in one process)
    assert records[1]["judge_verdicts"] == ["incorrect"] * 3 and records[1]["correct"] == [0, 0, 0]


def test_judge_failures_are_unjudged_never_wrong(judge_env, tmp_path):
    docs = sample_docs()
    predictions = [answer(doc) for doc in docs]
    predictions[1] = "Yes."  # wrong, and its judge request will fail
    records = records_for("hallusionbench_sample", docs, predictions)
    table = rule_reply_table(records)
    failing_prompt = scoring.correctness_requests([records[1]], [predictions[1]])[0].prompt
    with FakeOpenAIServer(
        lambda prompt: table[prompt], faults=always_fail({failing_prompt}, "bad_request")
    ) as server:
        use_server(judge_env, server)
        values = run_aggregations("hallusionbench_sample", records, tmp_path)
    assert values["unjudged_verdicts"] == 3  # one question, three repeats
    # the failed question is left out: 28 judged, all right (it would have been wrong)
    assert values["aAcc"] == pytest.approx(100.0)
    report = reports.read_report(reports.latest_report_path(tmp_path, "hallusionbench_sample"))
    assert report["details"]["counts"]["unjudged_questions"] == 1
    assert [entry["record"] for entry in report["details"]["unjudged"]] == [1, 1, 1]
    assert all(entry["kind"] == "correctness" and entry["error"] for entry in report["details"]["unjudged"])
    assert records[1]["judge_verdicts"] == [None, None, None] and records[1]["correct"] == [None, None, None]


def test_offline_task_uses_the_rule_judge_even_with_an_endpoint(judge_env, tmp_path):
    docs = sample_docs()
    records = records_for("hallusionbench_offline", docs, [answer(doc) for doc in docs])
    with FakeOpenAIServer(lambda prompt: "correct") as server:
        use_server(judge_env, server)
        values = run_aggregations("hallusionbench_offline", records, tmp_path)
        assert server.call_count() == 0
    assert values["judge_is_rule_based"] == 1
    assert values["aAcc"] == values["fAcc"] == values["qAcc"] == values["overall"] == pytest.approx(100.0)
    assert values["LH"] != values["LH"]  # NaN: no wrong answer, nothing to diagnose


def test_vlmevalkit_variant_sends_only_unclear_answers_to_the_llm(judge_env, tmp_path):
    docs = [doc for doc in sample_docs() if doc["visual_input"] != "0"]
    assert len(docs) == 24
    predictions = [answer(doc) for doc in docs]
    position = {
        (d["category"], d["subcategory"], d["figure_id"], d["question_id"]): i for i, d in enumerate(docs)
    }
    a = position[("VD", "illusion", "0", "0")]  # gt yes; LLM maps it to Yes -> right
    b = position[("VD", "illusion", "1", "0")]  # gt no; LLM says Unknown -> wrong
    c = position[("VS", "chart", "1", "0")]  # gt yes; LLM maps it to No -> wrong
    predictions[a], predictions[b], predictions[c] = "It is hard to say.", "Maybe.", "Yes and no."
    replies = {"It is hard to say.": "Yes", "Maybe.": "Unknown", "Yes and no.": "No"}
    records = records_for("hallusionbench_vlmevalkit_sample", docs, predictions)

    def reply(prompt: str) -> str:
        assert prompt.startswith("You are an AI assistant who will help me to match an answer")
        return next(value for key, value in replies.items() if f"\nAnswer: {key}\n" in prompt)

    with FakeOpenAIServer(reply) as server:
        use_server(judge_env, server)
        values = run_aggregations("hallusionbench_vlmevalkit_sample", records, tmp_path)
        assert server.call_count() == 3  # only the three answers without an explicit yes/no
    assert values["llm_matched"] == 3
    assert values["aAcc"] == pytest.approx(100 * 22 / 24)
    # 11 pairs, wrong: VD illusion q0 (b) and VS chart q0 (c) -> 9/11
    assert values["qAcc"] == pytest.approx(100 * 9 / 11)
    # 19 figures (VD 11, VS 8), wrong: VD illusion figure 1 and VS chart figure 1 -> 17/19
    assert values["fAcc"] == pytest.approx(100 * 17 / 19)
    assert values["overall"] == pytest.approx((100 * 22 / 24 + 100 * 9 / 11 + 100 * 17 / 19) / 3)
    assert records[a]["extracted_answer"] == "yes" and records[b]["extracted_answer"] is None


def test_rule_judge_replies():
    assert scoring.correctness_rule_reply("Yes, it is.", "1") == "correct"
    assert scoring.correctness_rule_reply("No.", "1") == "incorrect"
    assert scoring.correctness_rule_reply("I don't know", "0") == "unclear"
    assert scoring.consistency_rule_reply("Yes.", "yes") == "same"
    assert scoring.consistency_rule_reply("No.", "Yes") == "different"
    assert scoring.consistency_rule_reply("Perhaps", "Yes") is None


def test_score_records_with_the_rule_judge_on_all_yes_answers(judge_env):
    docs = sample_docs()
    rows = records_for("hallusionbench_sample", docs, ["Yes"] * len(docs))
    for row in rows:
        row.pop("task")
    result = scoring.score(rows, judge="rule")[0]
    # gt "yes" in the sample: VD 8 of 14, VS 9 of 15 -> "Yes" to everything is right on 17 of 29
    assert sum(doc["gt_answer"] == "1" for doc in docs) == 17
    assert result["aAcc"] == pytest.approx(100 * 17 / 29)
    assert result["VD_aAcc"] == pytest.approx(100 * 8 / 14) and result["VS_aAcc"] == pytest.approx(
        100 * 9 / 15
    )
    # every wrong answer is a "yes" to a "no" question: all wrong ones have gt "0" -> FP ratio 1
    assert result["fp_ratio"] == pytest.approx(1.0)
    # pct_diff = mean([c == gt]) - mean(gt), [c == gt] being "answered yes": right on a "yes" question or
    # wrong on a "no" question -> all 29 -> 29/29 - 17/29 = 12/29 (the all-yes bias)
    assert result["pct_diff"] == pytest.approx(12 / 29)
    assert result["judge"] == "rule" and result["repeats"] == 1


def test_non_image_split_with_an_empty_image_column_is_added_too():
    """The HF non_image split may carry an all-null image column; both layouts concatenate the same way."""
    from datasets import Dataset, Features, Image, Value

    docs = sample_docs()
    image_split = _sample_dataset().filter(lambda doc: doc["visual_input"] != "0")
    fields = list(scoring.OFFICIAL_FIELDS)
    features = Features({**{name: Value("string") for name in fields}, "image": Image()})
    no_image_rows = [
        {name: doc[name] for name in [*fields, "image"]} for doc in docs if doc["visual_input"] == "0"
    ]
    combined = hooks.concatenate_non_image(image_split, Dataset.from_list(no_image_rows, features=features))
    assert len(combined) == 29 and combined.features == image_split.features
    assert [doc["question"] for doc in combined] == [doc["question"] for doc in docs]
    assert sum(doc["image"] is None for doc in combined) == 5


def test_unreadable_or_missing_image_names_the_document_and_field(monkeypatch):
    """A damaged image that fails on decoding inside doc_to_visual (PIL opens files lazily), or an image
    question without its image, raises an error naming the question and the 'image' field.

    Importing lmms_eval.api.task sets PIL's global ImageFile.LOAD_TRUNCATED_IMAGES = True (the host pads
    truncated images instead of failing); the decode failure is exercised with PIL's own default.
    """
    import io

    import numpy as np
    from PIL import Image as PILImage
    from PIL import ImageFile

    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", False)

    from lmms_eval_tasks.framework.input_checks import RecordError

    doc = dict(sample_docs()[1])  # VD illusion, an image question
    label = "_".join(doc[name] for name in ("category", "subcategory", "set_id", "figure_id", "question_id"))
    buffer = io.BytesIO()
    noise = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    PILImage.fromarray(noise).save(buffer, "PNG")
    truncated = buffer.getvalue()[: len(buffer.getvalue()) // 2]  # valid header, half the pixel data
    doc["image"] = PILImage.open(io.BytesIO(truncated))  # opens fine; the pixels are read on convert
    with pytest.raises(RecordError) as caught:
        hooks.doc_to_visual(doc)
    assert caught.value.field == "image" and caught.value.record_index == label
    assert "truncated" in str(caught.value)
    doc["image"] = None  # an image question without its image must not silently go to the model text-only
    with pytest.raises(RecordError) as caught:
        hooks.doc_to_visual(doc)
    assert caught.value.field == "image" and caught.value.record_index == label


def test_judge_replies_without_a_verdict_word_are_counted_listed_and_optionally_unjudged(judge_env, tmp_path):
    docs = sample_docs()
    predictions = [answer(doc) for doc in docs]
    predictions[1] = "Yes, they are."  # VD illusion figure 1 (gt no): wrong; its consistency flag is read
    records = records_for("hallusionbench_sample", docs, predictions)
    table = rule_reply_table(records)
    correctness = {r.prompt: i for i, r in enumerate(scoring.correctness_requests(records, predictions))}
    for prompt, index in correctness.items():
        if index in (2, 16, 26):  # VD math fig 0, VS chart fig 2 q 0, VS table no-image (unique prompts)
            table[prompt] = "maybe"
    structure = scoring.build_structure(scoring.parse_questions(records))
    (consistency,) = scoring.consistency_requests(structure, predictions, [1])  # 1 vs its figure-0 answer
    table[consistency.prompt] = "maybe"
    with FakeOpenAIServer(lambda prompt: table[prompt]) as server:
        use_server(judge_env, server)
        official = scoring.evaluate(records, judge="openai", repeats=1)
        unjudged = scoring.evaluate(records, judge="openai", repeats=1, no_verdict="unjudged")
        values = run_aggregations("hallusionbench_sample", records, tmp_path)  # the hook run, official
    # official: "maybe" -> unclear: wrong for 2 and 16, right for 26 (a VS no-image question); 1 is wrong
    # -> 29 - 3 = 26 correct of 29 = 89.655%
    assert official.metrics["aAcc"] == pytest.approx(100 * 26 / 29)
    assert official.counts["no_verdict"] == 4 and official.counts["unjudged_verdicts"] == 0
    assert official.counts["no_verdict_correctness"] == 3 and official.counts["no_verdict_consistency"] == 1
    assert official.sames[1] == [False]  # official consistency parse: no "same" -> different
    # unjudged: 2, 16, 26 leave the denominator; 1 stays wrong -> 25 of 26 = 96.154%
    assert unjudged.metrics["aAcc"] == pytest.approx(100 * 25 / 26)
    assert unjudged.counts["no_verdict"] == 4 and unjudged.counts["unjudged_verdicts"] == 3
    assert unjudged.sames[1] == [None]
    listed = {(entry["batch"], entry["reply"]) for entry in unjudged.no_verdict_replies}
    assert listed == {("correctness", "maybe"), ("consistency", "maybe")}
    assert len(unjudged.no_verdict_replies) == 4
    # the hook run (3 repeats, the cache answers the same): counted per verdict, listed, warned about
    report = reports.read_report(reports.latest_report_path(tmp_path, "hallusionbench_sample"))
    assert values["no_verdict"] == 4 * 3
    assert values["aAcc"] == pytest.approx(100 * 26 / 29)
    assert len(report["details"]["no_verdict_replies"]) == 12
    assert report["details"]["no_verdict"] == "official"
    assert any("12 judge replies without a verdict word" in warning for warning in report["warnings"])
    assert report["provenance"]["settings"]["no_verdict"] == "official"


def test_hook_run_with_no_verdict_unjudged_from_the_environment(judge_env, tmp_path):
    docs = sample_docs()
    records = records_for("hallusionbench_sample", docs, [answer(doc) for doc in docs])
    table = rule_reply_table(records)
    prompts = [r.prompt for r in scoring.correctness_requests(records, [r["prediction"] for r in records])]
    table[prompts[2]] = "I am not sure."  # no verdict word
    judge_env.setenv("LMMS_EVAL_TASKS_HALLUSIONBENCH_NO_VERDICT", "unjudged")
    judge_env.setenv("LMMS_EVAL_TASKS_JUDGE_REPEATS", "1")
    with FakeOpenAIServer(lambda prompt: table[prompt]) as server:
        use_server(judge_env, server)
        values = run_aggregations("hallusionbench_sample", records, tmp_path)
    # 28 judged, all right: 28 / 28 = 100%; the item is unjudged, not wrong
    assert values["aAcc"] == pytest.approx(100.0)
    assert values["no_verdict"] == 1 and values["unjudged_verdicts"] == 1
    judge_env.setenv("LMMS_EVAL_TASKS_HALLUSIONBENCH_NO_VERDICT", "sometimes")
    with pytest.raises(ValueError, match="LMMS_EVAL_TASKS_HALLUSIONBENCH_NO_VERDICT='sometimes'"):
        hooks.no_verdict_option()


def test_judge_model_other_than_the_papers_gpt4_is_a_deviation_in_the_report(judge_env, tmp_path):
    docs = sample_docs()
    records = records_for("hallusionbench_sample", docs, [answer(doc) for doc in docs])
    table = rule_reply_table(records)
    deviations = {}
    with FakeOpenAIServer(lambda prompt: table[prompt]) as server:
        use_server(judge_env, server)
        for model in ("gpt-4o-2024-11-20", "gpt-4-turbo", "gpt-4", "gpt-4-0613"):
            judge_env.setenv("LMMS_EVAL_TASKS_JUDGE_MODEL", model)
            fresh = [{k: v for k, v in r.items() if not k.startswith("judge_")} for r in records]
            output = tmp_path / model
            run_aggregations("hallusionbench_sample", fresh, output)
            report = reports.read_report(reports.latest_report_path(output, "hallusionbench_sample"))
            assert report["provenance"]["judge"]["model"] == model
            deviations[model] = [line for line in report["provenance"]["deviations"] if "judge" in line]
    # another model (GPT-4 Turbo too) is named against the paper's gpt-4; gpt-4 and its dated snapshot not
    for model in ("gpt-4o-2024-11-20", "gpt-4-turbo"):
        assert len(deviations[model]) == 1, deviations[model]
        assert f"judge model {model!r} instead of the paper's 'gpt-4'" in deviations[model][0]
    assert deviations["gpt-4"] == [] and deviations["gpt-4-0613"] == []
