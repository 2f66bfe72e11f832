"""`--predict_only` then `score`: a run that generates here (no judge) leaves the pack's records where a
normal run leaves them; `lmms-eval-tasks score` completes them later, with the judge, to the normal run's
numbers. The launcher's judge check lets a --predict_only run of a judged task through."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmms_eval_tasks.cli import main as cli_main
from lmms_eval_tasks.reporting.schema import read_report
from tests.fake_openai import FakeOpenAIServer, isolate_judge_env, stable_fraction
from tests.helpers import offline_environment, run_launcher

TASKS = ("contextual_sample", "dare_sample_single_gen_p1")  # judged by an LLM judge; scored by rules
GROUP = "dare_sample_log"  # a group scored over its members' records (std over prompts): its own report


def fake_judge(prompt: str) -> str:
    return f"Judgement: {'Yes' if stable_fraction('v' + prompt) < 0.5 else 'No'}"


def launch(output: Path, *extra: str, **environment: str) -> None:
    completed = run_launcher(
        "--model", "random_guess", "--model_args", "seed=0", "--seed", "0", "--tasks",
        ",".join((*TASKS, GROUP)), "--output_path", str(output), "--log_samples", *extra,
        environment=offline_environment(**environment),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]


@pytest.mark.slow  # two launcher runs
def test_predict_only_then_score_gives_the_numbers_of_one_normal_run(tmp_path, monkeypatch, capsys):
    with FakeOpenAIServer(fake_judge) as server:
        judge = {
            "OPENAI_API_URL": server.base_url, "OPENAI_API_KEY": "test-key", "LMMS_EVAL_TASKS_JUDGE": "auto",
        }  # fmt: skip
        launch(tmp_path / "normal", LMMS_EVAL_TASKS_JUDGE_CACHE=str(tmp_path / "cache_a.sqlite"), **judge)
        judged_in_the_run = server.call_count()
        normal_report = next((tmp_path / "normal").rglob("lmms_eval_tasks/2*/contextual_sample_report.json"))
        probes = len(read_report(normal_report)["details"]["judging"]["self_test"]["probes"])
        assert judged_in_the_run == 10 + probes  # 10 items judged, then the judge self-test's probes
        # generate only, with no judge configured: nothing is judged
        launch(tmp_path / "predicted", "--predict_only", LMMS_EVAL_TASKS_JUDGE="")
        assert server.call_count() == judged_in_the_run
        run_folder = next((tmp_path / "predicted").rglob("lmms_eval_tasks/2*"))
        normal_folder = next((tmp_path / "normal").rglob("lmms_eval_tasks/2*"))
        reported = sorted(path.name[: -len("_report.json")] for path in normal_folder.glob("*_report.json"))
        assert GROUP in reported  # the group's own report, as a normal run writes it
        assert sorted(path.name for path in run_folder.iterdir()) == sorted(
            [f"{task}_samples.jsonl" for task in reported] + [f"{task}_pending.json" for task in reported]
        )
        assert cli_main(["report", str(tmp_path / "predicted"), "--out", str(tmp_path / "r0")]) == 2
        assert "generated with --predict_only, not scored" in capsys.readouterr().err
        # score elsewhere, with the judge: the normal run's numbers
        isolate_judge_env(monkeypatch, tmp_path / "pack_cache")
        monkeypatch.delenv("LMMS_EVAL_TASKS_JUDGE_SELF_TEST")  # self-tested, as in the normal run
        for name, value in {**judge, "LMMS_EVAL_TASKS_JUDGE_CACHE": str(tmp_path / "cache_b.sqlite")}.items():
            monkeypatch.setenv(name, value)
        for task in reported:
            benchmark = "contextual" if task.startswith("contextual") else "dare"
            assert cli_main(["score", benchmark, str(run_folder / f"{task}_samples.jsonl")]) == 0
        assert server.call_count() == 2 * judged_in_the_run  # judged now, not read from the run's cache
    for task in reported:
        normal = read_report(next((tmp_path / "normal").rglob(f"lmms_eval_tasks/2*/{task}_report.json")))
        later = read_report(run_folder / f"{task}_report.json")
        assert later["metrics"] == normal["metrics"], task
        for key in ("datasets", "host_patches", "deviations"):  # known where it was generated only
            assert later["provenance"][key] == normal["provenance"][key], (task, key)
        judges = [{**(found["provenance"].get("judge") or {}), "cache_path": ""} for found in (normal, later)]
        assert judges[0] == judges[1], task  # the same judge (each run its own cache file)
    assert not list(run_folder.glob("*_pending.json"))
    assert cli_main(["report", str(tmp_path / "predicted"), "--out", str(tmp_path / "r1")]) == 0


def test_the_launcher_asks_no_judge_of_a_predict_only_run(monkeypatch, tmp_path):
    from lmms_eval_tasks.host import datasets_cache, launcher

    isolate_judge_env(monkeypatch, tmp_path)
    monkeypatch.setattr(datasets_cache, "missing_dataset_line", lambda tasks, **_: None)  # not cached
    said = launcher.check_tasks(["--tasks", "hallusionbench"])
    assert said.startswith("lmms_eval: hallusionbench is scored")
    for flag in ("--predict_only", "-x"):
        assert launcher.check_tasks(["--tasks", "hallusionbench", flag]) is None
