"""A judging run killed midway (SIGKILL) leaves a readable cache; the rerun calls only for what is missing."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fake_openai import JUDGE_ENV_NAMES, JUDGE_ENV_PREFIXES, FakeOpenAIServer, isolate_judge_env

from lmms_eval_tasks.judges import JudgeRequest, get_judge
from lmms_eval_tasks.judges.cache import ReplyCache, cache_key

ITEMS = 80
KEY = "sk-crash-resume-test-key"
CHILD = textwrap.dedent(
    """
    import sys
    from lmms_eval_tasks.judges import JudgeRequest, get_judge

    base_url, cache_path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    judge = get_judge("openai", base_url=base_url, api_key="sk-crash-resume-test-key", cache_path=cache_path,
                      concurrency=4)
    judge.judge([JudgeRequest(f"crash item {index}") for index in range(count)])
    print("FINISHED", flush=True)
    """
)


def verdict_for(prompt: str) -> str:
    return "verdict " + hashlib.sha256(prompt.encode()).hexdigest()[:12]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_run_resumes_calling_only_uncached_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_judge_env(monkeypatch, tmp_path / "cache_root")
    cache_path = tmp_path / "judge.sqlite"
    script = tmp_path / "judge_run.py"
    script.write_text(CHILD)
    child_env = {
        name: value
        for name, value in os.environ.items()
        if not (name.startswith(JUDGE_ENV_PREFIXES) or name in JUDGE_ENV_NAMES)
    }
    prompts = [f"crash item {index}" for index in range(ITEMS)]
    with FakeOpenAIServer(verdict_for, latency=0.05) as server:
        child = subprocess.Popen(
            [sys.executable, str(script), server.base_url, str(cache_path), str(ITEMS)],
            env=child_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while server.call_count() < 30 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        stdout, stderr = child.communicate(timeout=30)
        assert b"FINISHED" not in stdout, "the run finished before it could be killed"
        assert child.returncode == -signal.SIGKILL, stderr.decode(errors="replace")[-2000:]
        first_run_calls = server.call_count()
        assert 30 <= first_run_calls < ITEMS

        # the cache survived the kill intact
        with sqlite3.connect(cache_path) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        judge = get_judge(
            "openai", base_url=server.base_url, api_key=KEY, cache_path=cache_path, concurrency=4
        )
        params = judge.generation_params()
        stored = ReplyCache(cache_path).keys()
        cached_prompts = {
            prompt
            for prompt in prompts
            if cache_key(judge.model, JudgeRequest(prompt).messages(), params, 0) in stored
        }
        # replies in flight at the kill were paid for but not stored: at most `concurrency` of them
        assert first_run_calls - 4 <= len(cached_prompts) <= first_run_calls
        assert 0 < len(cached_prompts) < ITEMS

        server.reset()
        replies = judge.judge([JudgeRequest(prompt) for prompt in prompts])
        second_run_prompts = server.prompts()

    missing = set(prompts) - cached_prompts
    assert sorted(second_run_prompts) == sorted(missing)  # each missing item exactly once, nothing else
    for prompt, row in zip(prompts, replies, strict=True):
        assert row[0].text == verdict_for(prompt)
        assert row[0].cached == (prompt in cached_prompts)
    assert judge.usage()["calls"] == len(missing) and judge.usage()["cache_hits"] == len(cached_prompts)
