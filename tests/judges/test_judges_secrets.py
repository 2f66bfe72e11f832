"""No API key in logs, results, per-sample files, caches or exception messages of a judged run."""

from __future__ import annotations

import json
import logging
import secrets
from pathlib import Path
from types import SimpleNamespace

import pytest
from fake_openai import FakeOpenAIServer, Fault, isolate_judge_env
from loguru import logger

from lmms_eval_tasks.framework.task_pipeline import write_report
from lmms_eval_tasks.judges import JudgeRequest, get_judge, judge_metadata, replies_log
from lmms_eval_tasks.judges.redact import REDACTED, safe_url, scrub, scrub_lines
from lmms_eval_tasks.reporting.schema import build_report, latest_files


def test_judged_run_writes_no_api_key_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd
) -> None:
    key = "sk-proj-" + secrets.token_hex(24)
    isolate_judge_env(monkeypatch, tmp_path / "cache_root")
    logs = tmp_path / "logs"
    logs.mkdir()
    loguru_sink = logger.add(logs / "loguru.log", level="DEBUG")
    http_log = logging.FileHandler(logs / "stdlib.log")
    root = logging.getLogger()
    previous_level = root.level
    root.addHandler(http_log)
    root.setLevel(logging.DEBUG)

    def faults(call):
        if call.prompt.endswith("7"):
            return Fault("unauthorized")  # the error body echoes the key, like OpenAI's 401 message
        if call.prompt.endswith("3"):
            return Fault("server_error")
        return None

    try:
        with FakeOpenAIServer(lambda prompt: "correct", faults=faults) as server:
            # the host's older convention: a full .../chat/completions URL
            monkeypatch.setenv("OPENAI_API_URL", server.base_url + "/chat/completions")
            monkeypatch.setenv("OPENAI_API_KEY", key)
            judge = get_judge(task="hallusionbench", backoff_base=0.001, max_retries=1)
            assert judge.kind == "openai"
            requests = [JudgeRequest(f"secret scan item {index}") for index in range(30)]
            replies = judge.judge(requests, repeats=2, desc="secret scan")
            saw_key = {call.headers.get("authorization") for call in server.calls}
        metadata = judge_metadata(judge)
        errors = [reply.error for row in replies for reply in row]
        samples = [replies_log(row) for row in replies]
        # a key passed in the model args must not reach the report's provenance either
        args = SimpleNamespace(
            output_path=str(tmp_path / "results"), model="dummy", model_args=f"api_key={key}"
        )
        report = build_report(
            benchmark="hallusionbench",
            task="hallusionbench",
            metrics={},
            args=args,
            details={"judge_usage": metadata["judge_usage"], "errors": errors},
            judge=metadata["judge"],
        )
        write_report(args, "hallusionbench", report, samples)
        try:
            get_judge("openai", base_url="http://127.0.0.1:9/v1", api_key=key, max_retries=-1)
        except ValueError as error:
            (logs / "exception.txt").write_text(f"{error!r}\n{error}")
    finally:
        logger.remove(loguru_sink)
        root.removeHandler(http_log)
        root.setLevel(previous_level)
        http_log.close()
    captured = capfd.readouterr()
    (logs / "console.txt").write_text(captured.out + captured.err)

    # the run really used the key and really hit the key-echoing error path
    assert saw_key == {f"Bearer {key}"}
    unauthorized = [
        reply.error for row in replies for reply in row if reply.error and "HTTP 401" in reply.error
    ]
    assert len(unauthorized) == 6  # items 7, 17, 27 x 2 repeats
    assert all(REDACTED in error for error in unauthorized)
    assert (tmp_path / "cache_root" / "judge" / "judge_cache.sqlite").exists()
    samples_text = latest_files(tmp_path / "results", "hallusionbench")["samples"].read_text()
    assert "HTTP 401" in samples_text and "HTTP 500" in samples_text
    assert "UNJUDGED" in (logs / "loguru.log").read_text()

    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert len(written) >= 7
    needles = [key.encode(), key[8:32].encode(), key[-16:].encode()]
    leaks = [str(path) for path in written for needle in needles if needle in path.read_bytes()]
    assert leaks == []
    assert key not in json.dumps(judge.describe()) + json.dumps(judge.usage())


def test_scrub_and_safe_url() -> None:
    key = "sk-abcdefghijklmnop1234"
    assert key not in scrub(f"Incorrect API key provided: {key}", (key,))
    assert "sk-abc" not in scrub("Incorrect API key provided: sk-abc***********1234.")
    assert "tok_live_xyz" not in scrub("Authorization: Bearer tok_live_xyz")
    assert scrub('{"api_key": "hunter2hunter2"}') == '{"api_key": "' + REDACTED + '"}'
    assert scrub("plain message, no secrets") == "plain message, no secrets"
    assert safe_url("https://user:pw@example.com:8443/v1?api-key=abc#x") == "https://example.com:8443/v1"


def test_scrub_keeps_json_lines_valid_and_prose_whole(tmp_path) -> None:
    """The launcher rewrites the host's JSON lines files with ``scrub``: a model output such as
    'The password: x"' (JSON: ``x\\"``) must not lose the backslash of its escaped quote (the line became
    invalid JSON); ordinary prose with "token:" / "password:" before a short word is not a secret."""
    from lmms_eval_tasks.host.scrubbing import scrub_files

    outputs = ['The password: x" is on the sign', 'Bearer abcdefgh" ok', 'api_key: qq\\"']
    outputs.append("token=hf_AbCdEfGh12")
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"resps": [[text]]}) + "\n" for text in outputs), encoding="utf-8")
    scrub_files([path])
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]  # every line valid
    assert "hf_AbCdEfGh12" not in json.dumps(rows) and "abcdefgh" not in json.dumps(rows)
    for prose in ("The token: 5 cents", "password: the word on the board", "The secret: a cat"):
        assert scrub(prose) == prose
    assert REDACTED in scrub("password: hunter22") and REDACTED in scrub("api_key=abcdef")


def test_scrub_lines_is_scrub_of_each_line(monkeypatch) -> None:
    """A file's lines (the launcher's scrub_files) get what ``scrub`` gives each: secrets from the
    environment (and their base64 forms), the caller's, and every key pattern."""
    import base64

    key = "sk-proj-linesTest0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdef-123")
    lines = [
        f'{{"resps": [["{key}"]]}}\n',
        "echo: " + base64.b64encode(f"Bearer {key}".encode()).decode() + "\n",
        "service tok-abcdef-123 and given-secret-xyz\n",
        "endpoint=http://user:pw@host/v1 Authorization: Basic dXNlcjpwYXNz\n",
        "plain prose, the token: 5 cents\n",
    ]
    expected = [scrub(line, ("given-secret-xyz",)) for line in lines]
    assert scrub_lines(lines, ("given-secret-xyz",)) == expected
    assert sum(REDACTED in line for line in expected) == 4 and expected[-1] == lines[-1]


def test_a_key_echoed_in_base64_is_scrubbed(monkeypatch) -> None:
    """A judge or proxy echoing the request's headers base64-encoded (any alignment of the key in the
    encoded text): the key's encoded form is removed too."""
    import base64

    key = "sk-proj-base64EchoTest0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    for prefix in ("", "A", "Au", "Authorization: Bearer "):
        encoded = base64.b64encode(f"{prefix}{key}\r\n".encode()).decode()
        scrubbed = scrub(f"echo: {encoded}")
        assert REDACTED in scrubbed and encoded not in scrubbed, prefix
        left, right = scrubbed.removeprefix("echo: ").split(REDACTED)
        assert len(left) <= len(prefix) * 4 // 3 + 3 and len(right) <= 8  # only the neighbours' bytes stay
    assert scrub("image id aGVsbG86d29ybGQ= stays") == "image id aGVsbG86d29ybGQ= stays"


def test_a_secret_set_or_changed_after_a_scrub_is_scrubbed(monkeypatch) -> None:
    """The secrets read from the environment are remembered between calls (``redact.secret_values``):
    a variable set, changed or removed afterwards is seen by the next call."""
    monkeypatch.delenv("MY_LATER_TOKEN", raising=False)
    assert scrub("value later-secret-1") == "value later-secret-1"
    monkeypatch.setenv("MY_LATER_TOKEN", "later-secret-1")
    assert scrub("value later-secret-1") == f"value {REDACTED}"
    monkeypatch.setenv("MY_LATER_TOKEN", "later-secret-2")
    assert scrub("value later-secret-1 later-secret-2") == f"value later-secret-1 {REDACTED}"
    assert scrub("x given-secret-abc", ("given-secret-abc",)) == f"x {REDACTED}"
    monkeypatch.delenv("MY_LATER_TOKEN")
    assert scrub("value later-secret-2") == "value later-secret-2"


def test_the_remembered_secrets_are_those_of_the_environment_they_are_remembered_for(monkeypatch) -> None:
    """Another thread unsets a secret while a scrub reads the environment, then sets it back to the same
    value: the secrets remembered (``redact.secret_values``) for that environment must include it, or every
    later scrub in that environment lets it through."""
    import os

    monkeypatch.setenv("MY_RACED_TOKEN", "raced-secret-1")
    environ_items = type(os.environ).items

    def items_after_another_thread_unset_it(self=os.environ):
        os.environ.pop("MY_RACED_TOKEN", None)  # between the scrub's snapshot and its reading of the values
        return environ_items(self)

    monkeypatch.setattr(os.environ, "items", items_after_another_thread_unset_it, raising=False)
    scrub("value raced-secret-1", ("a-value-no-call-used-before",))  # unset during it: either answer is right
    monkeypatch.delattr(os.environ, "items")
    os.environ["MY_RACED_TOKEN"] = "raced-secret-1"  # set back: the environment the first call started from
    assert scrub("value raced-secret-1", ("a-value-no-call-used-before",)) == f"value {REDACTED}"
