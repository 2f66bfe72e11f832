"""Judge sensitivity (`lmms-eval-tasks rejudge`): the HallusionBench and ConTextual samples judged by two
local fake judges (the real `openai` client over HTTP to two servers on 127.0.0.1) that disagree on a
known set of items; agreement, Cohen's kappa and the flips computed by hand below."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lmms_eval_tasks.cli import main as cli_main
from lmms_eval_tasks.rejudge import JudgeSetting, cohen_kappa, kappa_undefined, rejudge, rejudge_module
from lmms_eval_tasks.reproduction import published_module
from tests.fake_openai import FakeOpenAIServer, isolate_judge_env
from tests.skeleton import SKELETON, skeleton_folder

TASKS = Path(__file__).resolve().parents[1] / "lmms_eval_tasks" / "tasks"
ITEM = re.compile(r"\(item (\d+)\)")


def hallusionbench_records() -> list[dict]:
    """The HallusionBench sample's questions, each answered "Yes. (item i)" (i = its position)."""
    from datasets import load_dataset

    from lmms_eval_tasks.tasks.hallusionbench import hooks

    docs = list(
        hooks.process_docs_sample(
            load_dataset(
                "parquet",
                data_files=str(TASKS / "hallusionbench" / "sample" / "image.parquet"),
                split="train",
            )
        )
    )
    task = "hallusionbench_sample"
    return [hooks.make_record(doc, [f"Yes. (item {i})"], task) for i, doc in enumerate(docs)]


def contextual_records() -> list[dict]:
    from datasets import load_dataset

    rows = load_dataset(
        "parquet",
        data_files=str(TASKS / "contextual" / "sample" / "contextual_sample.parquet"),
        split="train",
    )
    return [
        {"image_url": row["image_url"], "instruction": row["instruction"], "response": row["response"],
         "category": row["category"], "prediction": f"An answer (item {i})", "task": "contextual_sample"}
        for i, row in enumerate(rows)
    ]  # fmt: skip


def fake_judge(accepts, yes: str, no: str, other: str):
    """A judge that accepts item i iff ``accepts(i)``; prompts without an item marker get ``other``."""

    def reply(prompt: str) -> str:
        found = ITEM.findall(prompt)
        if not found or "Imagine you are an intelligent teacher. Thoroughly read the two" in prompt:
            return other
        return yes if accepts(int(found[-1])) else no

    return reply


def test_cohen_kappa_by_hand():
    # 4 items, A = [1,1,0,0], B = [1,0,0,0]: p_o = 3/4, p_e = (2/4)(1/4) + (2/4)(3/4) = 1/2 -> kappa 1/2
    assert cohen_kappa([True, True, False, False], [True, False, False, False]) == pytest.approx(0.5)
    assert cohen_kappa([True, True], [True, True]) is None  # both constant: p_e = 1
    # the result file says why next to the null; a defined kappa has no reason
    assert kappa_undefined([True] * 2, [True] * 2).startswith("undefined: both judges accept every one of")
    assert "reject every one of the 3 items" in kappa_undefined([False] * 3, [False] * 3)
    assert kappa_undefined([], []) == "undefined: no item was judged by both judges"
    assert kappa_undefined([True, True], [False, False]) is None  # p_e = 0: kappa 0, defined
    assert cohen_kappa([True, True], [False, False]) == 0


def test_rejudge_hallusionbench_sample_with_two_fake_judges(monkeypatch, tmp_path):
    isolate_judge_env(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    records = hallusionbench_records()
    n = len(records)
    assert n == 29
    flipped = {1, 4, 7}
    judge_a = fake_judge(lambda i: i % 2 == 0, "correct", "incorrect", "same")
    judge_b = fake_judge(lambda i: (i % 2 == 0) != (i in flipped), "correct", "incorrect", "same")
    options = {"judge": "openai", "repeats": 1}
    with FakeOpenAIServer(judge_a) as server_a, FakeOpenAIServer(judge_b) as server_b:
        result = rejudge(
            "hallusionbench", records,
            JudgeSetting({**options, "judge_model": "judge-a"}, server_a.base_url),
            JudgeSetting({**options, "judge_model": "judge-b"}, server_b.base_url),
            resamples=200,
        )  # fmt: skip
        calls = (server_a.call_count(), server_b.call_count())
    # A accepts the 15 even items of 0..28, B the same but 4 (A yes -> B no), 1 and 7 (A no -> B yes): 16.
    # Table: both yes 14, both no 12, A yes/B no 1, A no/B yes 2 -> agreement 26/29.
    # p_e = (15/29)(16/29) + (14/29)(13/29) = 422/841; kappa = (26/29 - 422/841) / (1 - 422/841) = 332/419.
    assert result["judged_by_both"] == 29 and result["agreement"] == pytest.approx(26 / 29)
    assert result["cohen_kappa"] == pytest.approx(332 / 419)
    assert sorted(flip["index"] for flip in result["flips"]) == [1, 4, 7]
    assert {flip["index"]: flip["judge-b"] for flip in result["flips"]} == {1: True, 4: False, 7: True}
    # aAcc over 29 questions: A 15/29, B 16/29 -> difference +100/29 points.
    assert result["metrics"]["judge-a"]["aAcc"] == pytest.approx(100 * 15 / 29)
    assert result["metrics"]["judge-b"]["aAcc"] == pytest.approx(100 * 16 / 29)
    aacc = result["difference"]["aAcc"]
    assert aacc["difference"] == pytest.approx(100 / 29) and aacc["low"] <= aacc["difference"] <= aacc["high"]
    assert calls[0] >= 29 and calls[1] >= 29  # each judge saw every question


def test_rejudge_contextual_sample_from_the_command_line(monkeypatch, tmp_path, capsys):
    isolate_judge_env(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    records = contextual_records()
    assert len(records) == 10
    path = tmp_path / "contextual_sample_samples.jsonl"
    # the saved records carry a previous run's verdicts: rejudging must not reuse them
    path.write_text("".join(json.dumps({**r, "judge_verdicts": ["No"], "judge_replies": ["Judgement: No"]})
                            + "\n" for r in records), encoding="utf-8")  # fmt: skip
    judge_a = fake_judge(lambda i: i % 2 == 0, "Judgement: Yes", "Judgement: No", "Judgement: No")
    judge_b = fake_judge(lambda i: (i % 2 == 0) != (i in {1, 4}), "Judgement: Yes", "Judgement: No", "")
    with FakeOpenAIServer(judge_a) as server_a, FakeOpenAIServer(judge_b) as server_b:
        arguments = [
            "rejudge", "contextual", str(path),
            "--judge-model", "judge-b", "--judge-base-url", server_b.base_url,
            "--baseline-judge-model", "judge-a", "--baseline-base-url", server_a.base_url,
            "-o", "repeats=1", "-o", "rouge=false", "--resamples", "200",
        ]  # fmt: skip
        code = cli_main(arguments)  # fmt: skip
        assert code == 0, capsys.readouterr().err
        first_calls = server_a.call_count() + server_b.call_count()
        # cached: a second run asks neither judge again (resumable)
        assert cli_main(arguments) == 0  # fmt: skip
        assert server_a.call_count() + server_b.call_count() == first_calls == 20
    result = json.loads(
        (tmp_path / "contextual_sample_samples.jsonl.rejudge_judge-b.json").read_text("utf-8")
    )
    # A accepts 0,2,4,6,8 (5/10); B: 0,2,6,8 and 1 (5/10). Agreement 8/10; p_e = .5*.5 + .5*.5 = .5;
    # kappa = (0.8 - 0.5) / (1 - 0.5) = 0.6. Flips: 1 (no -> yes), 4 (yes -> no); acceptance 50 vs 50.
    assert result["agreement"] == pytest.approx(0.8) and result["cohen_kappa"] == pytest.approx(0.6)
    assert {flip["index"]: flip["judge-b"] for flip in result["flips"]} == {1: True, 4: False}
    assert result["difference"]["acceptance_rate"]["difference"] == pytest.approx(0.0)
    assert result["metrics"]["judge-a"]["acceptance_rate"] == pytest.approx(50.0)


def test_report_shows_a_saved_rejudge_result(tmp_path):
    """A rejudge result next to a run's records appears in the report's Reproduction section."""
    from lmms_eval_tasks.human_report import write_report_for_runs
    from lmms_eval_tasks.reporting import schema as reports
    from tests.test_report import crafted_run, md_tables, row

    output = crafted_run(tmp_path / "out", "contextual", "contextual_sample", {"acceptance_rate": 50.0})
    records = output / "crafted-model" / reports.PACK_FOLDER / "20261201_000000"  # crafted_run's folder
    assert (records / "contextual_sample_report.json").is_file()
    result = {
        "judge_a": {"name": "judge-a"}, "judge_b": {"name": "judge-b"}, "judged_by_both": 10,
        "agreement": 0.8, "cohen_kappa": 0.6, "flips": [{"index": 1}, {"index": 4}],
        "difference": {"acceptance_rate": {"judge-a": 50.0, "judge-b": 50.0, "difference": 0.0,
                                           "low": -20.0, "high": 20.0}},
    }  # fmt: skip
    (records / "contextual_sample_samples.jsonl.rejudge_judge-b.json").write_text(json.dumps(result), "utf-8")
    html_path = write_report_for_runs([output], tmp_path / "report")
    table = md_tables((html_path.parent / "report.md").read_text("utf-8"))[
        "Reproduction :: Judge sensitivity (lmms-eval-tasks rejudge)"
    ]
    cells = row(table, "crafted (crafted-model) / contextual_sample")
    assert (cells["agreement"], cells["Cohen's kappa"], cells["flips"]) == ("0.800", "0.600", "2")
    assert (cells["B - A"], cells["B - A 95% CI (paired)"]) == ("0.00", "[-20.00, 20.00]")
    # An incomplete result (failed judge calls) says so in the report.
    result["incomplete"] = "INCOMPLETE: judge calls failed (judge-a 0, judge-b 5; last error: HTTP 401)"
    (records / "contextual_sample_samples.jsonl.rejudge_judge-b.json").write_text(json.dumps(result), "utf-8")
    html_path = write_report_for_runs([output], tmp_path / "report2")
    assert "contextual_sample: INCOMPLETE: judge calls failed (judge-a 0, judge-b 5" in (
        html_path.parent / "report.md"
    ).read_text("utf-8")
    # kappa undefined (both judges constant): the report says why beside the empty cell
    result.pop("incomplete")
    result.update(cohen_kappa=None, cohen_kappa_undefined="undefined: both judges accept every one of the 10")
    (records / "contextual_sample_samples.jsonl.rejudge_judge-b.json").write_text(json.dumps(result), "utf-8")
    html_path = write_report_for_runs([output], tmp_path / "report3")
    assert "Cohen's kappa undefined: both judges accept every one of the 10" in (
        html_path.parent / "report.md"
    ).read_text("utf-8")


def test_rejudge_with_a_judge_model_named_with_a_slash(monkeypatch, tmp_path, capsys):
    """Judge models are often named ``org/model`` (vLLM, OpenRouter): the result file stays next to the
    records (the slash is not a folder) and the report still finds it."""
    isolate_judge_env(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    path = tmp_path / "contextual_sample_samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in contextual_records()), encoding="utf-8")
    judge = fake_judge(lambda i: i % 2 == 0, "Judgement: Yes", "Judgement: No", "Judgement: No")
    with FakeOpenAIServer(judge) as server:
        code = cli_main(
            ["rejudge", "contextual", str(path), "--judge-model", "Qwen/Qwen2.5-72B-Instruct",
             "--judge-base-url", server.base_url, "--baseline-judge-model", "judge-a",
             "--baseline-base-url", server.base_url, "-o", "repeats=1", "-o", "rouge=false",
             "--resamples", "50"]
        )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    [saved] = list(tmp_path.glob("contextual_sample_samples.jsonl.rejudge_*.json"))
    assert saved.name == "contextual_sample_samples.jsonl.rejudge_Qwen_Qwen2.5-72B-Instruct.json"
    assert json.loads(saved.read_text("utf-8"))["judge_b"]["name"] == "Qwen/Qwen2.5-72B-Instruct"


def test_an_items_verdict_across_repeats_is_the_one_compare_uses():
    """rejudge's per-item verdict (agreement, kappa, flips) follows the scorers' per-question rule that
    `compare` uses: HallusionBench ``per_question_correct`` counts a tie across repeats as wrong, ConTextual
    ``per_question_correct`` leaves a tie out (None). A tie happens with 3 repeats when one is unjudged."""
    from lmms_eval_tasks.tasks.contextual import rejudge as contextual
    from lmms_eval_tasks.tasks.hallusionbench import rejudge as hallusionbench

    assert hallusionbench.outcome({"correct": [True, None, False]}) is False  # 1 of 2 judged: tie -> wrong
    assert hallusionbench.outcome({"correct": [True, True, False]}) is True
    assert hallusionbench.outcome({"correct": [None, None, None]}) is None
    assert hallusionbench.outcome({"correct": True}) is True
    assert contextual.outcome({"judge_verdicts": ["Yes", None, "No"]}) is None  # tie -> left out
    assert contextual.outcome({"judge_verdicts": ["Yes", "Yes", "No"]}) is True
    assert contextual.outcome({"judge_verdicts": ["No", None, None]}) is False
    assert contextual.outcome({"judge_verdicts": [None]}) is None


def test_rejudge_with_a_hostile_judge(monkeypatch, tmp_path, capsys):
    """Judge B answers item 0 with two verdicts, item 1 with none, echoes the API key at item 2 and accepts
    item 3 (A rejects it): 0 and 1 are unjudged (never scored, no flip), the key is stored nowhere, and
    the metric difference says it includes B's left-out items."""
    isolate_judge_env(monkeypatch, tmp_path / "cache")
    secret = "sk-test-SECRETKEY1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    path = tmp_path / "contextual_sample_samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in contextual_records()), encoding="utf-8")
    judge_a = fake_judge(lambda i: i % 2 == 0, "Judgement: Yes", "Judgement: No", "Judgement: No")
    hostile = {0: "Judgement: Yes\nJudgement: No", 1: "I cannot decide.", 2: f"Judgement: Yes. key {secret}"}

    def judge_b(prompt: str) -> str:
        i = int(ITEM.findall(prompt)[-1])
        return hostile.get(i) or ("Judgement: Yes" if i % 2 == 0 or i == 3 else "Judgement: No")

    with FakeOpenAIServer(judge_a) as server_a, FakeOpenAIServer(judge_b) as server_b:
        code = cli_main(
            ["rejudge", "contextual", str(path), "--judge-model", "judge-b", "--judge-base-url",
             server_b.base_url, "--baseline-judge-model", "judge-a", "--baseline-base-url", server_a.base_url,
             "-o", "repeats=1", "-o", "rouge=false", "--resamples", "50"]
        )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    result = json.loads(
        (tmp_path / "contextual_sample_samples.jsonl.rejudge_judge-b.json").read_text("utf-8")
    )
    # Items 2..9 judged by both. A: yes at 2,4,6,8 (4/8); B: yes at 2,3,4,6,8 (5/8). Agreement 7/8;
    # p_e = (4/8)(5/8) + (4/8)(3/8) = 1/2; kappa = (7/8 - 1/2) / (1 - 1/2) = 3/4. One flip: item 3.
    assert (result["judged_by_both"], result["unjudged_by_either"]) == (8, 2)
    assert result["agreement"] == pytest.approx(7 / 8) and result["cohen_kappa"] == pytest.approx(0.75)
    assert [(flip["index"], flip["judge-b"]) for flip in result["flips"]] == [(3, True)]
    # A: 5 of 10 accepted = 50 %; B: 5 of its 8 judged = 62.5 % (items 0 and 1 left out, not rejected).
    assert result["metrics"]["judge-a"]["acceptance_rate"] == pytest.approx(50.0)
    assert result["metrics"]["judge-b"]["acceptance_rate"] == pytest.approx(62.5)
    assert result["difference_caveat"].startswith("judge-a left 0 items unjudged, judge-b 2 (2 judged by one")
    for stored in tmp_path.rglob("*"):
        if stored.is_file():
            assert secret not in stored.read_text("utf-8", errors="ignore"), stored


def test_rejudge_reads_the_runs_judge_and_options_from_its_report(monkeypatch, tmp_path, capsys):
    """Without --baseline-judge-model, judge A is the judge the run's report records (provenance.judge),
    not the scorer's default, and both judges score with the run's recorded options (protocol)."""
    isolate_judge_env(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    path = tmp_path / "contextual_sample_samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in contextual_records()), encoding="utf-8")
    report = {
        "benchmark": "contextual", "task": "contextual_sample",
        "provenance": {
            "judge": {"kind": "openai", "model": "the-runs-judge", "repeats": 1},
            "settings": {"score_options": {"protocol": "official", "image_judge": False},
                         "uncertainty_options": {"bootstrap_resamples": 100}},
        },
    }  # fmt: skip
    (tmp_path / "contextual_sample_report.json").write_text(json.dumps(report), encoding="utf-8")
    judge = fake_judge(lambda i: i % 2 == 0, "Judgement: Yes", "Judgement: No", "Judgement: No")
    with FakeOpenAIServer(judge) as server_a, FakeOpenAIServer(judge) as server_b:
        code = cli_main(
            ["rejudge", "contextual", str(path), "--judge-model", "judge-b", "--judge-base-url",
             server_b.base_url, "--baseline-base-url", server_a.base_url, "-o", "rouge=false",
             "--resamples", "50"]
        )  # fmt: skip
        asked = {call.body.get("model") for call in server_a.calls}
    assert code == 0, capsys.readouterr().err
    result = json.loads(
        (tmp_path / "contextual_sample_samples.jsonl.rejudge_judge-b.json").read_text("utf-8")
    )
    assert result["judge_a"]["name"] == "the-runs-judge" and asked == {"the-runs-judge"}
    for side in ("judge_a", "judge_b"):
        options = result[side]["options"]
        assert (options["protocol"], options["repeats"]) == ("official", 1), side
    assert result["agreement"] == 1.0 and result["flips"] == []


def test_rejudge_refuses_two_judges_of_one_name(tmp_path, capsys):
    """The judge cache keys replies by model name, not endpoint: the same name on two endpoints would give
    judge B judge A's cached replies (agreement 1, silently); refused before any judging, one line."""
    path = tmp_path / "contextual_sample_samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in contextual_records()), encoding="utf-8")
    code = cli_main(
        ["rejudge", "contextual", str(path), "--judge-model", "gpt-4o", "--judge-base-url",
         "http://127.0.0.1:9/v1", "--baseline-judge-model", "gpt-4o", "--baseline-base-url",
         "http://127.0.0.1:8/v1"]
    )  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("lmms-eval-tasks rejudge: judge A and judge B are both gpt-4o")
    assert not list(tmp_path.glob("*.rejudge_*.json"))


def test_a_judge_that_dies_midway_fails_the_command_and_a_rerun_asks_only_the_missing(
    monkeypatch, tmp_path, capsys
):
    """Judge B answers its first 5 calls, then every call is refused (HTTP 401): rejudge writes the result
    saying it is incomplete, exits 1 with the cause and the fix on its last line; rerunning the same command
    against a healthy B asks B only the 5 missing items (the cache keeps the rest) and exits 0."""
    isolate_judge_env(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    path = tmp_path / "contextual_sample_samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in contextual_records()), encoding="utf-8")
    judge_a = fake_judge(lambda i: i % 2 == 0, "Judgement: Yes", "Judgement: No", "Judgement: No")
    judge_b = fake_judge(lambda i: i < 5, "Judgement: Yes", "Judgement: No", "Judgement: No")

    def command(server_a: FakeOpenAIServer, server_b: FakeOpenAIServer) -> int:
        return cli_main(
            ["rejudge", "contextual", str(path), "--judge-model", "judge-b", "--judge-base-url",
             server_b.base_url, "--baseline-judge-model", "judge-a", "--baseline-base-url", server_a.base_url,
             "-o", "repeats=1", "-o", "rouge=false", "--resamples", "50"]
        )  # fmt: skip

    result_file = tmp_path / "contextual_sample_samples.jsonl.rejudge_judge-b.json"
    dying = FakeOpenAIServer(judge_b, faults=lambda call: "unauthorized" if call.index >= 5 else None)
    with FakeOpenAIServer(judge_a) as server_a, dying as server_b:
        code = command(server_a, server_b)
        err = capsys.readouterr().err
        assert code == 1, err
        last = err.strip().splitlines()[-1]
        assert last.startswith(f"lmms-eval-tasks rejudge: {result_file}: INCOMPLETE: judge calls failed")
        assert "judge-a 0, judge-b 5" in last and "HTTP 401" in last
        assert "rerun the same command" in last and "only the missing items are asked" in last
        assert "test-key" not in err
        result = json.loads(result_file.read_text("utf-8"))
        assert result["complete"] is False and result["failed_judge_calls"] == {"judge-a": 0, "judge-b": 5}
        # 10 items, 5 of B's calls failed: 5 judged by both, 5 by A only.
        assert (result["judged_by_both"], result["unjudged_by_either"]) == (5, 5)
        assert result["incomplete"] in last
        calls_a = server_a.call_count()
        with FakeOpenAIServer(judge_b) as healthy:
            assert command(server_a, healthy) == 0, capsys.readouterr().err
            assert (server_a.call_count(), healthy.call_count()) == (calls_a, 5)  # only B's missing 5
    result = json.loads(result_file.read_text("utf-8"))
    assert result["complete"] is True and result["incomplete"] is None and result["judged_by_both"] == 10
    # A accepts 0,2,4,6,8; B accepts 0..4. Agreement on 0,2,4 (yes) and 5,7,9 (no) = 6/10; flips 1,3,6,8.
    assert result["agreement"] == pytest.approx(0.6)
    assert sorted(flip["index"] for flip in result["flips"]) == [1, 3, 6, 8]


def test_rejudge_of_a_run_folder_takes_its_one_task_of_the_benchmark(monkeypatch, tmp_path, capsys):
    """A run folder holding records of one contextual task (and of other benchmarks') needs no --task."""
    isolate_judge_env(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    run_folder = tmp_path / "out" / "random_guess" / "lmms_eval_tasks" / "20261206_000000"
    run_folder.mkdir(parents=True)
    path = run_folder / "contextual_sample_samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in contextual_records()), encoding="utf-8")
    (run_folder / "hallusionbench_sample_samples.jsonl").write_text("{}\n", encoding="utf-8")
    judge = fake_judge(lambda i: i % 2 == 0, "Judgement: Yes", "Judgement: No", "Judgement: No")
    with FakeOpenAIServer(judge) as server_a, FakeOpenAIServer(judge) as server_b:
        code = cli_main(
            ["rejudge", "contextual", str(run_folder), "--judge-model", "judge-b", "--judge-base-url",
             server_b.base_url, "--baseline-judge-model", "judge-a", "--baseline-base-url", server_a.base_url,
             "-o", "repeats=1", "-o", "rouge=false", "--resamples", "50"]
        )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    result = json.loads(path.with_name(f"{path.name}.rejudge_judge-b.json").read_text("utf-8"))
    assert result["records"] == str(path) and result["agreement"] == 1.0
    # two tasks of the benchmark: the folder is ambiguous, named as before
    (run_folder / "contextual_offline_samples.jsonl").write_text("{}\n", encoding="utf-8")
    code = cli_main(["rejudge", "contextual", str(run_folder), "--judge-model", "judge-b"])
    assert code == 2 and "name the task with --task" in capsys.readouterr().err


@pytest.mark.parametrize("name", [SKELETON])
def test_a_benchmark_package_of_its_own_finds_its_rejudge_and_published_modules(name: str) -> None:
    """`new-benchmark --out` packages live outside ``lmms_eval_tasks.tasks``: their ``rejudge.py`` and
    ``published.py`` are found beside their behaviour; an import that fails inside one is not "no judge"."""
    import sys

    assert published_module(name) is None and published_module("no_such_benchmark") is None
    with pytest.raises(ValueError, match=f"{name} has no judge to change"):
        rejudge_module(name)
    own = skeleton_folder() / "rejudge.py"
    try:
        own.write_text("ANNOTATIONS = ()\n", encoding="utf-8")
        assert rejudge_module(name).__name__ == f"{name}.rejudge"
        del sys.modules[f"{name}.rejudge"]
        own.write_text("import no_such_judge_client  # noqa: F401\n", encoding="utf-8")
        with pytest.raises(ModuleNotFoundError, match="no_such_judge_client"):
            rejudge_module(name)
    finally:
        own.unlink()
        sys.modules.pop(f"{name}.rejudge", None)
