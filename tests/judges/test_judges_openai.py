"""The OpenAI-compatible judge against a local fake server, through the real ``openai`` client."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest
from fake_openai import (
    TRANSIENT_FAULTS,
    FakeOpenAIServer,
    Fault,
    always_fail,
    combine,
    fail_first_attempts,
    isolate_judge_env,
)

from lmms_eval_tasks.judges import JudgeRequest, get_judge, repeat_spread, replies_log
from lmms_eval_tasks.judges.circuit_breaker import parse_retry_after as _parse_retry_after
from lmms_eval_tasks.judges.openai_judge import OpenAIJudge

KEY = "sk-test-judges-0123456789abcdef"


def verdict_for(prompt: str) -> str:
    """The fake judge's reply: unique per prompt, so a borrowed verdict is always detectable."""
    return "verdict " + hashlib.sha256(prompt.encode()).hexdigest()[:12]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_judge_env(monkeypatch, tmp_path / "cache_root")


@pytest.fixture
def server():
    with FakeOpenAIServer(verdict_for) as running:
        yield running


def make_judge(server: FakeOpenAIServer, tmp_path: Path, **overrides) -> OpenAIJudge:
    settings = {"cache_path": tmp_path / "judge.sqlite", "backoff_base": 0.005, "timeout": 2.0}
    settings.update(overrides)
    judge = get_judge("openai", base_url=server.base_url, api_key=KEY, **settings)
    assert isinstance(judge, OpenAIJudge)
    return judge


def requests_for(count: int, tag: str = "item") -> list[JudgeRequest]:
    return [JudgeRequest(f"{tag} {index}: is the answer right?") for index in range(count)]


def test_replies_are_in_request_order_and_sent_with_pinned_deterministic_settings(server, tmp_path):
    judge = make_judge(server, tmp_path, model="gpt-4o-2024-11-20", max_tokens=77)
    requests = requests_for(30) + [JudgeRequest("with system", system="You are a strict grader.")]
    replies = judge.judge(requests)
    assert [row[0].text for row in replies] == [verdict_for(request.prompt) for request in requests]
    assert all(
        len(row) == 1 and row[0].repeat == 0 and not row[0].cached and row[0].error is None for row in replies
    )
    bodies = [call.body for call in server.calls]
    assert {body["model"] for body in bodies} == {"gpt-4o-2024-11-20"}
    assert {body["temperature"] for body in bodies} == {0.0}
    assert {body["max_tokens"] for body in bodies} == {77}
    system_call = next(call for call in server.calls if call.prompt == "with system")
    assert system_call.messages == [
        {"role": "system", "content": "You are a strict grader."},
        {"role": "user", "content": "with system"},
    ]
    assert all(call.headers["authorization"] == f"Bearer {KEY}" for call in server.calls)


def test_rerun_is_served_from_cache_with_zero_calls(server, tmp_path):
    requests = requests_for(20)
    first = make_judge(server, tmp_path).judge(requests)
    assert server.call_count() == 20
    server.reset()
    judge = make_judge(server, tmp_path)  # a new judge object: the cache is on disk
    second = judge.judge(requests)
    assert server.call_count() == 0
    assert [row[0].text for row in second] == [row[0].text for row in first]
    assert all(row[0].cached for row in second)
    usage = judge.usage()
    assert usage["calls"] == 0 and usage["cache_hits"] == 20 and usage["estimated_cost_usd"] == 0.0


def test_cache_key_covers_model_prompt_params_and_repeat(server, tmp_path):
    requests = requests_for(5)
    make_judge(server, tmp_path, model="judge-a").judge(requests)
    assert server.call_count() == 5
    # another judge model never hits judge-a's entries
    make_judge(server, tmp_path, model="judge-b").judge(requests)
    assert server.call_count() == 10
    # another model's predictions (different prompts) never hit these entries either
    make_judge(server, tmp_path, model="judge-a").judge(requests_for(5, tag="other model"))
    assert server.call_count() == 15
    # different generation parameters miss
    make_judge(server, tmp_path, model="judge-a", max_tokens=5).judge(requests)
    assert server.call_count() == 20
    # a different system message misses
    make_judge(server, tmp_path, model="judge-a").judge([JudgeRequest(requests[0].prompt, system="strict")])
    assert server.call_count() == 21
    # and the original setting is still fully cached
    replies = make_judge(server, tmp_path, model="judge-a").judge(requests)
    assert server.call_count() == 21 and all(row[0].cached for row in replies)


def test_repeats_are_separate_cached_calls_and_spread_helpers(server, tmp_path):
    judge = make_judge(server, tmp_path, repeats=3)
    assert judge.repeats == 3 and judge.describe()["repeats"] == 3
    replies = judge.judge(requests_for(4))
    assert server.call_count() == 12  # 4 items x 3 repeats
    assert [[reply.repeat for reply in row] for row in replies] == [[0, 1, 2]] * 4
    assert Counter(server.prompts()) == Counter({request.prompt: 3 for request in requests_for(4)})
    # more repeats later: only the new repeat indices are called
    server.reset()
    replies = judge.judge(requests_for(4), repeats=5)
    assert server.call_count() == 8
    assert [[reply.cached for reply in row] for row in replies] == [[True, True, True, False, False]] * 4
    log = replies_log(replies[0])
    assert log["judge_replies"] == [verdict_for(requests_for(4)[0].prompt)] * 5
    assert log["judge_cached"] == [True, True, True, False, False] and log["judge_unjudged_repeats"] == 0
    # accuracies 0.5, 0.75, 1.0: mean 0.75, sample variance ((-.25)^2 + 0 + .25^2) / 2 = 0.0625 -> std 0.25
    assert repeat_spread([0.5, 0.75, 1.0]) == {"n": 3, "mean": 0.75, "std": 0.25, "min": 0.5, "max": 1.0}
    assert repeat_spread([0.4])["std"] == 0.0


def test_thirty_percent_first_attempt_faults_every_item_gets_its_own_verdict_or_unjudged(
    tmp_path, warnings_logged
):
    requests = requests_for(150, tag="faulty")
    doomed = {requests[index].prompt for index in (3, 50, 97, 120)}
    plan = combine(
        always_fail(doomed, "server_error"),
        fail_first_attempts(0.3, TRANSIENT_FAULTS, retry_after="0.05", sleep=0.6),
    )
    with FakeOpenAIServer(verdict_for, faults=plan) as server:
        judge = make_judge(server, tmp_path, timeout=0.3, max_retries=3, repeats=2)
        replies = judge.judge(requests, desc="fault test")
        first_attempt_faults = Counter(call.fault for call in server.calls if call.attempt == 0)
    # the plan really hit about 30% of first attempts, with every fault kind
    faulted_first = sum(count for kind, count in first_attempt_faults.items() if kind is not None)
    assert 0.2 * 150 <= faulted_first - len(doomed) <= 0.4 * 150
    assert set(TRANSIENT_FAULTS) <= set(first_attempt_faults)
    for index, (request, row) in enumerate(zip(requests, replies, strict=True)):
        for repeat, reply in enumerate(row):
            assert reply.repeat == repeat
            if request.prompt in doomed:
                assert reply.text is None, f"item {index} should be unjudged"
                assert reply.error and "HTTP 500" in reply.error and "after 4 attempts" in reply.error
            else:
                assert reply.text == verdict_for(request.prompt), (
                    f"item {index} repeat {repeat} wrong verdict"
                )
                assert reply.error is None
    usage = judge.usage()
    assert usage["unjudged"] == 2 * len(doomed)
    assert usage["retries"] > 0 and usage["replies"] == 300
    assert any(
        "8 of 300 judge replies are UNJUDGED" in message and "fault test" in message
        for message in warnings_logged
    )


def test_retry_after_is_honoured(tmp_path):
    plan = lambda call: Fault("rate_limit", retry_after="0.7") if call.attempt == 0 else None  # noqa: E731
    with FakeOpenAIServer(verdict_for, faults=plan) as server:
        judge = make_judge(server, tmp_path, backoff_base=0.001)
        replies = judge.judge(requests_for(3))
        calls = list(server.calls)
    assert [row[0].text for row in replies] == [verdict_for(request.prompt) for request in requests_for(3)]
    for request in requests_for(3):
        attempts = [call for call in calls if call.prompt == request.prompt]
        assert [call.status for call in attempts] == [429, 200]
        # the backoff alone would wait ~1 ms; the server asked for 0.7 s
        assert attempts[1].time - attempts[0].time >= 0.7
    assert judge.usage()["retries"] == 3


def test_parse_retry_after_forms():
    assert _parse_retry_after({"retry-after": "2"}) == 2.0
    assert _parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert _parse_retry_after({"retry-after": "10000"}) == 300.0  # clipped
    assert _parse_retry_after({"retry-after": "soon"}) is None
    assert _parse_retry_after({}) is None
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 <= _parse_retry_after({"retry-after": future}) <= 31


def test_backoff_grows_exponentially_with_jitter(server, tmp_path):
    judge = make_judge(server, tmp_path, backoff_base=1.0, backoff_max=10.0)
    for attempt, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (6, 10.0)]:
        delays = [judge._backoff(attempt, None) for _ in range(50)]
        assert all(ceiling / 2 <= delay <= ceiling for delay in delays)
        assert len(set(delays)) > 1  # jittered
    assert judge._backoff(0, 5.0) >= 5.0


def test_non_retryable_errors_fail_fast_and_dead_endpoint_trips_the_breaker(tmp_path, warnings_logged):
    with FakeOpenAIServer(verdict_for, faults=lambda call: Fault("bad_request")) as server:
        judge = make_judge(server, tmp_path, circuit_breaker=5, concurrency=1)
        replies = judge.judge(requests_for(12))
        assert server.call_count() == 5  # one attempt each until 5 items failed in a row, then no calls
    errors = [row[0].error for row in replies]
    assert all(error.startswith("HTTP 400") for error in errors[:5])
    assert all(error.startswith("skipped: endpoint failing") for error in errors[5:])
    assert judge.usage()["unjudged"] == 12
    assert any("12 of 12 judge replies are UNJUDGED" in message for message in warnings_logged)


def test_two_items_that_time_out_in_a_row_do_not_stop_the_judging(tmp_path):
    """The model server's hung rule (one item's attempts of only timeouts, a new item's first too) opened the
    judge's breaker on two slow items in a row: at 4 workers and 30 % of prompts hanging, 155 of 200 items
    unjudged (before: 55), each left out of its metric. The judge keeps its count of failed items."""
    slow = {"item 0: is the answer right?", "item 1: is the answer right?"}
    with FakeOpenAIServer(verdict_for, faults=always_fail(slow, "timeout")) as server:
        judge = make_judge(server, tmp_path, circuit_breaker=5, concurrency=1, timeout=0.3, max_retries=1)
        replies = judge.judge(requests_for(6))
    assert [row[0].text is None for row in replies] == [True, True, False, False, False, False]


@pytest.mark.parametrize("kind", ["trickle", "trickle_headers"])
def test_a_reply_trickled_a_byte_at_a_time_ends_its_attempt_at_the_timeout(tmp_path, kind):
    """The SDK's timeout bounds each read, not the reply: a judge reply (or its headers) sent a byte at a time
    over 20 s was waited for whole, each attempt, whatever the timeout. Each attempt now ends ``timeout``
    after it was sent, and the item is unjudged, naming the timeout."""
    with FakeOpenAIServer(verdict_for, faults=lambda call: Fault(kind, sleep=20)) as server:
        judge = make_judge(server, tmp_path, timeout=1.0, max_retries=1, concurrency=1)
        started = time.monotonic()
        [[reply]] = judge.judge(requests_for(1))
        seconds = time.monotonic() - started
    assert reply.text is None and reply.error.startswith("timeout after 1 s"), reply.error
    assert server.call_count() == 2  # the first attempt and its one retry
    assert seconds < 10, seconds  # two attempts of 1 s and a backoff; the whole reply took 20 s an attempt


def test_a_trickled_reply_through_an_http_proxy_ends_at_the_timeout_too(tmp_path, monkeypatch):
    """With HTTP_PROXY set the SDK sends through the proxy's transport, which the deadline left out: a 1 s
    timeout waited the whole 8 s reply. (The fake server answers absolute-form requests: its own proxy.)"""
    with FakeOpenAIServer(verdict_for, faults=lambda call: Fault("trickle", sleep=8)) as server:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        judge = make_judge(server, tmp_path, timeout=1.0, max_retries=0, concurrency=1)
        started = time.monotonic()
        [[reply]] = judge.judge(requests_for(1))
        seconds = time.monotonic() - started
    assert server.calls[0].path.startswith("http://"), server.calls[0].path  # it went through the proxy
    assert reply.text is None and reply.error.startswith("timeout after 1 s"), reply.error
    assert seconds < 5, seconds


def test_connection_refused_ends_quickly(tmp_path):
    judge = get_judge(
        "openai",
        base_url="http://127.0.0.1:9/v1",
        api_key=KEY,
        cache_path=tmp_path / "c.sqlite",
        backoff_base=0.01,
        circuit_breaker=5,
    )
    replies = judge.judge(requests_for(100))
    assert all(row[0].text is None for row in replies)
    assert "Connection refused" in replies[0][0].error or "connection error" in replies[0][0].error
    assert judge.usage()["calls"] <= 3 * 5 + judge.concurrency


def test_concurrency_is_bounded_and_parallel(tmp_path):
    with FakeOpenAIServer(verdict_for, latency=0.1) as server:
        judge = make_judge(server, tmp_path, concurrency=4)
        replies = judge.judge(requests_for(16))
        # parallel (more than one request in flight at once) and bounded (never more than 4)
        assert server.max_in_flight == 4
    assert [row[0].text for row in replies] == [verdict_for(request.prompt) for request in requests_for(16)]


def test_identical_requests_in_one_batch_share_one_call(server, tmp_path):
    judge = make_judge(server, tmp_path)
    same = JudgeRequest("identical prompt")
    replies = judge.judge([same, JudgeRequest("other"), same])
    assert server.call_count() == 2
    assert replies[0][0].text == replies[2][0].text == verdict_for("identical prompt")


def test_usage_counts_tokens_and_estimates_cost(server, tmp_path):
    judge = make_judge(server, tmp_path, model="gpt-4o-2024-11-20")
    judge.judge([JudgeRequest("one two three four"), JudgeRequest("five six")])
    usage = judge.usage()
    # fake usage: prompt tokens = words in the prompt (4 + 2), completion = words in "verdict <hash>" (2 + 2)
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (6, 4)
    # gpt-4o-2024-11-20: $2.50 / 1M input, $10.00 / 1M output -> 6 * 2.5e-6 + 4 * 1e-5 = 5.5e-5
    assert usage["estimated_cost_usd"] == pytest.approx(0.000055)
    unknown = make_judge(server, tmp_path, model="my-local-llama")
    unknown.judge([JudgeRequest("x")])
    assert unknown.usage()["estimated_cost_usd"] is None


def test_served_model_is_recorded(tmp_path):
    with FakeOpenAIServer(verdict_for, model_suffix="-2024-08-06") as server:
        judge = make_judge(server, tmp_path, model="gpt-4o")
        judge.judge(requests_for(2))
    assert judge.describe()["served_models"] == ["gpt-4o-2024-08-06"]
    assert judge.describe()["system_fingerprints"] == ["fp_fake0001"]


def test_cache_file_is_sqlite_wal_and_stores_only_successes(tmp_path):
    doomed = {requests_for(4)[1].prompt}
    with FakeOpenAIServer(verdict_for, faults=always_fail(doomed, "server_error")) as server:
        judge = make_judge(server, tmp_path, max_retries=1)
        judge.judge(requests_for(4))
    connection = sqlite3.connect(tmp_path / "judge.sqlite")
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = connection.execute("SELECT reply FROM replies").fetchall()
    assert sorted(row[0] for row in rows) == sorted(
        verdict_for(request.prompt) for request in requests_for(4) if request.prompt not in doomed
    )


def test_bad_requests_raise_before_any_call(server, tmp_path):
    judge = make_judge(server, tmp_path)
    with pytest.raises(TypeError, match="request 1: expected JudgeRequest"):
        judge.judge([JudgeRequest("a"), "b"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="field 'prompt' must be a str"):
        judge.judge([JudgeRequest(None)])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="repeats must be a positive integer"):
        judge.judge([JudgeRequest("a")], repeats=0)
    assert judge.judge([]) == []
    assert server.call_count() == 0


def test_unusable_cache_file_degrades_to_memory_with_a_warning(server, tmp_path, warnings_logged):
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this is not a sqlite database" * 100)
    with make_judge(server, tmp_path, cache_path=broken) as judge:
        assert judge.cache_path is None
        replies = judge.judge(requests_for(3))
    assert [row[0].text for row in replies] == [verdict_for(request.prompt) for request in requests_for(3)]
    assert any("judge cache" in message and "unusable" in message for message in warnings_logged)
    assert broken.read_bytes() == b"this is not a sqlite database" * 100  # left for the user to inspect


@pytest.fixture
def python_sigint_handler():
    """Python's own SIGINT handler (KeyboardInterrupt) for the test: a process started in the background by a
    non-interactive shell inherits SIGINT as ignored, and Python then never installs it."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_stops_judging_promptly_and_keeps_finished_replies(tmp_path, python_sigint_handler):
    import os
    import signal
    import threading

    with FakeOpenAIServer(verdict_for, latency=0.1) as server:
        judge = make_judge(server, tmp_path, concurrency=2)
        judge.judge([JudgeRequest("warm up the client")])
        server.reset()
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            judge.judge(requests_for(100))  # 5 s of work at 2 x 100 ms
        deadline = time.monotonic() + 30  # a safety net, not a speed requirement
        while server.in_flight and time.monotonic() < deadline:  # the (at most two) in-flight calls end
            time.sleep(0.01)
        assert server.in_flight == 0
        calls_at_interrupt = server.call_count()
        assert calls_at_interrupt < 20
        server.reset()
        replies = make_judge(server, tmp_path).judge(requests_for(100))
    cached = sum(row[0].cached for row in replies)
    assert calls_at_interrupt - 2 <= cached <= calls_at_interrupt
    assert server.call_count() == 100 - cached
    assert [row[0].text for row in replies] == [verdict_for(request.prompt) for request in requests_for(100)]


def test_ctrl_c_wakes_jobs_sleeping_on_a_long_retry_after(tmp_path, python_sigint_handler):
    import os
    import signal
    import threading

    def plan(call):
        return Fault("rate_limit", retry_after="60") if call.prompt.startswith("item") else None

    with FakeOpenAIServer(verdict_for, faults=plan) as server:
        judge = make_judge(server, tmp_path, concurrency=2)
        judge.judge([JudgeRequest("warm up the client")])
        server.reset()
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            judge.judge(requests_for(10))
        deadline = time.monotonic() + 30  # far below the 60 s Retry-After the workers were sleeping on
        while any(thread.name.startswith("judge") for thread in threading.enumerate()):
            assert time.monotonic() < deadline, "judge worker threads still sleeping after Ctrl-C"
            time.sleep(0.02)
        assert server.call_count() == 2  # the first two attempts, then nothing during the 60 s wait


def test_a_rate_limit_burst_does_not_trip_the_circuit_breaker(tmp_path):
    """429s are the endpoint alive and asking to wait: items keep their retries instead of being skipped.

    The first 16 calls get 429 (Retry-After 0.01 s); with 4 workers and a breaker at 5 items (15 attempts)
    the burst alone exceeds the attempt threshold, yet every item must end with its own verdict.
    """
    import threading

    lock = threading.Lock()
    seen = [0]

    def plan(call):
        with lock:
            seen[0] += 1
            return Fault("rate_limit", retry_after="0.01") if seen[0] <= 16 else None

    with FakeOpenAIServer(verdict_for, faults=plan) as server:
        judge = make_judge(server, tmp_path, concurrency=4, circuit_breaker=5, max_retries=20)
        replies = judge.judge(requests_for(8))
        statuses = Counter(call.status for call in server.calls)
    assert statuses[429] == 16
    assert [row[0].text for row in replies] == [verdict_for(request.prompt) for request in requests_for(8)]
    assert judge.usage()["unjudged"] == 0


def test_exhausted_quota_is_not_retried(tmp_path):
    """OpenAI answers an exhausted quota with 429 insufficient_quota: waiting cannot help, fail at once."""
    with FakeOpenAIServer(verdict_for, faults=lambda call: Fault("insufficient_quota")) as server:
        judge = make_judge(server, tmp_path, concurrency=1, circuit_breaker=3)
        replies = judge.judge(requests_for(5))
        assert server.call_count() == 3  # one attempt per item until the breaker opens
    assert all(row[0].text is None for row in replies)
    assert all("HTTP 429" in row[0].error for row in replies[:3])
