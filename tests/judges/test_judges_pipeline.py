"""The judging pipeline: verdict matrix, unparseable and unjudged cells, usage per batch, the failure policy
(no judged item, unjudged share above the threshold), the whole-phase deadline and HTML pages."""

from __future__ import annotations

import base64
import io
import json
import time
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer, Fault, isolate_judge_env

from lmms_eval_tasks.judges import get_judge
from lmms_eval_tasks.judges.config import numeric_setting, total_timeout_seconds
from lmms_eval_tasks.judges.pipeline import (
    JudgeItem,
    JudgingFailed,
    LazyJudge,
    judge_items,
    protocol_repeats,
)

KEY = "sk-pipeline-" + "k" * 24


def parse_word(text: str) -> int | None:
    """A strict parser: "correct" -> 1, "incorrect" -> 0, anything else unreadable."""
    return {"correct": 1, "incorrect": 0}.get(text.strip().lower())


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    isolate_judge_env(monkeypatch, tmp_path / "cache_root")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_BACKOFF_BASE", "0.001")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_BACKOFF_MAX", "0.002")
    return monkeypatch


def openai_judge(server: FakeOpenAIServer, **overrides):
    return get_judge("openai", base_url=server.base_url, api_key=KEY, cache=False, **overrides)


def test_verdict_matrix_replies_reasons_usage_and_settings(env):
    replies = {"p0": "correct", "p1": "INCORRECT ", "p2": "no idea", "p3": "correct"}
    items = [JudgeItem(f"item-{n}", f"p{n}") for n in range(4)]
    with FakeOpenAIServer(
        lambda prompt: replies[prompt],
        faults=lambda call: Fault("bad_request") if call.prompt == "p3" else None,
    ) as server:
        with openai_judge(server, cache_namespace="ns1", max_retries=0) as judge:
            batch = judge_items(items, judge, parse=parse_word, repeats=2, desc="t", max_unjudged=1.0)
    assert batch.item_ids == ["item-0", "item-1", "item-2", "item-3"]
    assert batch.verdicts() == [[1, 1], [0, 0], [None, None], [None, None]]
    assert batch.replies()[2] == ["no idea", "no idea"]  # the unreadable reply is kept
    assert batch.cells[2][0].status == "unparseable" and "no idea" in batch.cells[2][0].error
    assert batch.cells[3][1].status == "unjudged" and batch.cells[3][1].reply is None
    assert "HTTP 400" in batch.cells[3][1].error
    assert batch.counts() == {
        "items": 4,
        "cells": 8,
        "judged": 4,
        "unparseable": 2,
        "conflicting": 0,
        "masked": 0,
        "verdict_fragments": 0,
        "model_failure": 0,
        "model_failure_too_long": 0,
        "model_failure_content_free": 0,
        "model_failure_masked": 0,
        "unjudged": 2,
        "items_missing_a_verdict": 2,
    }
    unjudged = batch.unjudged()
    assert [entry["item_id"] for entry in unjudged] == ["item-2", "item-3"]
    assert unjudged[1]["repeats"] == [0, 1] and "HTTP 400" in unjudged[1]["error"]
    assert batch.settings == {
        "kind": "openai",
        "model": "gpt-4o-2024-11-20",
        "repeats": 2,
        "namespace": "ns1",
    }
    # 4 prompts x 2 repeats = 8 replies; the 400 is not retried: one call per (prompt, repeat)
    assert batch.usage["replies"] == 8 and batch.usage["calls"] == 8 and batch.usage["unjudged"] == 2
    assert batch.usage["estimated_cost_usd"] is not None
    report = json.dumps(batch.report(), allow_nan=False)
    assert KEY not in report and "item-3" in report
    # the same judge object keeps counting; a second batch's usage is its own
    assert batch.any_judged()


def test_usage_is_per_batch_and_cached_replies_cost_no_call(env, tmp_path):
    items = [JudgeItem(f"i{n}", f"prompt {n}") for n in range(3)]
    with FakeOpenAIServer(lambda prompt: "correct") as server:
        with get_judge(
            "openai", base_url=server.base_url, api_key=KEY, cache_path=tmp_path / "c.sqlite"
        ) as judge:
            first = judge_items(items, judge, parse=parse_word, repeats=1)
            second = judge_items(items, judge, parse=parse_word, repeats=1)
    assert first.usage["calls"] == 3 and first.usage["cache_hits"] == 0
    assert second.usage["calls"] == 0 and second.usage["cache_hits"] == 3
    assert all(cell.cached for row in second.cells for cell in row)
    assert second.verdicts() == [[1], [1], [1]]


def test_parser_that_raises_is_an_unparseable_cell_not_a_crash(env):
    def explode(text: str) -> int:
        raise KeyError(text)

    with get_judge("rule") as judge:
        batch = judge_items([JudgeItem("a", "p", rule_reply="x")], judge, parse=explode, max_unjudged=1.0)
    assert batch.cells[0][0].status == "unparseable"
    assert batch.cells[0][0].error.startswith("reply parser failed: KeyError")


def test_bad_items_are_refused_before_any_call(env):
    with get_judge("rule") as judge:
        with pytest.raises(ValueError, match="unique ids"):
            judge_items([JudgeItem("a", "p"), JudgeItem("a", "q")], judge, parse=parse_word)
        with pytest.raises(TypeError, match="item 0"):
            judge_items(["just a prompt"], judge, parse=parse_word)
        with pytest.raises(TypeError, match="image"):
            judge_items([JudgeItem("a", "p", image="not a url")], judge, parse=parse_word)


def test_image_items_are_sent_as_an_image_part(env):
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (255, 0, 0)).save(buffer, "PNG")
    png = buffer.getvalue()
    items = [
        JudgeItem("with-image", "look", image=png),
        JudgeItem("pil", "look too", image=Image.open(buffer)),
    ]
    with FakeOpenAIServer(lambda prompt: "correct") as server:
        with openai_judge(server) as judge:
            batch = judge_items(items, judge, parse=parse_word)
        contents = [call.messages[-1]["content"] for call in server.calls]
    assert batch.verdicts() == [[1], [1]]
    for content in contents:
        assert content[0]["type"] == "text"
        url = content[1]["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        decoded = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
        assert decoded.size == (4, 3)


def test_no_judged_item_raises_with_the_last_error_and_no_key(env):
    items = [JudgeItem(f"i{n}", f"prompt {n}") for n in range(5)]
    with FakeOpenAIServer(faults=lambda call: Fault("unauthorized")) as server:  # 401 echoing the key
        base_url = server.base_url
        with openai_judge(server, max_retries=0) as judge:
            batch = judge_items(items, judge, parse=parse_word)
    with pytest.raises(JudgingFailed) as caught:
        batch.require_judged("mytask")
    message = str(caught.value)
    assert message.startswith("mytask: judging failed entirely: none of 5 judge replies gave a verdict")
    assert "HTTP 401" in message and base_url in message
    assert KEY not in message and "\n" not in message
    # an empty batch (nothing needed judging) is not a failure
    with get_judge("rule") as judge:
        judge_items([], judge, parse=parse_word).require_judged("mytask")


def test_html_page_with_status_200_is_reported_as_html_and_not_retried(env):
    items = [JudgeItem(f"i{n}", f"prompt {n}") for n in range(3)]
    with FakeOpenAIServer(faults=lambda call: Fault("html_page")) as server:
        with openai_judge(server, max_retries=4) as judge:
            batch = judge_items(items, judge, parse=parse_word)
        calls = server.call_count()
    assert calls == 3  # a web page will not turn into an API on retry
    error = batch.cells[0][0].error
    assert "HTML page" in error and "Sign in - Corporate Proxy" in error and "text/html" in error
    assert "no choices" not in error
    with pytest.raises(JudgingFailed, match="HTML page"):
        batch.require_judged("t")


def test_hanging_endpoint_is_cut_by_the_total_deadline(env):
    """Per-request timeout 60 s and 6 retries, but the whole phase is bounded by 1.5 s."""
    env.setenv("LMMS_EVAL_TASKS_JUDGE_TOTAL_TIMEOUT", "1.5")
    items = [JudgeItem(f"i{n}", f"prompt {n}") for n in range(40)]
    with FakeOpenAIServer(faults=lambda call: Fault("timeout", sleep=30)) as server:
        with openai_judge(server) as judge:
            assert judge.timeout == 60 and judge.total_timeout == 1.5
            started = time.monotonic()
            batch = judge_items(items, judge, parse=parse_word, repeats=2)
            elapsed = time.monotonic() - started
    assert elapsed < 5, elapsed
    assert batch.counts()["unjudged"] == 80
    assert all(cell.error.startswith("judging deadline") for row in batch.cells for cell in row)
    with pytest.raises(JudgingFailed, match="judging deadline"):
        batch.require_judged("t")


def test_deadline_keeps_replies_that_arrived_in_time(env):
    env.setenv("LMMS_EVAL_TASKS_JUDGE_TOTAL_TIMEOUT", "1.5")
    env.setenv("LMMS_EVAL_TASKS_JUDGE_CONCURRENCY", "4")
    slow = {"prompt 0", "prompt 1"}
    items = [JudgeItem(f"i{n}", f"prompt {n}") for n in range(8)]

    def hang_on_slow(call):
        return Fault("timeout", sleep=30) if call.prompt in slow else None

    with FakeOpenAIServer(lambda prompt: "correct", faults=hang_on_slow) as server:
        with openai_judge(server) as judge:
            batch = judge_items(items, judge, parse=parse_word, max_unjudged=1.0)
    assert batch.verdicts() == [[None], [None]] + [[1]] * 6
    assert [entry["item_id"] for entry in batch.unjudged()] == ["i0", "i1"]


def test_unjudged_share_warning_follows_the_threshold(env, warnings_logged):
    items = [JudgeItem(f"i{n}", f"p{n}", rule_reply=None if n == 0 else "correct") for n in range(10)]
    with get_judge("rule") as judge:
        judge_items(items, judge, parse=parse_word)  # 1 of 10 = 10 % > 5 % default
        assert any(
            "1 of 10 items (10.0 %)" in message and "5 % threshold" in message for message in warnings_logged
        )
        warnings_logged.clear()
        env.setenv("LMMS_EVAL_TASKS_JUDGE_MAX_UNJUDGED", "0.2")
        batch = judge_items(items, judge, parse=parse_word)
        assert batch.max_unjudged == 0.2
        assert not any("threshold" in message for message in warnings_logged)


@pytest.mark.parametrize("raw", ["1.5", "-0.1", "lots", "nan"])
def test_bad_max_unjudged_values_are_refused(env, raw):
    env.setenv("LMMS_EVAL_TASKS_JUDGE_MAX_UNJUDGED", raw)
    with pytest.raises(ValueError, match="LMMS_EVAL_TASKS_JUDGE_MAX_UNJUDGED"):
        numeric_setting("max_unjudged", None, None)


def test_total_timeout_default_scales_with_the_replies_to_fetch(env):
    # automatic: 120 s + 1 s per reply still to fetch (50 items x 1 repeat -> 170 s; 1129 x 3 -> 3507 s)
    assert total_timeout_seconds(0.0, 50) == 170.0
    assert total_timeout_seconds(0.0, 1129 * 3) == 3507.0
    assert total_timeout_seconds(30.0, 1129 * 3) == 30.0
    env.setenv("LMMS_EVAL_TASKS_JUDGE_TOTAL_TIMEOUT", "-1")
    with pytest.raises(ValueError, match="TOTAL_TIMEOUT"):
        numeric_setting("total_timeout", None, None)


def test_lazy_judge_and_protocol_repeats(env):
    with LazyJudge("rule", task="mytask") as source:
        assert source.created is None  # nothing made until asked
        judge = source.get()
        assert judge.kind == "rule" and source.get() is judge
        assert protocol_repeats(judge, 3, "mytask") == 1  # the rule judge has no spread
    with FakeOpenAIServer() as server:
        llm = openai_judge(server)
        assert LazyJudge(llm).get() is llm
        assert protocol_repeats(llm, 3, "mytask") == 3
        env.setenv("LMMS_EVAL_TASKS_JUDGE_REPEATS_MYTASK", "5")
        llm5 = get_judge("openai", base_url=server.base_url, cache=False, task="mytask")
        assert protocol_repeats(llm5, 3, "mytask") == 5
        llm.close()
        llm5.close()
