"""ConTextual tasks: data files, sample, hooks (records, images, aggregation, reports, submission files)."""

from __future__ import annotations

import csv
import functools
import json
from argparse import Namespace
from pathlib import Path

import pytest

from lmms_eval_tasks.framework import hook_factory
from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.reporting import schema as reports
from lmms_eval_tasks.tasks.contextual import config, generate, hooks, make_sample, prepare, task_docs

TASK_DIR = Path(hooks.__file__).resolve().parent
DATA = Path(__file__).resolve().parents[1] / "data" / "contextual"


@functools.cache
def _dataset(task: str):
    from datasets import load_dataset

    settings = generate._fields(task)
    split = settings["test_split"]
    files = {split: str(TASK_DIR / settings["dataset_kwargs"]["data_files"][split])}
    return load_dataset("parquet", data_files=files, split=split)


def docs_for(task: str) -> list[dict]:
    from lmms_eval_tasks.tasks.contextual import task_docs

    return list(getattr(task_docs, f"process_docs_{task}")(_dataset(task)))


@pytest.fixture
def judge_env(monkeypatch, tmp_path):
    from fake_openai import isolate_judge_env

    isolate_judge_env(monkeypatch, tmp_path)
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_CACHE", str(tmp_path / "judge_cache.sqlite"))
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MAX_RETRIES", "2")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_BACKOFF_BASE", "0.01")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_BACKOFF_MAX", "0.02")
    names = (config.PROTOCOL_ENV, config.IMAGE_JUDGE_ENV, config.SKIP_MISSING_ENV, prepare.DATA_ENV)
    for name in (*names, "LMMS_EVAL_TASKS_DATA"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def records_for(task: str, docs: list[dict], answers: list[str]) -> list[dict]:
    """What the host's process_results gives per document (the full record under the first key)."""
    first = hooks.metric_keys(task)[0]
    return [hooks.process_results(doc, [answer])[first] for doc, answer in zip(docs, answers, strict=True)]


def run_aggregations(task: str, records: list[dict], output: Path) -> dict:
    """Every aggregation the task's YAML declares, called as the host does; plus the report's metrics."""
    keys = hooks.metric_keys(task)
    per_key = {key: [] for key in keys}
    for record in records:
        returned = hook_factory.record_under_keys(record, keys)
        for key in keys:
            per_key[key].append(returned[key])
    args = Namespace(output_path=str(output), model="llava_hf", model_args="pretrained=tiny/llava,device=cpu")
    values = {key: getattr(task_docs, f"aggregate_{key}")(per_key[key], args=args) for key in keys}
    found = sorted(output.rglob(f"{task}_report.json"), key=lambda path: path.stat().st_mtime)
    report = reports.read_report(found[-1])
    return {**report["metrics"], **values, "_report": report}


def test_bundled_data_is_the_official_csv() -> None:
    rows = prepare.read_csv(DATA / "contextual_val.csv")
    dataset = _dataset("contextual")
    assert len(dataset) == 100
    for row, doc in zip(rows, dataset, strict=True):
        assert {key: doc[key] for key in row.fields} == row.fields and doc["csv_row"] == row.row
    assert len(_dataset("contextual_test")) == 506


def test_sample_regenerates_identically_and_has_known_answers() -> None:
    assert make_sample.sample_files() == {
        make_sample.SAMPLE_FILE: (TASK_DIR / "sample" / make_sample.SAMPLE_FILE).read_bytes()
    }
    docs = docs_for("contextual_sample")
    assert [doc["response"] for doc in docs][:3] == ["3:40", "10:40", "35 minutes"]
    assert {doc["category"] for doc in docs} == {
        "time", "shopping", "navigation-transportation", "infographics", "stvqa", "estvqa"
    }  # fmt: skip
    assert all(doc["pack_task"] == "contextual_sample" for doc in docs)
    assert hooks.doc_to_visual(docs[0])[0].mode == "RGB"
    assert hooks.doc_to_text(docs[0]) == "What time is shown on the clock?"


def test_missing_prepared_images_are_named_before_the_run(judge_env, tmp_path) -> None:
    judge_env.setenv("LMMS_EVAL_TASKS_JUDGE", "rule")  # contextual's docs are prepared only with a judge
    judge_env.setenv(prepare.DATA_ENV, str(tmp_path / "prepared"))
    with pytest.raises(FileNotFoundError) as raised:
        docs_for("contextual")
    message = str(raised.value)
    assert "100 of 100 images are missing" in message and "row 0 (https://" in message
    assert "lmms-eval-tasks prepare contextual --out DIR" in message
    # with two images prepared and skip-missing set, the other rows are left out (counted in the log)
    images = tmp_path / "prepared" / "images"
    images.mkdir(parents=True)
    from PIL import Image

    urls = _dataset("contextual")["image_url"][:2]
    for url in urls:
        Image.new("RGB", (5, 5), (1, 2, 3)).save(images / prepare.image_filename(url), format="PNG")
    judge_env.setenv(hooks.SKIP_MISSING_ENV, "1")
    docs = docs_for("contextual")
    assert [doc["image_url"] for doc in docs] == urls
    assert hooks.doc_to_visual(docs[0])[0].size == (5, 5)
    record = hooks.make_record(docs[0], ["an answer"], "contextual")
    assert record["image_path"] == str(images / prepare.image_filename(urls[0]))
    (images / prepare.image_filename(urls[1])).write_bytes(b"<html>")
    with pytest.raises(RecordError, match=r"row 1 \(https://.*\): field 'image_url': cannot be decoded"):
        hooks.doc_to_visual(docs[1])


def test_sample_judged_by_the_rule_judge(judge_env, tmp_path) -> None:
    judge_env.setenv("LMMS_EVAL_TASKS_JUDGE", "rule")
    docs = docs_for("contextual_sample")
    # right answers for the first six instructions (in judge-visible wording), wrong for the other four
    answers = [f"The answer is {doc['response']}." for doc in docs[:6]] + ["I cannot read it."] * 4
    records = records_for("contextual_sample", docs, answers)
    values = run_aggregations("contextual_sample", records, tmp_path)
    # 6 of 10 accepted; natural = shopping 2 + navigation 2 + misc 2 -> accepted 2 + 1 + 0 of 6
    assert values["acceptance_rate"] == pytest.approx(60.0)
    assert values["acceptance_rate_digital"] == pytest.approx(75.0)  # time 3/3, infographics 0/1
    assert values["acceptance_rate_natural"] == pytest.approx(50.0)
    assert values["acceptance_rate_misc_natural_scenes"] == pytest.approx(0.0)
    assert values["unjudged"] == 0 and values["judge"] == "rule"
    report = values["_report"]
    assert report["details"]["per_scenario"]["time"] == {
        "items": 3,
        "judged": 3,
        "accepted": 3,
        "unjudged": 0,
    }
    assert any("RULE judge" in warning for warning in report["warnings"])
    assert records[0]["judge_verdicts"] == ["Yes"] and records[9]["judge_verdicts"] == ["No"]


def test_sample_through_the_fake_openai_judge_with_faults(judge_env, tmp_path) -> None:
    from fake_openai import FakeOpenAIServer, always_fail, combine, fail_first_attempts

    from lmms_eval_tasks.tasks.contextual import scoring

    docs = docs_for("contextual_sample")
    answers = [
        f"It says {doc['response']}" if index % 2 == 0 else "No idea." for index, doc in enumerate(docs)
    ]
    records = records_for("contextual_sample", docs, answers)

    def judge(prompt: str) -> str:
        reference = prompt.split("\nGround-truth Response: ", 1)[1].split("\nPredicted Response: ", 1)[0]
        verdict = "Yes" if reference in prompt.split("\nPredicted Response: ", 1)[1] else "No"
        return f"The ground truth is {reference}; a wrong answer would get No.\n**Judgement:** {verdict}"

    failing = scoring.judge_prompt(scoring.parse_item(records[3], 3))
    faults = combine(always_fail({failing}, "server_error"), fail_first_attempts(0.6))
    with FakeOpenAIServer(judge, faults=faults) as server:
        judge_env.setenv("OPENAI_API_URL", server.base_url)
        values = run_aggregations("contextual_sample", records, tmp_path)
    # even items answered right (5), odd ones wrong; item 3 (odd, wrong) unjudged: 5 of 9 judged accepted
    assert values["unjudged"] == 1
    assert values["acceptance_rate"] == pytest.approx(100 * 5 / 9)
    assert [record["judge_verdicts"][0] for record in records] == [
        "Yes", "No", "Yes", None, "Yes", "No", "Yes", "No", "Yes", "No"
    ]  # fmt: skip
    report = values["_report"]
    assert report["details"]["judging"]["unjudged"][0]["item_id"] == records[3]["image_url"]
    # the official rule reads "**Judgement:** Yes" as no marker -> nothing judged under it
    assert report["details"]["official_protocol_same_replies"]["judged"] == [0]


def test_submission_file_in_the_authors_format(judge_env, tmp_path) -> None:
    docs = docs_for("contextual_sample_submission")
    answers = [f'Answer with "quotes", a comma\nand a new line {index}' for index in range(len(docs))]
    records = records_for("contextual_sample_submission", docs, answers)
    values = run_aggregations("contextual_sample_submission", records, tmp_path)
    assert values["submission_rows"] == 10 and values["empty_predictions"] == 0
    files = values["_report"]["details"]["submission_files"]
    with open(files["csv"], newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["image_url", "instruction", "category", "response"]
    assert [row["response"] for row in rows] == answers
    assert [row["instruction"] for row in rows] == [doc["instruction"] for doc in docs]
    submitted = json.loads(Path(files["json"]).read_text(encoding="utf-8"))
    assert list(submitted) == ["tiny/llava"]
    assert submitted["tiny/llava"][docs[4]["image_url"]] == answers[4]
    assert values["_report"]["details"]["complete"] is True


def test_judge_model_other_than_the_papers_gpt4_is_a_deviation(judge_env, tmp_path) -> None:
    from fake_openai import FakeOpenAIServer

    docs = docs_for("contextual_sample")
    records = records_for("contextual_sample", docs, [doc["response"] for doc in docs])
    deviations = {}
    with FakeOpenAIServer(lambda prompt: "Judgement: Yes") as server:
        judge_env.setenv("OPENAI_API_URL", server.base_url)
        for model in ("gpt-4o-2024-11-20", "gpt-4"):  # the pack's default, then the paper's judge
            judge_env.setenv("LMMS_EVAL_TASKS_JUDGE_MODEL", model)
            fresh = [{k: v for k, v in r.items() if not k.startswith(("judge_", "rouge"))} for r in records]
            report = run_aggregations("contextual_sample", fresh, tmp_path / model)["_report"]
            assert report["provenance"]["judge"]["model"] == model
            deviations[model] = report["provenance"]["deviations"]
        assert {call.body["model"] for call in server.calls} == {"gpt-4o-2024-11-20", "gpt-4"}
    assert [line for line in deviations["gpt-4o-2024-11-20"] if "judge model 'gpt-4o-2024-11-20'" in line]
    assert "instead of the paper's 'gpt-4'" in " ".join(deviations["gpt-4o-2024-11-20"])
    assert not [line for line in deviations["gpt-4"] if "judge" in line]


def test_offline_task_loads_through_the_hosts_task_manager_and_its_report_names_the_rule_judge(
    judge_env, tmp_path
) -> None:
    """contextual_offline: the validation set judged by the rule judge by name (no endpoint, no variable),
    loaded by the real TaskManager from the pack's folder; its report says the judge is not the paper's."""
    from lmms_eval.tasks import TaskManager, get_task_dict

    from lmms_eval_tasks import TASKS_DIR
    from lmms_eval_tasks.framework.judge_requirement import missing_judge_line
    from lmms_eval_tasks.tasks.contextual import published

    judge_env.delenv("LMMS_EVAL_TASKS_JUDGE", raising=False)
    judge_env.setenv(prepare.DATA_ENV, str(tmp_path / "prepared"))
    judge_env.setenv(hooks.SKIP_MISSING_ENV, "1")
    images = tmp_path / "prepared" / "images"
    images.mkdir(parents=True)
    from PIL import Image

    urls = _dataset("contextual")["image_url"][:2]
    for url in urls:
        Image.new("RGB", (5, 5), (1, 2, 3)).save(images / prepare.image_filename(url), format="PNG")
    manager = TaskManager("ERROR", include_path=str(TASKS_DIR), include_defaults=False)
    task = get_task_dict(["contextual_offline"], manager)["contextual_offline"]
    docs = list(task.test_docs())
    assert [doc["image_url"] for doc in docs] == urls
    assert "offline RULE judge" in task.config.metadata["description"]

    # without a judge the launcher refuses contextual and names this task; this task itself needs none
    assert missing_judge_line(["contextual_offline"]) is None
    assert "run contextual_offline (the offline rule judge)" in missing_judge_line(["contextual"])
    assert config.score_options("contextual_offline")["judge"] == "rule"

    # the references themselves: the first is short, found contained (accepted); the second is too long for
    # the rule judge's containment test (unjudged, left out): 1 accepted of 1 judged = 100 %, 1 unjudged
    records = records_for("contextual_offline", docs, [doc["response"] for doc in docs])
    values = run_aggregations("contextual_offline", records, tmp_path)
    assert values["acceptance_rate"] == pytest.approx(100.0) and values["unjudged"] == 1
    assert values["judge"] == "rule"
    report = values["_report"]
    assert report["provenance"]["settings"]["score_options"]["judge"] == "rule"
    assert any(
        "RULE judge" in warning and "not the paper's GPT-4 judge" in warning for warning in report["warnings"]
    )
    assert any("rule judge" in reason for reason in published.published_for_task("contextual_offline")[1])
