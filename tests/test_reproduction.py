"""The reproduction verdict: model identity by checkpoint or --published-as, published value against the
run's value and 95% interval, the rule's answer, and every known reason for a difference; in the report
(section + overview column) and in `report --json`. Crafted reports with the arithmetic written out, and
one real launcher run of `random_guess` on the HallusionBench sample (slow)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lmms_eval_tasks.cli import main as cli_main
from lmms_eval_tasks.human_report import load_runs, report_json, write_report_for_runs
from lmms_eval_tasks.reporting import schema as reports
from lmms_eval_tasks.reproduction import CHECKPOINT_NAMES, match_model, printed_half_unit, verdict_for_report
from tests.helpers import run_launcher
from tests.test_report import crafted_run, md_tables, row


def test_checkpoints_name_the_published_model_and_nothing_is_guessed():
    for checkpoint in ("llava-hf/llava-1.5-7b-hf", "liuhaotian/llava-v1.5-7b"):
        match = match_model({"model": "llava_hf", "model_args": f"pretrained={checkpoint},device=cpu"})
        assert (match.name, match.how) == ("LLaVA-1.5-7B", f"checkpoint {checkpoint} is LLaVA-1.5-7B")
    assert CHECKPOINT_NAMES["llava-hf/llava-1.5-13b-hf"] == "LLaVA-1.5-13B"
    # A name that merely looks like LLaVA-1.5-7B is not matched (no fuzzy guess) ...
    near = match_model({"model": "llava_hf", "model_args": "pretrained=someone/llava-1.5-7b-finetuned"})
    assert near.name is None and "--published-as" in near.how
    # ... unless the user says so, and the report records how.
    named = match_model({"model": "random_guess", "model_args": "seed=0"}, "LLaVA-1.5-13B")
    assert named.name == "LLaVA-1.5-13B"
    assert named.how == "--published-as LLaVA-1.5-13B (the run's checkpoint: not recorded)"
    # --published-as applies to every run of a report: one whose checkpoint names another model says so.
    other = match_model(
        {"model": "llava_hf", "model_args": "pretrained=llava-hf/llava-1.5-7b-hf"}, "LLaVA-1.5-13B"
    )
    assert other.how == (
        "--published-as LLaVA-1.5-13B (the run's checkpoint: llava-hf/llava-1.5-7b-hf; OVERRIDES the "
        "checkpoint's own published model LLaVA-1.5-7B)"
    )
    # The substitution's loaded checkpoint wins over the asked one.
    substituted = match_model(
        {"model": "llava", "model_args": "pretrained=liuhaotian/llava-v1.5-13b",
         "model_substitution": {"asked": "llava", "used": "llava_transformers",
                                "checkpoint": "llava-hf/llava-1.5-13b-hf"}}
    )  # fmt: skip
    assert substituted.name == "LLaVA-1.5-13B" and substituted.checkpoint == "llava-hf/llava-1.5-13b-hf"


def _hallusionbench_run(tmp_path: Path) -> Path:
    """qAcc 12.5 in [0, 37.5]; fAcc 50 in [30, 70]; aAcc 45 in [40, 50]; rule judge; --limit 8."""
    uncertainty = {
        metric: {"estimate": value, "stderr": 1.0, "low": low, "high": high, "method": "bootstrap",
                 "unit": "figure group", "n_units": 4}
        for metric, value, low, high in (("qAcc", 12.5, 0.0, 37.5), ("fAcc", 50.0, 30.0, 70.0),
                                         ("aAcc", 45.0, 40.0, 50.0))
    }  # fmt: skip
    return crafted_run(
        tmp_path / "out", "hallusionbench", "hallusionbench_sample",
        {"qAcc": 12.5, "fAcc": 50.0, "aAcc": 45.0}, {"uncertainty": uncertainty},
        model_args="pretrained=org/tiny-model",
        judge={"kind": "rule", "model": "rule-based", "repeats": 1, "task": "hallusionbench"},
        limit=8,
    )  # fmt: skip


def test_verdict_of_a_run_registered_as_a_published_model(tmp_path: Path):
    output = _hallusionbench_run(tmp_path)
    [run] = load_runs([output])
    report = run.reports["hallusionbench_sample"]
    # Without an override the checkpoint org/tiny-model is no published model: no verdict, and why.
    unmatched = verdict_for_report(report)
    assert unmatched.published_row is None and "org/tiny-model is not a published model" in unmatched.note

    verdict = verdict_for_report(report, "LLaVA-1.5-13B")
    # Published (README leaderboard, GPT Eval): qAcc 10.55, fAcc 24.86, aAcc 46.94.
    by_metric = {item.metric: item for item in verdict.metrics}
    assert list(by_metric) == ["qAcc", "fAcc", "aAcc"]
    # qAcc: 12.5 - 10.55 = 1.95; 0 <= 10.55 <= 37.5 -> within sampling.
    assert by_metric["qAcc"].difference == pytest.approx(1.95) and by_metric["qAcc"].within_sampling is True
    # fAcc: 50 - 24.86 = 25.14; 24.86 < 30 (the interval's low end) -> not explained by sampling.
    assert by_metric["fAcc"].difference == pytest.approx(25.14) and by_metric["fAcc"].within_sampling is False
    # aAcc: 45 - 46.94 = -1.94; 40 <= 46.94 <= 50 -> within.
    assert by_metric["aAcc"].difference == pytest.approx(-1.94) and by_metric["aAcc"].within_sampling is True
    assert verdict.summary == "differs"  # one metric outside its interval
    reasons = verdict.reasons
    assert reasons[0].startswith("judge: rule-based (rule); the published value: GPT-4")
    assert "subset: --limit 8 (the published value is over the whole question set)" in reasons
    assert "sample data: the run scored the bundled sample, not the benchmark's dataset" in reasons
    # A run judged by the paper's judge model name still says the snapshot may differ; no judge, no reason.
    report["provenance"]["judge"] = {"kind": "openai", "model": "gpt-4", "repeats": 3}
    same = verdict_for_report(report, "LLaVA-1.5-13B").reasons[0]
    assert same.startswith("judge: gpt-4, the paper's model name; the snapshot behind that name may differ")


def test_report_shows_the_reproduction_section_overview_column_and_json(tmp_path: Path, capsys):
    output = _hallusionbench_run(tmp_path)
    html_path = write_report_for_runs([output], tmp_path / "report", published_as="LLaVA-1.5-13B")
    markdown = (html_path.parent / "report.md").read_text(encoding="utf-8")
    table = md_tables(markdown)["Reproduction :: Published value against the run"]
    first = row(table, "crafted (tiny-model) / hallusionbench_sample")  # first row: qAcc
    assert first["metric"] == "qAcc" and first["published"] == "10.55" and first["run"] == "12.50"
    assert first["run 95% CI"] == "[0.00, 37.50]" and first["within sampling?"] == "yes"
    assert "differs (LLaVA-1.5-13B)" in markdown.split("## Contents")[0]  # the overview column
    assert "--published-as LLaVA-1.5-13B" in markdown
    assert '<section id="reproduction">' in html_path.read_text(encoding="utf-8")

    code = cli_main(["report", str(output), "--out", str(tmp_path / "r2"), "--published-as", "LLaVA-1.5-13B",
                     "--json"])  # fmt: skip
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    [verdict] = printed["runs"][0]["reproduction"]
    assert verdict["summary"] == "differs" and verdict["published_model"] == "LLaVA-1.5-13B"
    assert [m["within_sampling"] for m in verdict["metrics"]] == [True, False, True]
    assert verdict["source"]["checked_against"] == "README leaderboard table"
    assert report_json(load_runs([output]))["runs"][0]["reproduction"][0]["summary"] == "not matched"


@pytest.mark.slow  # the real launcher
def test_random_guess_run_registered_as_a_published_model(tmp_path: Path):
    """A real run (random_guess on the HallusionBench sample, --limit 4, rule judge) compared with
    LLaVA-1.5-13B: the verdict's numbers are the report's, the reasons name judge, limit and sample."""
    output = tmp_path / "out"
    completed = run_launcher(
        "--model", "random_guess", "--model_args", "seed=0", "--tasks", "hallusionbench_sample",
        "--batch_size", "1", "--output_path", str(output), "--log_samples", "--seed", "0", "--limit", "4",
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    report = reports.read_report(reports.task_files(output, "hallusionbench_sample")["report"])
    verdict = verdict_for_report(report, "LLaVA-1.5-13B")
    for item in verdict.metrics:
        value = report["metrics"][item.metric]
        block = report["details"]["uncertainty"][item.metric]
        assert item.value == value and item.difference == pytest.approx(value - item.published)
        half = printed_half_unit(item.published)
        if block["high"] > block["low"]:
            assert item.within_sampling == (block["low"] - half <= item.published <= block["high"] + half)
        else:  # zero width (4 questions: e.g. qAcc 0 in [0, 0]): no sampling error estimated
            assert item.within_sampling is (True if abs(value - item.published) <= half else None)
    text = " | ".join(verdict.reasons)
    assert "judge: rule-based" in text and "--limit" in text and "sample data" in text


def _crafted_hallusionbench(tmp_path: Path, task: str, blocks: dict, **kwargs) -> dict:
    """One crafted HallusionBench report: ``blocks`` maps metric -> (value, low, high) (None: no metric)."""
    metrics = {metric: value for metric, (value, _, _) in blocks.items()}
    uncertainty = {
        metric: {"estimate": value, "stderr": 1.0, "low": low, "high": high, "method": "bootstrap",
                 "unit": "figure group", "n_units": 40}
        for metric, (value, low, high) in blocks.items() if value is not None
    }  # fmt: skip
    output = crafted_run(
        tmp_path / "out", "hallusionbench", task, metrics, {"uncertainty": uncertainty},
        model_args="pretrained=liuhaotian/llava-v1.5-13b", **kwargs,
    )  # fmt: skip
    [run] = load_runs([output])
    return run.reports[task]


def full_run(folder: Path, blocks: dict, model: str = "gpt-4") -> Any:
    """The verdict of a crafted full ``hallusionbench`` run judged by ``model`` (the paper's by default)."""
    judge = {"kind": "openai", "model": model, "repeats": 3, "task": "hallusionbench"}
    return verdict_for_report(_crafted_hallusionbench(folder, "hallusionbench", blocks, judge=judge))


def test_within_sampling_with_a_different_setting_is_not_called_a_reproduction(tmp_path: Path):
    # Every compared metric within its interval (published 10.55, 24.86, 46.94), but --limit 8, the bundled
    # sample and the rule judge: the numbers are consistent, the run is not the paper's -> not "agrees".
    within = {"qAcc": (12.5, 0.0, 37.5), "fAcc": (25.0, 10.0, 40.0), "aAcc": (45.0, 40.0, 50.0)}
    judge = {"kind": "rule", "model": "rule-based", "repeats": 1, "task": "hallusionbench"}
    report = _crafted_hallusionbench(tmp_path / "a", "hallusionbench_sample", within, judge=judge, limit=8)
    verdict = verdict_for_report(report)
    assert verdict.model.name == "LLaVA-1.5-13B"  # by its checkpoint
    assert [m.within_sampling for m in verdict.metrics] == [True, True, True]
    assert verdict.summary == "within sampling, setting differs"
    differences = " | ".join(verdict.setting_differences)
    assert "judge: rule-based" in differences and "--limit 8" in differences and "sample data" in differences
    assert verdict.as_dict()["summary"] == "within sampling, setting differs"
    # The faithful run: the full task, no limit, the paper's judge model name, the official reply reading, a
    # checked published value: only the caveat about the judge snapshot remains (no setting difference).
    gpt4 = {"kind": "openai", "model": "gpt-4", "repeats": 3, "task": "hallusionbench"}
    report = _crafted_hallusionbench(tmp_path / "b", "hallusionbench", within, judge=gpt4)
    # The pack's default reading of judge replies (verdict_parse=final) is not the official label rule.
    assert verdict_for_report(report).summary == "within sampling, setting differs"
    assert any(r.startswith("verdict parsing: final") for r in verdict_for_report(report).setting_differences)
    report["provenance"]["settings"] = {"variant": "official", "no_verdict": "official",
                                        "score_options": {"verdict_parse": "official"}}  # fmt: skip
    faithful = verdict_for_report(report)
    assert faithful.setting_differences == [] and faithful.summary == "agrees"
    assert faithful.reasons[0].startswith("judge: gpt-4, the paper's model name")
    # The no-verdict rule other than the official one is a setting difference too.
    report["provenance"]["settings"]["no_verdict"] = "unjudged"
    assert verdict_for_report(report).setting_differences == [
        "no-verdict rule: unjudged, not the official code's"
    ]
    # The same faithful run with another judge model is not a reproduction.
    other = full_run(tmp_path / "c", within, "gpt-4o-2024-11-20")
    assert other.summary == "within sampling, setting differs"
    assert other.setting_differences[0].startswith("judge: gpt-4o-2024-11-20 (openai)")


def test_interval_rule_counts_the_published_rounding_and_zero_width_intervals(tmp_path: Path):
    # qAcc published 10.55 (2 decimals: the true value lies in [10.545, 10.555]).
    # [10.552, 20]: 10.55 + 0.005 = 10.555 >= 10.552 -> explained; [10.556, 20]: 10.555 < 10.556 -> not.
    # aAcc 46.94 with a zero-width interval at 46.94 (value = published) -> within.
    # fAcc 0.0 with interval [0, 0] against 24.86: no sampling error estimated -> cannot tell (not "differs").
    blocks = {"qAcc": (15.0, 10.552, 20.0), "fAcc": (0.0, 0.0, 0.0), "aAcc": (46.94, 46.94, 46.94)}
    verdict = full_run(tmp_path / "a", blocks)
    by_metric = {m.metric: m for m in verdict.metrics}
    assert by_metric["qAcc"].within_sampling is True
    assert by_metric["aAcc"].within_sampling is True
    assert by_metric["fAcc"].within_sampling is None and "zero width" in by_metric["fAcc"].why
    assert verdict.summary == "cannot tell"
    # One metric outside its interval makes the run "differs", even when another cannot tell.
    blocks["qAcc"] = (30.0, 20.0, 40.0)  # 10.55 + 0.005 < 20 -> outside
    verdict = full_run(tmp_path / "d", blocks)
    assert [m.within_sampling for m in verdict.metrics] == [False, None, True]
    assert verdict.summary == "differs"
    blocks["qAcc"] = (15.0, 10.552, 20.0)
    blocks["qAcc"] = (15.0, 10.556, 20.0)
    blocks["fAcc"] = (25.0, 20.0, 30.0)
    verdict = full_run(tmp_path / "b", blocks)
    assert [m.within_sampling for m in verdict.metrics] == [False, True, True]
    assert verdict.summary == "differs"
    # A metric the run lacks (or an undefined one: NaN is stored as null) cannot be judged, and says why.
    blocks["qAcc"] = (None, None, None)
    verdict = full_run(tmp_path / "c", blocks)
    assert verdict.metrics[0].within_sampling is None and "no value of qAcc" in verdict.metrics[0].why
    assert verdict.summary == "cannot tell"


def test_printed_half_unit():
    # 25.06 -> 0.005; 16.0 -> 0.05; 0.0785 -> 0.00005; 8.3516 -> 0.00005; 100.0 -> 0.05
    expected = {25.06: 0.005, 16.0: 0.05, 0.0785: 0.00005, 8.3516: 0.00005, 100.0: 0.05}
    for published, half in expected.items():
        assert printed_half_unit(published) == pytest.approx(half)


def test_contextual_protocol_other_than_the_official_is_a_setting_difference(tmp_path: Path):
    # Validation run of LLaVA-1.5-13B (published 16.0 on the 100 validation instructions), 18.0 in [10, 26].
    uncertainty = {"acceptance_rate": {"estimate": 18.0, "stderr": 4.0, "low": 10.0, "high": 26.0,
                                       "method": "bootstrap", "unit": "item", "n_units": 100}}  # fmt: skip
    output = crafted_run(
        tmp_path / "out", "contextual", "contextual", {"acceptance_rate": 18.0}, {"uncertainty": uncertainty},
        model_args="pretrained=llava-hf/llava-1.5-13b-hf",
        judge={"kind": "openai", "model": "gpt-4", "repeats": 1, "task": "contextual"},
    )  # fmt: skip
    [run] = load_runs([output])
    report = run.reports["contextual"]
    report["provenance"]["settings"] = {"kind": "judged", "score_options": {"protocol": "default"}}
    verdict = verdict_for_report(report)
    assert verdict.published_row.values["acceptance_rate"] == 16.0 and verdict.metrics[0].within_sampling
    assert verdict.summary == "within sampling, setting differs"
    assert verdict.setting_differences[0].startswith("protocol: default, not the official scripts'")
    report["provenance"]["settings"]["score_options"]["protocol"] = "official"
    assert verdict_for_report(report).summary == "agrees"


def test_an_interval_around_another_number_is_not_used(tmp_path: Path):
    # qAcc 46.94 but its uncertainty record is around 0.4694 (a fraction): [0.40, 0.50] would call the
    # published 10.55 "outside"; the verdict refuses it, as the overview does.
    blocks = {"qAcc": (46.94, 0.40, 0.50), "fAcc": (25.0, 20.0, 30.0), "aAcc": (45.0, 40.0, 50.0)}
    report = _crafted_hallusionbench(tmp_path, "hallusionbench", blocks)
    report["details"]["uncertainty"]["qAcc"]["estimate"] = 0.4694
    item = verdict_for_report(report).metrics[0]
    assert item.within_sampling is None and (item.low, item.high) == (None, None)
    assert "around 0.4694, not its value 46.94" in item.why


def test_a_judged_benchmark_without_a_recorded_judge_is_not_a_reproduction(tmp_path: Path):
    # An older (or hand-made) report of the full task with no judge record: the judge is unknown.
    within = {"qAcc": (12.5, 0.0, 37.5), "fAcc": (25.0, 10.0, 40.0), "aAcc": (45.0, 40.0, 50.0)}
    report = _crafted_hallusionbench(tmp_path, "hallusionbench", within)
    report["provenance"]["settings"] = {"score_options": {"verdict_parse": "official"}}
    assert report["provenance"]["judge"] is None
    verdict = verdict_for_report(report)
    assert verdict.setting_differences == [
        "judge: not recorded in the run's report; the published value: GPT-4 (the paper's GPT-4-assisted "
        "evaluation, 'GPT Eval')"
    ]
    assert verdict.summary == "within sampling, setting differs"


def test_vqdv1_default_protocol_is_not_the_published_metric(tmp_path: Path):
    # LLaVA-1.5-7B's published micro F1 25.06 is the official script's mean per-query F1; a default-protocol
    # run's micro_f1 (26.0 in [20, 32]) is another definition: within sampling, setting differs.
    uncertainty = {"micro_f1": {"estimate": 26.0, "stderr": 3.0, "low": 20.0, "high": 32.0,
                                "method": "bootstrap", "unit": "query", "n_units": 200}}  # fmt: skip
    output = crafted_run(
        tmp_path / "out", "vqdv1", "vqdv1", {"micro_f1": 26.0}, {"uncertainty": uncertainty},
        model_args="pretrained=llava-hf/llava-1.5-7b-hf",
    )  # fmt: skip
    [run] = load_runs([output])
    report = run.reports["vqdv1"]
    report["provenance"]["settings"] = {"prompt_override": None, "iou_threshold": 0.5, "score_options": {}}
    verdict = verdict_for_report(report)
    assert verdict.published_row.values == {"micro_f1": 25.06}
    assert verdict.summary == "within sampling, setting differs"
    assert any(reason.startswith("protocol: default: micro_f1") for reason in verdict.setting_differences)
    report["provenance"]["settings"]["score_options"] = {"protocol": "official"}
    assert not any(r.startswith("protocol:") for r in verdict_for_report(report).setting_differences)


def test_vrb_protocol_and_profile_other_than_the_papers_are_setting_differences():
    from lmms_eval_tasks.tasks.vrb.published import setting_reasons

    assert (
        setting_reasons({"profile": "vrb", "protocol": "paper", "score_options": {"protocol": "paper"}}) == []
    )
    assert setting_reasons({"profile": "vrb_official", "score_options": {}}) == []
    assert setting_reasons({"profile": "imagenet_c", "score_options": {"protocol": "official"}}) == [
        "protocol: official, not the paper's VQA accuracy (Eq. 2, protocol=paper)",
        "corruption profile: imagenet_c, not the official generator's (vrb, vrb_official)",
    ]


@pytest.mark.slow  # reads the session's one tiny-LLaVA launcher run (conftest tiny_llava_card_run)
def test_tiny_llava_run_registered_as_a_published_model(tiny_llava_card_run: tuple[Path, str], capsys):
    """The real tiny random LLaVA (served as ``--model llava``, --limit 4) on the HallusionBench sample judged
    by the rule judge, registered as LLaVA-1.5-13B with ``report --published-as``: the verdict's numbers are
    recomputed here from the logged per-question verdicts, and its reasons name judge, limit and sample."""
    output, _ = tiny_llava_card_run
    task = "hallusionbench_offline_sample"
    code = cli_main(["report", str(output), "--out", str(output.parent / "report"), "--published-as",
                     "LLaVA-1.5-13B", "--json"])  # fmt: skip
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    [verdict] = [v for run in printed["runs"] for v in run["reproduction"] if v["task"] == task]
    assert verdict["published_model"] == "LLaVA-1.5-13B"
    assert verdict["matched_by"].startswith("--published-as LLaVA-1.5-13B (the run's checkpoint: ")

    # By hand from the logged records (one verdict per question, rule judge): aAcc = correct questions / all;
    # fAcc = figures whose every question is correct / figures; qAcc = questions correct on every figure /
    # questions. --limit 4 keeps the first 4 records: 2 figure sets (illusion, math) of 2 figures each.
    records = [
        json.loads(line)
        for line in next(output.rglob(f"lmms_eval_tasks/*/{task}_samples.jsonl")).read_text().splitlines()
    ]
    assert len(records) == 4 and all(len(record["correct"]) == 1 for record in records)
    correct = [record["correct"][0] for record in records]
    figures: dict[tuple, list[int]] = {}
    questions: dict[tuple, list[int]] = {}
    for record, ok in zip(records, correct, strict=True):
        group = (record["category"], record["subcategory"], record["set_id"])
        figures.setdefault((*group, record["figure_id"]), []).append(ok)
        questions.setdefault((*group, record["question_id"]), []).append(ok)
    assert (len(figures), len(questions)) == (4, 2)  # 4 figures, 2 questions asked on 2 figures each
    by_hand = {
        "aAcc": 100 * sum(correct) / 4,
        "fAcc": 100 * sum(all(oks) for oks in figures.values()) / 4,
        "qAcc": 100 * sum(all(oks) for oks in questions.values()) / 2,
    }
    # Published (README leaderboard, GPT Eval) LLaVA-1.5-13B: qAcc 10.55, fAcc 24.86, aAcc 46.94.
    published = {"qAcc": 10.55, "fAcc": 24.86, "aAcc": 46.94}
    by_metric = {item["metric"]: item for item in verdict["metrics"]}
    assert list(by_metric) == ["qAcc", "fAcc", "aAcc"]
    for metric, item in by_metric.items():
        assert item["published"] == published[metric]
        assert item["value"] == pytest.approx(by_hand[metric])
        assert item["difference"] == pytest.approx(by_hand[metric] - published[metric])  # e.g. 0 - 10.55
        if item["high"] > item["low"]:  # the rule: published within [low - half unit, high + half unit]
            assert item["within_sampling"] == (
                item["low"] - 0.005 <= published[metric] <= item["high"] + 0.005
            )
        else:  # 2 figure groups that all score alike: zero width, no sampling error estimated, unless equal
            assert item["within_sampling"] is (
                True if abs(by_hand[metric] - published[metric]) <= 0.005 else None
            )
    answers = [item["within_sampling"] for item in by_metric.values()]
    expected = (
        "differs"
        if False in answers
        else "cannot tell"
        if None in answers
        else "within sampling, setting differs"
    )
    assert verdict["summary"] == expected
    reasons = verdict["reasons"]
    assert "judge: the offline rule-based yes/no judge, not the paper's GPT-4" in reasons
    assert any(r.startswith("judge: rule-based (rule); the published value: GPT-4") for r in reasons)
    assert "subset: --limit 4 (the published value is over the whole question set)" in reasons
    assert "sample data: the run scored the bundled sample, not the benchmark's dataset" in reasons
    assert any(r.startswith("model substitution: ") for r in reasons)  # --model llava served by transformers
    assert set(verdict["setting_differences"]) <= set(reasons) and len(verdict["setting_differences"]) >= 4


def test_fewer_judge_repeats_and_model_changing_arguments_are_setting_differences(tmp_path: Path):
    # The faithful full run (paper's judge model name, 3 repeats, official reading) agrees; the same run with
    # 1 judge repeat (the paper's GPT-4 evaluation asks 3 times per question) is a setting difference.
    within = {"qAcc": (12.5, 0.0, 37.5), "fAcc": (25.0, 10.0, 40.0), "aAcc": (45.0, 40.0, 50.0)}
    gpt4 = {"kind": "openai", "model": "gpt-4", "repeats": 3, "task": "hallusionbench"}
    report = _crafted_hallusionbench(tmp_path, "hallusionbench", within, judge=gpt4)
    report["provenance"]["settings"] = {"variant": "official", "no_verdict": "official",
                                        "score_options": {"verdict_parse": "official"}}  # fmt: skip
    assert verdict_for_report(report).summary == "agrees"
    report["provenance"]["judge"]["repeats"] = 1
    verdict = verdict_for_report(report)
    assert verdict.setting_differences == ["judge repeats: 1, fewer than the paper's protocol's 3 per item"]
    assert verdict.summary == "within sampling, setting differs"
    report["provenance"]["judge"] = {"kind": "rule", "model": "rule-based", "repeats": 1}  # deterministic
    assert not any(r.startswith("judge repeats") for r in verdict_for_report(report).reasons)
    report["provenance"]["judge"] = gpt4
    # Model arguments that change the model: quantization, a dtype other than LLaVA's float16.
    base = "pretrained=liuhaotian/llava-v1.5-13b"
    for extra, expected in (
        (",load_in_4bit=True", ["model quantized: load_in_4bit=True (the published model ran unquantized)"]),
        (",load_in_8bit=true", ["model quantized: load_in_8bit=true (the published model ran unquantized)"]),
        (",dtype=bfloat16", ["model dtype: dtype=bfloat16, not the published model's float16"]),
        (",torch_dtype=float32", ["model dtype: torch_dtype=float32, not the published model's float16"]),
        (",dtype=float16", []), (",torch_dtype=fp16", []), (",dtype=auto", []), (",load_in_4bit=False", []),
    ):  # fmt: skip
        report["provenance"]["model_args"] = base + extra
        assert verdict_for_report(report).setting_differences == expected, extra
    # A model whose dtype is not recorded (registered by name): a dtype is no known difference.
    assert verdict_for_report(report, "GPT-4V").setting_differences == []
    report["provenance"]["model_args"] = base + ",load_in_4bit=True"
    assert verdict_for_report(report, "GPT-4V").setting_differences == [
        "model quantized: load_in_4bit=True (the published model ran unquantized)"
    ]
