"""Secrets never written: an API key, an HF token, URL credentials and a URL's ``?key=``, echoed by the judge
in 200, 4xx and 5xx replies and passed in ``--model_args``, appear in no file the launcher, ``score``,
``report``, ``rejudge``, ``export`` and ``doctor`` write and on no command's streams, the launcher's refusal
included (docs/judges.md, "Secrets")."""

from __future__ import annotations

import base64
import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer, Fault, stable_fraction
from helpers import REPO_ROOT, offline_environment, run_launcher

from lmms_eval_tasks.judges.redact import scrub

pytestmark = pytest.mark.slow


def test_redact_recognises_basic_credentials_url_user_info_and_hf_tokens() -> None:
    basic = base64.b64encode(b"alice:wonderland-42").decode()
    text = (
        f"Authorization: Basic {basic} at http://alice:wonderland-42@proxy.local:8080/v1 "
        "hf_token=hf_AbCdEfGhIjKlMnOp {'token': 'hf_QrStUvWxYz012345'} api_key=abc123secret"
    )
    clean = scrub(text)
    for secret in (basic, "wonderland-42", "hf_AbCdEfGhIjKlMnOp", "hf_QrStUvWxYz012345", "abc123secret"):
        assert secret not in clean, clean
    assert "http://[REDACTED]@proxy.local:8080/v1" in clean
    # ordinary words are left alone (judge replies are scrubbed too)
    assert scrub("a basic idea; the bearer of news; prompt_tokens: 12") == (
        "a basic idea; the bearer of news; prompt_tokens: 12"
    )


def test_a_judged_run_and_score_write_no_secret(tmp_path: Path) -> None:
    key = "sk-proj-" + secrets.token_hex(20)
    hf_token = "hf_" + secrets.token_hex(16)
    password = "pw-" + secrets.token_hex(12)
    basic = base64.b64encode(f"alice:{password}".encode()).decode()
    query_key = "qk-" + secrets.token_hex(12)
    query = {name: f"{name[:2]}-" + secrets.token_hex(12) for name in ("sig", "api_key", "token")}
    planted = (key, hf_token, password, basic, query_key, *query.values())

    def reply(prompt: str, headers: dict[str, str]) -> str:
        # a debugging proxy in front of the judge: echoes the request headers and the secrets it knows
        echo = (
            f"headers={json.dumps(headers)} api_key={key} hf_token={hf_token} via http://alice:{password}@x"
        )
        return f"{echo}\nJudgement: {'Yes' if stable_fraction(prompt) < 0.5 else 'No'}"

    def faults(call):
        share = stable_fraction("fault" + call.prompt)
        if share < 0.2:
            return Fault("echo_headers_400")  # 4xx: not retried, the item is unjudged with this error
        if share < 0.4:
            return Fault("echo_headers_500")  # 5xx: retried, then unjudged
        return None

    output = tmp_path / "out"
    with FakeOpenAIServer(reply_with_headers=reply, faults=faults) as server:
        judge_url = server.base_url.replace("http://", f"http://alice:{password}@") + f"?key={query_key}"
        extra_query = "".join(f"&{name}={value}" for name, value in query.items())
        judge_url += extra_query
        environment = offline_environment(
            OPENAI_API_URL=judge_url,
            OPENAI_API_KEY=key,
            HF_TOKEN=hf_token,
            LMMS_EVAL_TASKS_JUDGE="auto",
            LMMS_EVAL_TASKS_JUDGE_CACHE=str(tmp_path / "judge_cache.sqlite"),
            LMMS_EVAL_TASKS_JUDGE_MAX_RETRIES="1",
            LMMS_EVAL_TASKS_JUDGE_BACKOFF_BASE="0.01",
            LMMS_EVAL_TASKS_JUDGE_MAX_UNJUDGED="1",
        )
        launched = run_launcher(
            "--model", "random_guess",
            "--model_args", f"seed=0,device=http://alice:{password}@127.0.0.1:9/v1",
            "--tasks", "contextual_sample",
            "--output_path", str(output),
            "--log_samples",
            environment=environment,
        )  # fmt: skip
        statuses = {call.status for call in server.calls}
        records = sorted(output.rglob("lmms_eval_tasks/*/contextual_sample_samples.jsonl"))
        assert records, launched.stderr[-3000:]
        scored = subprocess.run(
            [sys.executable, "-m", "lmms_eval_tasks.cli", "score", "contextual", str(records[0]), "--details",
             "-o", "judge_prompt=hardened"],
            capture_output=True, text=True, env=environment, cwd=REPO_ROOT, timeout=600, check=False,
        )  # fmt: skip

        def command(*arguments: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "lmms_eval_tasks.cli", *arguments],
                capture_output=True, text=True, env=environment, cwd=REPO_ROOT, timeout=600, check=False,
            )  # fmt: skip

        reported = command("report", str(output), "--out", str(tmp_path / "report"))
        rejudged = command("rejudge", "contextual", str(records[0]), "--judge-model", "judge-b",
                           "--judge-base-url", judge_url)  # fmt: skip
        exported = command("export", "csv", str(output), "--out", str(tmp_path / "metrics.csv"))
        doctor = command("doctor")
        refused = run_launcher(
            "--model", "openai", "--model_args", f"base_url={judge_url}&token={key},model_version=m",
            "--tasks", "contextual_sample", "--output_path", str(tmp_path / "refused"),
            environment=environment,
        )  # fmt: skip
        listings = [path for path, _headers in server.model_listings]
    # the run really judged, really met the echoing 200, 400 and 500 replies, and scoring ran
    assert {200, 400, 500} <= statuses, statuses
    assert launched.returncode in (0, 1), launched.stderr[-3000:]
    assert scored.returncode == 0, scored.stderr[-3000:]
    # rejudge met the same faults: its file is written, marked INCOMPLETE, exit 1
    assert rejudged.returncode in (0, 1) and "rejudge_judge-b.json" in rejudged.stderr + rejudged.stdout
    assert exported.returncode == 0, exported.stderr[-2000:]
    assert refused.returncode == 2 and "would be the model under test" in refused.stderr, refused.stderr
    # doctor reaches the endpoint the judge uses (its query kept, its user info as credentials) and says so
    assert "127.0.0.1" in doctor.stdout and "answers (HTTP 200)" in doctor.stdout, doctor.stdout
    assert listings == [f"/v1/models?key={query_key}{extra_query}"]
    streams = {
        f"{name} {stream}": getattr(completed, stream)
        for name, completed in (("launcher", launched), ("score", scored), ("report", reported),
                                ("rejudge", rejudged), ("export", exported), ("doctor", doctor),
                                ("refusal", refused))
        for stream in ("stdout", "stderr")
    }  # fmt: skip
    found = [
        f"{name}: {secret[:6]}..." for name, text in streams.items() for secret in planted if secret in text
    ]
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(path.name.endswith("_results.json") for path in files)
    assert any(path.suffix == ".html" for path in files), reported.stderr[-2000:]
    assert any(path.name.startswith("judge_cache") for path in files)
    for path in files:
        data = path.read_bytes()
        found += [f"{path.relative_to(tmp_path)}: {s[:6]}..." for s in planted if s.encode() in data]
    assert not found, "secrets written:\n" + "\n".join(found)
