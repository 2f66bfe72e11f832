"""Long runs on a model server, end to end: the real launcher and host `openai` client over HTTP to a local
fake vision server (tests/fake_openai.py) that is down, fails 30% of requests, or is preempted mid-run.

A failed request is never an answer (exit non-zero, no metric, not cached); a run killed with kill -9 during
generation or judging and started again with the same command asks only for what it had not answered and
gives the numbers of an uninterrupted run; the judge is refused when it would be the model under test.
"""

from __future__ import annotations

import json
import math
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer, Fault, always_fail, stable_fraction
from helpers import offline_environment, results_json, run_launcher, start_launcher

from lmms_eval_tasks.host.termination import TERMINATED_EXIT

pytestmark = pytest.mark.slow

VRB_TASKS = ("vrb_sample_clean", "vrb_sample_brightness_s1", "vrb_sample_defocus_blur_s1")  # 3 x 12 requests
CHECKPOINT = 3  # LMMS_CACHE_CHECKPOINT_INTERVAL in these tests: the bound on answers a kill may lose
# Where failing requests are the subject (not the bound a kill may lose): the `openai` client retries a
# refused connection or a 500 twice after its own backoff (~1.4 s a request; the host's model_args do not
# reach it), and the pack hands the model the cache misses one checkpoint slice at a time, so slices of 3
# waited that backoff 9-12 times a run (a down server: 17 s). Slices of 12, 12 requests in flight: 3 waits
# a run, and still a store after each slice.
FAILURE_SLICE = 12


def question_of(prompt: str) -> str:
    """The text part of a recorded chat prompt (the fake server records multimodal content as JSON)."""
    try:
        content = json.loads(prompt)
    except ValueError:
        return prompt
    return " ".join(part.get("text", "") for part in content if isinstance(part, dict))


def vision_reply(prompt: str) -> str:
    """A deterministic stand-in model: right on some questions, wrong on others (non-trivial accuracy)."""
    question = question_of(prompt)
    if "How many" in question:
        return "2"
    if "What color" in question:
        return "red"
    return "yes"


def model_arguments(server_url: str, concurrent: int = 4) -> list[str]:
    return [
        "--model",
        "openai",
        "--model_args",
        f"base_url={server_url},api_key=test-key,model_version=fake-vlm,max_retries=1,retry_backoff_s=0,"
        f"num_concurrent={concurrent}",
    ]


def environment(tmp_path: Path, checkpoint: int = CHECKPOINT, **extra: str) -> dict[str, str]:
    return offline_environment(
        LMMS_CACHE_CHECKPOINT_INTERVAL=str(checkpoint),
        LMMS_EVAL_TASKS_JUDGE_CACHE=str(tmp_path / "judge_cache.sqlite"),
        **extra,
    )


def vrb_command(server_url: str, output: Path, cache: Path | None, concurrent: int = 4) -> list[str]:
    command = [*model_arguments(server_url, concurrent), "--tasks", ",".join(VRB_TASKS)]
    command += ["--output_path", str(output)]
    return command + (["--use_cache", str(cache)] if cache is not None else [])


def accuracies(output: Path, tasks: tuple[str, ...] = VRB_TASKS, metric: str = "accuracy") -> dict[str, Any]:
    results = results_json(output)["results"]
    return {task: results[task][f"{metric},none"] for task in tasks}


@pytest.fixture(scope="module")
def reference_vrb(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The numbers of an uninterrupted run with a healthy server (no cache)."""
    folder = tmp_path_factory.mktemp("reference")
    with FakeOpenAIServer(vision_reply) as server:
        completed = run_launcher(
            *vrb_command(server.base_url, folder / "out", None), environment=environment(folder)
        )
        calls = server.call_count()
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert calls == 12 * len(VRB_TASKS)
    numbers = accuracies(folder / "out")
    assert all(isinstance(value, float) and 0 < value < 1 for value in numbers.values()), numbers
    return numbers


def free_port() -> int:
    """A port for a test's fake server: a rerun is "the same command" only with the same base_url (the host
    keys its response cache by the model's arguments), so a restarted server listens on the same port."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cached_responses(cache: Path) -> list[str]:
    """Every response stored in the host's response cache folder (root and per-run stores)."""
    import sqlite3

    responses = []
    for database in cache.rglob("*.db"):
        with sqlite3.connect(database) as connection:
            responses += [row[0] for row in connection.execute("SELECT response FROM responses")]
    return responses


def test_a_server_that_is_down_fails_the_run_and_caches_nothing(tmp_path):
    with FakeOpenAIServer() as probe:
        down_url = probe.base_url  # a port that nothing serves once the server has stopped
    completed = run_launcher(
        *vrb_command(down_url, tmp_path / "out", tmp_path / "cache", FAILURE_SLICE),
        environment=environment(tmp_path, FAILURE_SLICE),
    )
    assert completed.returncode == 2  # the pre-flight: before the first document
    last = completed.stderr.strip().splitlines()[-1]
    assert last.startswith(f"lmms_eval: the model server {down_url} does not answer (ConnectError"), last
    assert "--model_args base_url" in last
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("*.json"))  # no run
    assert cached_responses(tmp_path / "cache") == []  # and the cache keeps no failure as an answer


def test_a_hung_server_fails_the_run_after_a_bounded_number_of_attempts_naming_the_timeout(tmp_path):
    """The defaults but ``timeout=3`` (5 attempts 1 s apart): one request's bound (19 s) of nothing but
    timeouts, new requests' included, opens the breaker however few requests are in flight (answers stored
    every 3 here: 3 in flight). Before, 3 x 16 failed attempts did: 48 calls (benchmarks/server_hung.py)."""
    with FakeOpenAIServer(vision_reply, faults=lambda call: Fault("timeout", sleep=120)) as server:
        arguments = f"base_url={server.base_url},api_key=test-key,model_version=fake-vlm,timeout=3"
        command = vrb_command(server.base_url, tmp_path / "out", tmp_path / "cache")
        command[command.index("--model_args") + 1] = arguments
        completed = run_launcher(*command, environment=environment(tmp_path))
        calls, url = server.call_count(), server.base_url
    assert completed.returncode == 1
    lines = completed.stderr.strip().splitlines()
    bound = f"model server {url}: each attempt waits at most 3 s (--model_args timeout), 5 attempts 1 s apart"
    stops = "fails after at most 19 s; the run stops after 16 failed requests in a row, 48 failed attempts"
    stops += " or 19 s of only timeouts, new requests' too"
    assert any(bound in line and stops in line for line in lines), lines[-20:]
    stopped = f"evaluation stopped: the model server {url} answered nothing for 19 s, the longest a request "
    assert lines[-1].startswith(f"lmms_eval: {stopped}may take: every attempt timed out after 3 s (timeout)")
    assert "Request timed out" in lines[-1] and "rerun the same command" in lines[-1]
    assert 3 * 5 + 3 < calls <= 3 * 5 + 3 * 2  # the first slice's 3 requests, 5 attempts each, the next 3
    # once each, and a one-token probe (unanswered) for each of those (or fewer, on seeing the breaker open)


@pytest.mark.parametrize("model", ["openai", "openai_pipelined"])
def test_a_server_that_dies_half_way_stops_the_run_and_the_rerun_asks_only_what_is_missing(
    tmp_path, reference_vrb, model
):
    cache, output, port = tmp_path / "cache", tmp_path / "out", free_port()
    dead = {"from": 14}  # the server fails every request from its 15th on: in the second slice of 12

    def plan(call):
        return "server_error" if call.index >= dead["from"] else None

    run_environment = environment(tmp_path, FAILURE_SLICE, LMMS_EVAL_TASKS_SERVER_BREAKER="4")
    command = vrb_command("URL", output, cache)
    command[command.index("openai")] = model
    with FakeOpenAIServer(vision_reply, faults=plan, port=port) as server:
        command[command.index("--model_args") + 1] = model_arguments(server.base_url)[-1]
        first = run_launcher(*command, environment=run_environment)
        answered = {call.prompt for call in server.calls if not call.fault}
        calls = server.call_count()
    assert first.returncode == 1
    assert "failed 4 requests in a row" in first.stderr.strip().splitlines()[-1]
    sending = 4 if model == "openai" else 4 + (os.cpu_count() or 1)  # openai_pipelined: + payload_workers
    assert len(answered) == 14 and calls <= 14 + 4 + sending  # stopped early: not 36 requests, each failing
    with FakeOpenAIServer(vision_reply, port=port) as server:
        rerun = run_launcher(*command, environment=run_environment)
        asked = server.prompts()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert len(asked) == 36 - 14  # the 2 answers of the slice the server died in were kept too
    assert set(asked).isdisjoint(answered) and len(set(asked)) == len(asked)
    assert accuracies(output) == reference_vrb


def test_answers_cut_at_the_token_limit_are_counted_and_warned_naming_max_new_tokens(tmp_path, reference_vrb):
    def plan(call):
        return "cut" if stable_fraction(call.prompt) < 0.1 else None

    with FakeOpenAIServer(vision_reply, faults=plan) as server:
        completed = run_launcher(
            *vrb_command(server.base_url, tmp_path / "out", tmp_path / "cache"),
            environment=environment(tmp_path),
        )
        cut_calls = sum(1 for call in server.calls if call.fault)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert 0 < cut_calls < 36
    assert accuracies(tmp_path / "out") == reference_vrb  # answers all the same, scored as given
    lines = completed.stderr.strip().splitlines()
    default = "each attempt waits at most 300 s (default 300 s; --model_args timeout=S), 1 attempts"
    assert any(default in line for line in lines)  # no timeout given: the default bound, printed
    warnings = [line for line in lines if "answers were cut at the token limit" in line]
    counted = sum(int(line.split(": ", 3)[-1].split(" of ")[0]) for line in warnings)
    assert counted == cut_calls and all("max_new_tokens" in line for line in warnings), warnings
    assert "answers cut at max_new_tokens]" in completed.stdout  # the host's table names them
    deviations = [
        deviation
        for report in (tmp_path / "out").rglob("*_report.json")
        for deviation in json.loads(report.read_text(encoding="utf-8"))["provenance"]["deviations"]
    ]
    assert sum(int(item.split(" of ")[0]) for item in deviations if "token limit" in item) == cut_calls


def test_sigterm_ends_a_run_whose_request_hangs_within_thirty_seconds(tmp_path):
    """The process ends its grace after SIGTERM (20 s by default, under a scheduler's 30 s; 2 s here)."""
    log = tmp_path / "run.log"
    with FakeOpenAIServer(vision_reply, faults=lambda call: Fault("timeout", sleep=300)) as server:
        process = start_launcher(
            *vrb_command(server.base_url, tmp_path / "out", tmp_path / "cache"),
            log=log,
            environment=environment(tmp_path, LMMS_EVAL_TASKS_SIGTERM_GRACE="2"),
        )
        deadline = time.monotonic() + 600
        while server.call_count() < 1 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, log.read_text()[-3000:]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == TERMINATED_EXIT, log.read_text()[-3000:]
    assert "terminated by SIGTERM; still waiting 2 s later" in log.read_text()  # ended by the grace


def test_a_sigterm_grace_that_is_not_a_whole_number_of_seconds_is_refused_before_the_run(tmp_path):
    for grace, problem in (("soon", "'soon': expected an integer"), ("-1", "-1: must be >= 0")):
        completed = run_launcher(
            *vrb_command("http://127.0.0.1:9/v1", tmp_path / "out", None),
            environment=environment(tmp_path, LMMS_EVAL_TASKS_SIGTERM_GRACE=grace),
        )
        assert completed.returncode == 2
        last_line = completed.stderr.strip().splitlines()[-1]
        assert last_line == f"lmms_eval: LMMS_EVAL_TASKS_SIGTERM_GRACE={problem}"


def test_replies_without_text_are_failed_generations_not_empty_answers(tmp_path):
    """A reply whose content is null (a reasoning model that spent its tokens thinking, a filtered reply) is
    no answer: the host hands process_results "" for it, which VRB would score as a wrong answer."""

    def plan(call):
        return "empty_content" if stable_fraction(call.prompt) < 0.5 else None

    cache = tmp_path / "cache"
    with FakeOpenAIServer(vision_reply, faults=plan) as server:
        completed = run_launcher(
            *vrb_command(server.base_url, tmp_path / "out", cache), environment=environment(tmp_path)
        )
        no_text = sum(1 for call in server.calls if call.fault)
    assert 0 < no_text < 36
    assert completed.returncode != 0
    last = completed.stderr.strip().splitlines()[-1]
    assert f"{no_text} failed generation(s)" in last and f"only for these {no_text}" in last, last
    for value in accuracies(tmp_path / "out").values():
        assert value is None or (isinstance(value, float) and math.isnan(value)) or value == "N/A", value
    assert not {"null", '""'} & set(cached_responses(cache))  # the cache keeps no missing text as an answer


def test_thirty_percent_failures_only_those_are_asked_again(tmp_path, reference_vrb):
    failing = always_fail({"__none__"})

    def plan(call):
        return "server_error" if stable_fraction(call.prompt) < 0.3 else failing(call)

    cache, output, port = tmp_path / "cache", tmp_path / "out", free_port()
    with FakeOpenAIServer(vision_reply, faults=plan, port=port) as server:
        first = run_launcher(
            *vrb_command(server.base_url, output, cache, FAILURE_SLICE),
            environment=environment(tmp_path, FAILURE_SLICE),
        )
        failed = {call.prompt for call in server.calls if call.fault}
        answered = {call.prompt for call in server.calls if not call.fault}
    assert first.returncode != 0
    assert 0 < len(failed) < 36 and len(failed) + len(answered) == 36
    assert f"asks the server only for these {len(failed)}" in first.stderr.strip().splitlines()[-1]
    assert not any("LMMS_EVAL_REQUEST_FAILED" in response for response in cached_responses(cache))

    with FakeOpenAIServer(vision_reply, port=port) as server:
        rerun_output = (
            tmp_path / "rerun"
        )  # the same command but for the output folder (one results file each)
        second = run_launcher(  # the same command: the host keys its cache by the model's arguments
            *vrb_command(server.base_url, rerun_output, cache, FAILURE_SLICE),
            environment=environment(tmp_path, FAILURE_SLICE),
        )
        asked = server.prompts()
    assert second.returncode == 0, second.stderr[-3000:]
    assert sorted(asked) == sorted(failed)  # only the failed ones, each once
    assert accuracies(rerun_output) == reference_vrb


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
def test_a_run_killed_during_generation_resumes_with_the_same_command(tmp_path, reference_vrb, stop):
    cache, output, port = tmp_path / "cache", tmp_path / "out", free_port()
    total = 12 * len(VRB_TASKS)
    log = tmp_path / "killed_run.log"  # a file: an unread pipe would block the run when full
    with FakeOpenAIServer(vision_reply, latency=0.15, port=port) as server:
        command = vrb_command(server.base_url, output, cache, 1)
        process = start_launcher(*command, log=log, environment=environment(tmp_path))
        deadline = time.monotonic() + 600
        while server.call_count() < total // 2 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process.poll() is None, log.read_text()[-3000:]
        process.send_signal(stop)
        ended = process.wait(timeout=60)  # the launcher's process ended by the signal, mid-generation
        expected = TERMINATED_EXIT if stop == signal.SIGTERM else -signal.SIGKILL
        assert ended == expected, log.read_text()[-3000:]
        answered_before = len({call.prompt for call in server.calls})
    assert total // 2 <= answered_before < total  # killed about half way through one generation phase

    with FakeOpenAIServer(vision_reply, port=port) as server:
        rerun = run_launcher(
            *vrb_command(server.base_url, output, cache, 1), environment=environment(tmp_path)
        )
        asked = server.call_count()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    unanswered = total - answered_before
    assert unanswered <= asked <= unanswered + CHECKPOINT + 1, (asked, answered_before)  # +1: in flight
    assert accuracies(output) == reference_vrb


HALLUSIONBENCH = ("hallusionbench_sample",)


def yes_no_reply(prompt: str) -> str:
    return "Yes, it is." if stable_fraction(question_of(prompt)) < 0.6 else "No."


def fake_judge(prompt: str) -> str:
    return "correct" if "Prediction answer: Yes" in prompt else "incorrect"


def hallusionbench_command(model_url: str, output: Path, cache: Path) -> list[str]:
    command = [*model_arguments(model_url), "--tasks", ",".join(HALLUSIONBENCH), "--output_path", str(output)]
    return [*command, "--use_cache", str(cache)]


def judged_environment(tmp_path: Path, judge_url: str) -> dict[str, str]:
    return environment(
        tmp_path,
        LMMS_EVAL_TASKS_JUDGE="openai",
        LMMS_EVAL_TASKS_JUDGE_BASE_URL=judge_url,
        LMMS_EVAL_TASKS_JUDGE_API_KEY="judge-key",
        LMMS_EVAL_TASKS_JUDGE_CONCURRENCY="1",
    )


def test_a_run_killed_during_judging_keeps_its_generations_and_judge_calls(tmp_path):
    reference = tmp_path / "reference"
    with FakeOpenAIServer(yes_no_reply) as model, FakeOpenAIServer(fake_judge) as judge:
        completed = run_launcher(
            *hallusionbench_command(model.base_url, reference / "out", reference / "cache"),
            environment=judged_environment(reference, judge.base_url),
        )
        judge_total, model_total = judge.call_count(), model.call_count()
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert judge_total > 4 and model_total == 29
    expected = accuracies(reference / "out", HALLUSIONBENCH, "aAcc")

    cache, output, model_port, judge_port = tmp_path / "cache", tmp_path / "out", free_port(), free_port()
    with (
        FakeOpenAIServer(yes_no_reply, port=model_port) as model,
        FakeOpenAIServer(fake_judge, latency=0.2, port=judge_port) as judge,
    ):
        process = start_launcher(
            *hallusionbench_command(model.base_url, output, cache),
            log=tmp_path / "killed_run.log",
            environment=judged_environment(tmp_path, judge.base_url),
        )
        deadline = time.monotonic() + 600
        while (
            judge.call_count() < judge_total // 2 and process.poll() is None and time.monotonic() < deadline
        ):
            time.sleep(0.02)
        assert process.poll() is None, (tmp_path / "killed_run.log").read_text()[-3000:]
        process.kill()
        assert process.wait(timeout=60) == -signal.SIGKILL  # the launcher's process died of the kill
        judged_before = judge.call_count()
    killed_runs = sorted(output.rglob("hallusionbench_sample_pending.json"))
    assert len(killed_runs) == 1  # the killed run's records await scoring

    with (
        FakeOpenAIServer(yes_no_reply, port=model_port) as model,
        FakeOpenAIServer(fake_judge, port=judge_port) as judge,
    ):
        rerun = run_launcher(
            *hallusionbench_command(model.base_url, output, cache),
            environment=judged_environment(tmp_path, judge.base_url),
        )
        model_calls, judge_calls = model.call_count(), judge.call_count()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert model_calls == 0  # every generation was kept
    assert judge_calls <= judge_total - judged_before + 1  # judge calls cached as they came (+1 in flight)
    assert accuracies(output, HALLUSIONBENCH, "aAcc") == expected
    assert not list(output.rglob("hallusionbench_sample_pending.json"))  # the killed run's state is cleared
    latest = json.loads(next(output.rglob("lmms_eval_tasks/latest.json")).read_text(encoding="utf-8"))
    reports = sorted(output.rglob("hallusionbench_sample_report.json"))
    assert latest["tasks"]["hallusionbench_sample"]["run_id"] == reports[-1].parent.name


@pytest.mark.parametrize("judge_host", ["127.0.0.1", "localhost"])
def test_the_judge_is_refused_when_it_is_the_model_under_test(tmp_path, judge_host):
    with FakeOpenAIServer(yes_no_reply) as server:
        judge_url = server.base_url.replace("127.0.0.1", judge_host)
        completed = run_launcher(
            *model_arguments(server.base_url),
            "--tasks",
            "hallusionbench_sample",
            "--output_path",
            str(tmp_path / "out"),
            environment=environment(
                tmp_path, LMMS_EVAL_TASKS_JUDGE="openai", OPENAI_API_BASE=judge_url, OPENAI_API_KEY="k"
            ),
        )
        calls = server.call_count()
    assert completed.returncode == 2
    assert calls == 0  # stopped before generation
    last = completed.stderr.strip().splitlines()[-1]
    assert last.startswith("lmms_eval: the judge of hallusionbench_sample would be the model under test")
    assert "LMMS_EVAL_TASKS_JUDGE_IS_MODEL=1" in last
