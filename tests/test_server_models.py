"""The pieces of long server runs, in process: failure markers, the host response cache's patches (on the
real lmms-eval ``ResponseCache``), the judge/model endpoint check, the Out-Log refusal, the VRB prompt for
every server spelling, the VRB image memo and the pipelined client's encoding cache, superseded runs."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from lmms_eval_tasks.framework import failed_generations as failures
from lmms_eval_tasks.framework.superseded_runs import clear_superseded_pending
from lmms_eval_tasks.host import patches, resume, server_checks
from lmms_eval_tasks.host.patch_kit import unwrapped
from lmms_eval_tasks.reporting.schema import run_is_older
from lmms_eval_tasks.tasks.vrb.image_cache import ImageMemo

MARKER = "[LMMS_EVAL_REQUEST_FAILED after 2 retries] Connection error."


def test_failure_markers_are_recognised_and_answers_are_not():
    from lmms_eval.api.instance import GenerationResult

    assert failures.failure_of(MARKER) == MARKER
    assert failures.failure_of("  [LMMS_EVAL_BUDGET_EXCEEDED]") == "[LMMS_EVAL_BUDGET_EXCEEDED]"
    assert failures.failure_of(GenerationResult(text=MARKER)) == MARKER
    assert failures.failure_of(None) == failures.NO_TEXT
    for answer in ("yes", "", "The [LMMS_EVAL_REQUEST_FAILED marker", ["a", "b"]):
        assert failures.failure_of(answer) is None, answer
    assert failures.failure_in_results([(-1.5, True)]) is None  # a loglikelihood pair
    assert failures.failure_in_results(["ok", MARKER]) == MARKER


def test_failed_records_are_counted_and_the_closing_lines_say_how_many():
    failures.clear_failures()
    records = [{"task": "t", "prediction": "yes"}, {"task": "t", failures.FAILED_KEY: MARKER}]
    assert failures.note_failures("t", records) == failures.TaskFailures("t", 1, 2, MARKER)
    assert failures.note_failures("u", records[:1]) is None
    assert failures.has_failures(["t", "u"]) == ["t"]
    lines = failures.failure_lines(uses_cache=True)
    assert lines[0] == f"lmms_eval: t: 1 of 2 generations failed, not scored (first: {MARKER})"
    assert "asks the server only for these 1" in lines[-1]
    assert "--use_cache DIR" in failures.failure_lines(uses_cache=False)[-1]
    failures.clear_failures()
    assert failures.failure_lines(uses_cache=True) == []


def _instance(doc_id: int):
    from lmms_eval.api.instance import Instance

    arguments = (f"question {doc_id}", {"temperature": 0, "max_new_tokens": 4}, None, doc_id, "task", "x")
    return Instance("generate_until", arguments, 0, {"task": "task", "doc_id": doc_id, "repeats": 1})


def _cache(folder: Path, interval: int = 256):
    from lmms_eval.caching.response_cache import ResponseCache

    cache = ResponseCache(db_path=str(folder / "rank_0.db"), audit_path=str(folder / "rank_0.audit.jsonl"))
    cache._checkpoint_interval = interval
    return cache


def _stored(folder: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(folder / "rank_0.db") as connection:
        return sorted(json.loads(row[0]) for row in connection.execute("SELECT response FROM responses"))


class Model:
    """A model answering from a table; ``calls`` records the size of every generate_until call."""

    def __init__(self, fail: set[int] = frozenset(), stop_after: int | None = None) -> None:
        self.fail, self.stop_after, self.calls = fail, stop_after, []

    def generate_until(self, requests):
        if self.stop_after is not None and sum(self.calls) >= self.stop_after:
            raise KeyboardInterrupt("killed")  # the process dies between two slices
        self.calls.append(len(requests))
        return [MARKER if request.doc_id in self.fail else f"answer {request.doc_id}" for request in requests]


def test_the_response_cache_keeps_no_failure_and_checkpoints_as_it_goes(tmp_path):
    for name in ("cache_no_failures", "cache_checkpoints"):
        assert patches.check_patch(name).state == "applies", patches.check_patch(name)
        assert patches.apply_patch(name).state == "applied"
    requests = [_instance(doc_id) for doc_id in range(10)]

    first = _cache(tmp_path, interval=3)
    with pytest.raises(KeyboardInterrupt):  # killed after 2 slices of 3 (doc 4 failed)
        first.execute(Model(fail={4}, stop_after=6), "generate_until", requests)
    first.close()
    assert _stored(tmp_path) == sorted(f"answer {doc_id}" for doc_id in (0, 1, 2, 3, 5))
    audit = [json.loads(line) for line in (tmp_path / "rank_0.audit.jsonl").read_text().splitlines()]
    assert [entry["cache_key"] for entry in audit if MARKER in entry["response"]] == [""]  # never replayed

    second = _cache(tmp_path, interval=3)  # the same store, reopened: the rerun
    model = Model()
    answers = second.execute(model, "generate_until", requests)
    second.close()
    assert answers == [f"answer {doc_id}" for doc_id in range(10)]
    assert sum(model.calls) == 5  # doc 4 (failed) and docs 6..9 (never answered)
    assert len(_stored(tmp_path)) == 10


def test_a_failure_cached_by_an_unpatched_run_is_asked_again(tmp_path):
    import sqlite3

    patches.apply_patch("cache_no_failures")
    cache = _cache(tmp_path)
    request = _instance(0)
    cache.execute(Model(), "generate_until", [request])
    cache.close()
    with sqlite3.connect(tmp_path / "rank_0.db") as connection:  # what lmms-eval 0.7.3 itself stores
        connection.execute("UPDATE responses SET response = ?", (json.dumps(MARKER),))
    cache = _cache(tmp_path)
    model = Model()
    assert cache.execute(model, "generate_until", [request]) == ["answer 0"]
    cache.close()
    assert model.calls == [1]


def _git(folder: Path, *arguments: str) -> str:
    import subprocess

    command = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.org", *arguments]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def _repository(folder: Path) -> Path:
    folder.mkdir(parents=True)
    _git(folder, "init", "-q")
    _git(folder, "commit", "-q", "--allow-empty", "-m", "first")
    return folder


def test_the_cache_version_is_lmms_evals_not_that_of_the_repository_around_its_venv(tmp_path, monkeypatch):
    import importlib.metadata

    from lmms_eval import utils

    project = _repository(tmp_path / "project")  # lmms-eval installed in project/.venv, the usual layout
    site_packages = project / ".venv" / "lib" / "site-packages"
    site_packages.mkdir(parents=True)
    monkeypatch.setattr(utils, "_lmms_eval_repo_root", lambda: site_packages)
    host_version = unwrapped(utils.get_lmms_eval_cache_version)
    before = host_version()
    _git(project, "commit", "-q", "--allow-empty", "-m", "the project moves on")
    assert host_version() != before  # the host's key changes with the project's commits: every key is new

    assert patches.check_patch("cache_version").state == "applies", patches.check_patch("cache_version")
    assert patches.apply_patch("cache_version").state == "applied"
    installed = importlib.metadata.version("lmms-eval")
    assert utils.get_lmms_eval_cache_version() == installed
    _git(project, "commit", "-q", "--allow-empty", "-m", "and again")
    assert utils.get_lmms_eval_cache_version() == installed

    checkout = _repository(tmp_path / "lmms-eval")  # a source checkout of lmms-eval keeps its own commit
    monkeypatch.setattr(utils, "_lmms_eval_repo_root", lambda: checkout)
    assert utils.get_lmms_eval_cache_version() == _git(checkout, "describe", "--always") != installed
    assert patches.check_patch("cache_version").state == "not needed"


def test_the_cache_run_id_is_fixed_per_model_and_model_args(monkeypatch):
    monkeypatch.delenv(resume.RUN_ID_ENV, raising=False)
    argv = ["--model", "openai", "--model_args", "base_url=http://x/v1,model_version=m", "--use_cache", "c"]
    notice = resume.prepare_cache(argv)
    run_id = resume.stable_run_id("openai", "model_version=m,base_url=http://x/v1")  # order does not matter
    assert run_id in notice and __import__("os").environ[resume.RUN_ID_ENV] == run_id
    assert resume.stable_run_id("openai", "model_version=other") != run_id
    monkeypatch.setenv(resume.RUN_ID_ENV, "mine")
    assert "run mine (LMMS_CACHE_RUN_ID as set)" in resume.prepare_cache(argv)
    assert resume.prepare_cache(["--model", "openai"]) is None


def test_endpoints_resolve_to_one_server_whatever_their_spelling():
    key = server_checks.server_key
    assert key("http://localhost:8000/v1") == key("http://127.0.0.1:8000/v1/chat/completions")
    assert key("http://127.0.0.1:8000/v1") != key("http://127.0.0.1:8001/v1")
    # this machine, however spelled: a server bound to 0.0.0.0 (vLLM's default, the URL it prints) answers on
    # 0.0.0.0, any 127.x address (Debian names the host 127.0.1.1), ::1 and the host's own name
    import socket

    local = key("http://localhost:8000/v1")
    for spelling in ("0.0.0.0", "127.0.1.1", "[::]", "[::1]", "LocalHost", socket.gethostname()):
        assert key(f"http://{spelling}:8000/v1/") == local, spelling
    assert key("http://localhost:8000/v1") != key("http://localhost:8000/v2")


def test_the_judge_check_passes_a_separate_judge_and_honours_the_explicit_switch(monkeypatch):
    argv = ["--model", "openai", "--model_args", "base_url=http://127.0.0.1:8000/v1,model_version=vlm"]
    argv += ["--tasks", "hallusionbench_sample"]
    for name in ("OPENAI_API_BASE", "OPENAI_BASE_URL", "OPENAI_API_URL", "LMMS_EVAL_TASKS_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE", "openai")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_API_KEY", "k")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_BASE_URL", "http://127.0.0.1:9000/v1")
    assert server_checks.check_judge_endpoint(argv) is None  # its own server
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MODEL", "vlm")
    assert "same model name" in server_checks.check_judge_endpoint(argv)  # the same model name
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_BASE_URL", "http://localhost:8000/v1")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MODEL", "gpt-4o")
    assert "same server" in server_checks.check_judge_endpoint(argv)
    monkeypatch.setenv(server_checks.ALLOW_ENV, "1")
    assert server_checks.check_judge_endpoint(argv) is None
    assert server_checks.check_judge_endpoint([*argv[:-1], "vrb_sample"]) is None  # no judged task


def test_out_log_on_a_server_is_refused_in_one_line():
    message = server_checks.check_loglikelihood_on_server(["--model", "openai", "--tasks", "dare_sample_log"])
    assert message.startswith("lmms_eval: dare_sample_single_log_p1") and "\n" not in message
    assert "need log-likelihoods" in message and "llava_hf" in message
    assert (
        server_checks.check_loglikelihood_on_server(["--model", "openai", "--tasks", "dare_sample_gen"])
        is None
    )
    assert (
        server_checks.check_loglikelihood_on_server(["--model", "llava_hf", "--tasks", "dare_sample_log"])
        is None
    )


def test_the_vrb_prompt_does_not_depend_on_the_spelling_of_a_server_model():
    import yaml

    from lmms_eval_tasks import TASKS_DIR

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    text = (Path(TASKS_DIR) / "vrb" / "yaml" / "_vrb_sample_template_yaml").read_text(encoding="utf-8")
    kwargs = yaml.load(text, Loader=Loader)["lmms_eval_specific_kwargs"]  # noqa: S506 - a safe loader
    spellings = sorted(server_checks.SERVER_MODELS)
    assert all(name in kwargs for name in spellings), [name for name in spellings if name not in kwargs]
    assert len({json.dumps(kwargs[name], sort_keys=True) for name in spellings}) == 1
    assert kwargs["openai"]["prompt"] == "vqav2"


def test_the_image_memo_computes_each_key_once_even_from_many_threads():
    memo, made = ImageMemo(2), []
    lock = threading.Lock()

    def make(key):
        def build():
            with lock:
                made.append(key)
            return object()

        return build

    results = []
    threads = [threading.Thread(target=lambda: results.append(memo.get("a", make("a")))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert made == ["a"] and len({id(result) for result in results}) == 1
    memo.get("b", make("b"))
    memo.get("c", make("c"))  # "a" leaves (capacity 2)
    memo.get("a", make("a"))
    assert made == ["a", "b", "c", "a"]
    assert ImageMemo(0).get("a", lambda: 1) == 1


def test_the_encoding_cache_encodes_each_image_once_and_keeps_it_so_ids_are_never_confused():
    from lmms_eval_tasks.models.openai_pipelined import EncodingCache

    cache, made = EncodingCache(1), []
    first, second = object(), object()

    def encode(text):
        return lambda: made.append(text) or text

    assert cache.encoded(first, ("PNG", None), encode("AAA")) == "AAA"
    assert cache.encoded(first, ("PNG", None), encode("again")) == "AAA"
    assert cache.encoded(second, ("PNG", None), encode("BBB")) == "BBB"  # first leaves (capacity 1)
    assert cache.encoded(first, ("PNG", None), encode("AAA")) == "AAA"
    assert made == ["AAA", "BBB", "AAA"] and (cache.hits, cache.misses) == (1, 3)
    arguments = (second, ("JPEG", 95), encode("C"))
    threads = [threading.Thread(target=cache.encoded, args=arguments) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert made.count("C") == 1  # made once, waited for by the other threads


def test_a_completed_rerun_clears_the_killed_runs_pending_marker(tmp_path):
    args = {"model": "openai", "model_args": "model_version=m", "limit": None, "seed": None}
    names = ("20261201_100000", "20261201_100001", "20261201_110000")
    killed, other_setup, rerun = (tmp_path / name for name in names)
    for folder, saved in ((killed, args), (other_setup, {**args, "model_args": "model_version=n"})):
        folder.mkdir()
        (folder / "t_pending.json").write_text(json.dumps({"task": "t", "args": saved}))
    rerun.mkdir()
    assert clear_superseded_pending(rerun, "t", args) == [killed / "t_pending.json"]
    assert (other_setup / "t_pending.json").exists()  # another model's pending run is left alone
    assert run_is_older("20261201_100000", "20261201_110000") and not run_is_older("20261201_110000", "x")
    assert run_is_older("20261201_100000", "20261201_100000-2")


def test_the_response_cache_keeps_no_api_key_of_the_model_arguments(tmp_path, monkeypatch):
    """The host stores ``model|model_args`` verbatim in each cache database's meta table (``api_key=...``,
    ``user:password@`` in a base_url); the keys are unchanged (answers cached before are still found)."""
    from lmms_eval.caching.response_cache import ResponseCache

    key, password = "sk-proj-AbCdEf0123456789audit", "pa55word-audit"
    model_args = f"base_url=http://user:{password}@127.0.0.1:9/v1,api_key={key},model_version=m"
    for name in ("cache_no_secrets", "cache_no_failures"):
        assert patches.check_patch(name).state == "applies", patches.check_patch(name)
        assert patches.apply_patch(name).state == "applied"
    monkeypatch.setenv(resume.RUN_ID_ENV, "audit")
    cache = ResponseCache.create(str(tmp_path), model="openai", model_args=model_args)
    fingerprint_hash = cache._model_fingerprint_hash
    cache.execute(Model(), "generate_until", [_instance(0)])
    cache.finalize(success=True)
    reopened = ResponseCache.create(str(tmp_path), model="openai", model_args=model_args)
    assert reopened._model_fingerprint_hash == fingerprint_hash  # the same keys
    reopened.close()
    stored = b"".join(path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())
    assert b"answer 0" in stored  # the answer is there, the secrets are not
    assert key.encode() not in stored and password.encode() not in stored


def test_answers_cached_by_another_pack_version_are_asked_again(tmp_path, monkeypatch):
    """The host's keys hold the task's YAML config and text prompt but not its images: a pack upgrade that
    changes how images are made (VRB's corruptions) would reuse the old answers. The keys carry the pack's
    version, so an upgrade asks again and the same version finds its answers."""
    from lmms_eval.caching.response_cache import ResponseCache

    import lmms_eval_tasks

    status = patches.check_patch("cache_pack_version")
    assert status.state == "applies", status
    assert patches.apply_patch("cache_pack_version").state == "applied"
    monkeypatch.setenv(resume.RUN_ID_ENV, "upgrade")

    def asked(version: str) -> int:
        monkeypatch.setattr(lmms_eval_tasks, "__version__", version)
        model = Model()
        cache = ResponseCache.create(str(tmp_path), model="openai", model_args="model_version=m")
        assert cache.execute(model, "generate_until", [_instance(0)]) == ["answer 0"]
        cache.finalize(success=True)
        return sum(model.calls)

    assert [asked("0.1.0"), asked("0.1.0"), asked("0.2.0"), asked("0.2.0")] == [1, 0, 1, 0]


def _captured_client(model):
    """``model``'s SDK client with its network boundary replaced by one that records every request."""
    import httpx2

    requests = []

    def answer(request):
        requests.append(request)
        return httpx2.Response(
            200,
            json={
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
                ],
            },
        )

    return model.client.copy(http_client=httpx2.Client(transport=httpx2.MockTransport(answer))), requests


def test_the_pipelined_client_posts_the_bytes_and_headers_the_sdks_create_posts():
    import base64
    import io

    from PIL import Image

    from lmms_eval_tasks.framework.sent_images import with_file
    from lmms_eval_tasks.models.openai_pipelined import DataURL, OpenAIPipelined, RequestBodies

    model = OpenAIPipelined(base_url="http://127.0.0.1:9/v1", api_key="sk-test", model_version="m")
    model.client, requests = _captured_client(model)
    model.bodies = RequestBodies(model.client)
    jpeg = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 10, 30)).save(jpeg, "JPEG", quality=95)
    messages = model._messages_class(
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "image", "url": Image.new("RGB", (5, 4), (1, 2, 3))},
                    {"type": "text", "text": 'Q: "é" \\ \n\t\u2028 line'},
                    {"type": "image", "url": with_file(jpeg.getvalue(), "image/jpeg")},
                ],
            }
        ]
    ).to_openai_messages()
    urls = [part["image_url"]["url"] for part in messages[0]["content"] if part["type"] == "image_url"]
    assert all(isinstance(url, DataURL) for url in urls)
    assert urls[0].startswith("data:image/png;base64,")
    assert base64.b64decode(urls[1].split(",", 1)[1]) == jpeg.getvalue()  # the file itself, not re-encoded
    payloads = [
        {"messages": messages, "model": "m", "max_tokens": 16, "temperature": 0},
        {"messages": messages, "model": "m", "max_tokens": 16, "temperature": 0.5, "top_p": 0.9, "seed": 3},
        {"messages": messages, "model": "m", "max_tokens": 16, "temperature": 0, "extra_body": {"k": 1}},
    ]
    for payload in payloads:
        expected_body = payload.get("extra_body") is None
        assert (model.bodies.body(payload) is not None) == expected_body  # extra_body: the SDK's create()
        assert model.create(payload).choices[0].message.content == "ok"
        sdk_payload = dict(payload)
        extra = sdk_payload.pop("extra_body", None)
        model.client.chat.completions.create(**sdk_payload, **({"extra_body": extra} if extra else {}))
        ours, sdks = requests[-2], requests[-1]
        assert ours.content == sdks.content and ours.url == sdks.url and ours.method == sdks.method
        assert dict(ours.headers) == dict(sdks.headers)
    body = json.loads(requests[0].content)
    assert body["messages"] == messages and list(body) == ["model", "messages", "max_tokens", "temperature"]


def _pixels(url: str):
    import base64
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    return image.format, image.mode, image.size, image.tobytes()


def test_the_pipelined_messages_are_the_hosts():
    from lmms_eval.protocol import ChatMessages
    from PIL import Image

    from lmms_eval_tasks.models.openai_pipelined import EncodingCache, cached_chat_messages

    image = Image.new("RGB", (7, 3), (9, 8, 7))
    raw = [
        {"role": "system", "content": [{"type": "text", "text": "be brief"}]},
        {"role": "user", "content": [{"type": "image", "url": image}, {"type": "text", "text": "what?"}]},
    ]
    cache = EncodingCache(4)
    ours = cached_chat_messages(cache)(messages=raw).to_openai_messages()
    hosts = ChatMessages(messages=raw).to_openai_messages()
    our_url, host_url = (messages[1]["content"][0]["image_url"].pop("url") for messages in (ours, hosts))
    assert ours == hosts and _pixels(our_url) == _pixels(host_url)  # a faster PNG of the same pixels
    assert our_url.startswith("data:image/png;base64,")
    again = cached_chat_messages(cache)(messages=raw).to_openai_messages()
    assert again[1]["content"][0]["image_url"]["url"] is our_url
    assert (cache.hits, cache.misses) == (1, 1)  # the second request's image: encoded once, URL included


def test_the_fast_png_decodes_to_the_pixels_pillow_writes_and_leaves_the_rest_to_pillow():
    import io

    import numpy as np
    from PIL import Image

    from lmms_eval_tasks.models.openai_pipelined import fast_png

    noise = np.random.default_rng(0).integers(0, 256, (37, 53, 4), dtype=np.uint8)
    cases = (("RGB", noise[..., :3]), ("RGBA", noise), ("L", noise[..., 0]), ("RGB", noise[:1, :1, :3]))
    for mode, pixels in cases:
        image = Image.fromarray(np.ascontiguousarray(pixels), mode)
        decoded = Image.open(io.BytesIO(fast_png(image)))
        assert (decoded.format, decoded.mode, decoded.size) == ("PNG", mode, image.size)
        assert decoded.tobytes() == image.tobytes()
    profiled = Image.new("RGB", (4, 4))
    profiled.info["icc_profile"] = b"profile"
    keyed = Image.new("RGB", (4, 4))
    keyed.info["transparency"] = (0, 0, 0)
    others = (Image.new(mode, (4, 4)) for mode in ("P", "I;16", "LA"))
    for image in (profiled, keyed, *others):
        assert fast_png(image) is None  # Pillow's PNG says more than the pixels: the host's encoder


def test_a_build_waiting_for_an_image_another_build_makes_frees_its_slot():
    from lmms_eval_tasks.framework.work_slots import holding

    slots, memo = threading.BoundedSemaphore(2), ImageMemo(4)
    computing, waiting, done = threading.Event(), threading.Event(), threading.Event()

    def make():
        computing.set()
        assert done.wait(10)
        return "image"

    def build():
        with holding(slots):
            return memo.get("a", make)

    results = []
    owner = threading.Thread(target=lambda: results.append(build()))
    owner.start()
    assert computing.wait(10)
    waiter = threading.Thread(target=lambda: (waiting.set(), results.append(build())))
    waiter.start()
    assert waiting.wait(10)
    free = False
    for _ in range(200):  # the waiter gives its slot back once it waits for the owner's image
        if slots.acquire(timeout=0.05):
            free = True
            slots.release()
            break
    done.set()
    owner.join(10)
    waiter.join(10)
    assert free and results == ["image", "image"]
    assert slots.acquire(blocking=False) and slots.acquire(blocking=False)  # both slots back afterwards


def test_the_pipelined_client_keeps_a_connection_alive_for_each_request_in_flight():
    from lmms_eval_tasks.models.openai_pipelined import OpenAIPipelined

    def kept_alive(model):
        return model.client._client._transport._pool._max_keepalive_connections

    settings = {"base_url": "http://127.0.0.1:9/v1", "api_key": "sk-test", "model_version": "m"}
    assert kept_alive(OpenAIPipelined(num_concurrent=32, **settings)) == 100  # the SDK's default suffices
    wide = OpenAIPipelined(num_concurrent=256, **settings)
    assert kept_alive(wide) == 256 and wide.bodies.client is wide.client
    assert str(wide.client.base_url) == "http://127.0.0.1:9/v1/" and wide.client.api_key == "sk-test"


def test_answers_to_other_request_settings_are_asked_again(tmp_path, monkeypatch):
    """The host's keys omit settings the OpenAI-compatible clients send (presence_penalty, frequency_penalty,
    seed) and the image encoding they read from the environment (LMMS_IMAGE_ENCODE_FORMAT, _JPEG_QUALITY): a
    rerun that changes one of them must not reuse the answers to the other requests."""
    from lmms_eval.api.instance import Instance
    from lmms_eval.caching.response_cache import ResponseCache

    status = patches.check_patch("cache_request_settings")
    assert status.state == "applies", status
    assert patches.apply_patch("cache_request_settings").state == "applied"
    monkeypatch.setenv(resume.RUN_ID_ENV, "settings")
    for name in ("LMMS_IMAGE_ENCODE_FORMAT", "LMMS_IMAGE_JPEG_QUALITY"):
        monkeypatch.delenv(name, raising=False)

    def asked(**settings: object) -> int:
        arguments = ("question", {"temperature": 0, "max_new_tokens": 4, **settings}, None, 0, "task", "x")
        request = Instance("generate_until", arguments, 0, {"task": "task", "doc_id": 0, "repeats": 1})
        model = Model()
        cache = ResponseCache.create(str(tmp_path), model="openai", model_args="model_version=m")
        assert cache.execute(model, "generate_until", [request]) == ["answer 0"]
        cache.finalize(success=True)
        return sum(model.calls)

    assert [asked(), asked(), asked(presence_penalty=1.0), asked(presence_penalty=1.0)] == [1, 0, 1, 0]
    assert [asked(frequency_penalty=0.5), asked(seed=7), asked(seed=7)] == [1, 1, 0]
    monkeypatch.setenv("LMMS_IMAGE_ENCODE_FORMAT", "JPEG")
    assert [asked(), asked()] == [1, 0]
    monkeypatch.setenv("LMMS_IMAGE_JPEG_QUALITY", "95")
    assert [asked(), asked()] == [1, 0]
    monkeypatch.delenv("LMMS_IMAGE_ENCODE_FORMAT")
    monkeypatch.delenv("LMMS_IMAGE_JPEG_QUALITY")
    assert asked() == 0  # PNG (the host's default) again: the first answer


def test_answers_cut_at_the_token_limit_are_scored_counted_and_warned():
    from lmms_eval.api.instance import GenerationResult

    from lmms_eval_tasks.framework.cuts import table_label
    from lmms_eval_tasks.tasks.vrb.hooks import HOOKS

    failures.clear_failures()
    cut = failures.cut_reply("a red ca", "length")
    assert cut == "a red ca" and failures.is_cut([GenerationResult(text=cut)])
    assert type(failures.cut_reply("yes", "stop")) is str and failures.cut_reply(None, "length") is None
    doc = {"question_id": 1, "question": "What?", "answers": ["a red car"] * 10, "image_id": 3}
    doc |= {"multiple_choice_answer": "a red car", "pack_task": "vrb_sample_clean"}
    doc |= {"question_type": "what color", "answer_type": "other"}
    whole, truncated = (HOOKS.process_results(doc, [answer]) for answer in ("a red car", cut))
    whole_record, cut_record = (next(iter(result.values())) for result in (whole, truncated))
    assert failures.CUT_KEY not in whole_record and cut_record.pop(failures.CUT_KEY) is True
    assert cut_record == {**whole_record, "prediction": "a red ca"}  # an answer, scored as given
    assert failures.note_cut("vrb_sample_clean", [whole_record, cut_record | {failures.CUT_KEY: True}]) == 1
    label = table_label("vrb_sample_clean", "vrb_sample_clean")
    assert label.endswith("[1 of 2 answers cut at max_new_tokens]")
    (line,) = failures.cut_lines()
    assert line.startswith("lmms_eval: warning: vrb_sample_clean: 1 of 2 answers were cut")
    assert "max_new_tokens" in line
    failures.clear_failures()
    assert failures.cut_lines() == []


def _pipelined_run(server, monkeypatch, count: int, model_class=None, **model_args):
    """``count`` text requests through ``openai_pipelined`` (or ``model_class``) against ``server``:
    (answers, model)."""
    from lmms_eval.api.instance import Instance

    from lmms_eval_tasks.models.openai_pipelined import OpenAIPipelined

    model_class = model_class or OpenAIPipelined
    model = model_class(base_url=server.base_url, api_key="sk-test", model_version="m", **model_args)
    model.task_dict = {"t": {"test": [{"q": f"question {index}"} for index in range(count)]}}

    def doc_to_messages(doc):
        return [{"role": "user", "content": [{"type": "text", "text": doc["q"]}]}]

    requests = [
        Instance(
            "generate_until",
            ("", doc_to_messages, {"max_new_tokens": 8}, index, "t", "test"),
            0,
            {"task": "t", "doc_id": index, "repeats": 1},
        )
        for index in range(count)
    ]
    return model.generate_until(requests), model


def test_a_hung_server_stops_the_run_after_a_bounded_number_of_attempts(monkeypatch, capsys):
    from fake_openai import FakeOpenAIServer, Fault

    from lmms_eval_tasks.framework.server_requests import ServerDown

    monkeypatch.setenv("LMMS_EVAL_TASKS_SERVER_BREAKER", "2")
    with FakeOpenAIServer(faults=lambda call: Fault("timeout", sleep=30)) as server:
        settings = {"timeout": 1, "max_retries": 2, "retry_backoff_s": 0, "num_concurrent": 2}
        with pytest.raises(ServerDown) as stopped:
            _pipelined_run(server, monkeypatch, 12, payload_workers=1, **settings)
        # two failed requests, or a request's bound (2 s) of timeouts with a new request's, open the breaker;
        # at most three threads send meanwhile, two attempts each
        assert 4 <= server.call_count() <= (2 + 3) * 2
    message = str(stopped.value.code)
    rules = ("failed 2 requests in a row, each after 2 attempts (timeout after 1 s)", "nothing for 2 s")
    assert any(rule in message for rule in rules), message
    assert "rerun the same command" in message
    bound = capsys.readouterr().err
    assert "each attempt waits at most 1 s (--model_args timeout), 2 attempts 0 s apart" in bound
    assert "a request fails after at most 2 s" in bound


def test_a_request_still_waiting_is_logged_with_its_task_and_document(monkeypatch):
    """The host's chat ``openai`` client (patched by server_timeouts) against a server slow on two calls."""
    from fake_openai import FakeOpenAIServer, Fault
    from lmms_eval.api.instance import Instance
    from lmms_eval.models.chat.openai import OpenAICompatible
    from loguru import logger

    from lmms_eval_tasks.framework import server_requests

    assert patches.apply_patch("server_timeouts").state in ("applied", "not needed")
    monkeypatch.setattr(server_requests, "STUCK_AFTER_S", 0.4)  # read by the watcher of each new guard
    questions = ["how many cats?", "what colour?", "what colour?"]  # the last two ask the same

    def messages(doc):
        return [{"role": "user", "content": [{"type": "text", "text": doc["q"]}]}]

    def slow(call):  # requests arrive in any order: slow the cats one and the first of the two "colour" ones
        first_colour = "colour" in call.prompt and call.attempt == 0
        return Fault("timeout", sleep=1.5) if "cats" in call.prompt or first_colour else None

    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(str(message)), level="WARNING")
    try:
        with FakeOpenAIServer(reply=lambda prompt: "2", faults=slow) as server:
            model = OpenAICompatible(base_url=server.base_url, api_key="k", model_version="m", timeout=10)
            model.task_dict = {"t": {"test": [{"q": question} for question in questions]}}
            requests = [
                Instance(
                    "generate_until",
                    (question, messages, {"max_new_tokens": 4}, index, "t", "test"),
                    0,
                    {"task": "t", "doc_id": index, "repeats": 1},
                )
                for index, question in enumerate(questions)
            ]
            answers = model.generate_until(requests)
    finally:
        logger.remove(sink)
    assert [answer.text for answer in answers] == ["2", "2", "2"]
    stuck = [line for line in lines if "for its answer" in line]
    assert any("(task t, document 0; timeout 10 s per attempt)" in line for line in stuck), lines
    assert any("(task t, document 1 or one of 1 others asking the same;" in line for line in stuck), lines


def test_a_request_still_waiting_on_the_pipelined_client_is_logged_with_its_task_and_document(monkeypatch):
    from fake_openai import FakeOpenAIServer, Fault
    from loguru import logger

    from lmms_eval_tasks.framework import server_requests

    monkeypatch.setattr(server_requests, "STUCK_AFTER_S", 0.4)
    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(str(message)), level="WARNING")
    try:
        slow = {"faults": lambda call: Fault("timeout", sleep=1.5) if "question 1" in call.prompt else None}
        with FakeOpenAIServer(reply=lambda prompt: "2", **slow) as server:
            answers, _ = _pipelined_run(server, monkeypatch, 3, timeout=10, max_retries=1, retry_backoff_s=0)
    finally:
        logger.remove(sink)
    assert [answer.text for answer in answers] == ["2", "2", "2"]
    stuck = [line for line in lines if "for its answer" in line]
    assert stuck and all("(task t, document 1; timeout 10 s per attempt)" in line for line in stuck), lines


def test_rate_limits_are_paced_not_counted_and_cut_replies_are_marked(monkeypatch, capsys):
    from fake_openai import FakeOpenAIServer, Fault

    from lmms_eval_tasks.framework.failed_generations import CutReply
    from lmms_eval_tasks.framework.server_requests import DEFAULT_TIMEOUT_S

    monkeypatch.setenv("LMMS_EVAL_TASKS_SERVER_BREAKER", "1")

    def question(prompt):
        return json.loads(prompt)[0]["text"]  # the server sees the content parts

    def faults(call):
        if call.attempt == 0 and question(call.prompt)[-1] in "012":
            return Fault("rate_limit", retry_after="0.05")
        return Fault("cut") if question(call.prompt).endswith("3") else None

    with FakeOpenAIServer(reply=lambda prompt: f"answer to {question(prompt)}", faults=faults) as server:
        answers, model = _pipelined_run(server, monkeypatch, 5, max_retries=2, retry_backoff_s=0)
        assert server.call_count() == 8  # three 429s, each asked again once; no breaker despite 1
    texts = [answer.text for answer in answers]
    assert texts == [f"answer to question {index}" for index in range(5)]
    assert [type(text) is CutReply for text in texts] == [False, False, False, True, False]
    assert model.client.timeout == DEFAULT_TIMEOUT_S and model.client.max_retries == 0
    assert f"each attempt waits at most {DEFAULT_TIMEOUT_S:g} s (default" in capsys.readouterr().err


def test_a_reply_trickled_a_byte_at_a_time_fails_its_attempt_after_the_timeout(monkeypatch):
    """The SDK's timeout bounds each read: a reply trickled over 8 s was an answer despite timeout=1. The
    deadline counts from the sending: headers after 0.6 s and a body trickled over 0.6 s more was an answer
    (the deadline counted from the headers)."""
    from fake_openai import FakeOpenAIServer, Fault

    settings = {"timeout": 1, "max_retries": 1, "retry_backoff_s": 0}
    for latency, trickle in ((0, 8), (0.6, 0.6)):
        with FakeOpenAIServer(
            faults=lambda call, spread=trickle: Fault("trickle", sleep=spread), latency=latency
        ) as server:
            answers, _ = _pipelined_run(server, monkeypatch, 1, **settings)
        assert answers[0].text == "[LMMS_EVAL_REQUEST_FAILED after 1 retries] Request timed out.", latency


def test_headers_trickled_a_byte_at_a_time_fail_their_attempt_after_the_timeout(monkeypatch):
    """Each read of the headers was bounded, not the headers: a server sending a header byte every 0.25 s
    held an attempt of timeout=1 for as long as it kept sending (for ever: no stop, no breaker)."""
    from fake_openai import FakeOpenAIServer, Fault

    with FakeOpenAIServer(faults=lambda call: Fault("trickle_headers", sleep=20)) as server:
        started = time.monotonic()
        answers, _ = _pipelined_run(server, monkeypatch, 1, timeout=1, max_retries=2, retry_backoff_s=0)
        seconds = time.monotonic() - started
    assert answers[0].text == "[LMMS_EVAL_REQUEST_FAILED after 2 retries] Request timed out."
    assert seconds < 10  # 2 attempts of at most 1 s each (the headers took 20 s an attempt)


def test_a_server_error_echoing_the_request_headers_leaves_no_key_in_the_failure(monkeypatch):
    """A proxy's error page echoing the headers put ``Bearer <key>`` in the failure text, which the host
    logs and writes to the response cache's audit file."""
    from fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(faults=lambda call: "echo_headers_500") as server:
        answers, _ = _pipelined_run(server, monkeypatch, 1, max_retries=1, retry_backoff_s=0)
    assert "request headers were" in answers[0].text and "authorization" in answers[0].text
    assert "sk-test" not in answers[0].text


def test_the_stop_line_says_which_limit_stopped_the_run():
    """With 5 attempts a request, 3 x 16 failed attempts open the breaker before 16 failed requests: the
    line said "failed 16 requests in a row, each after 5 attempts" after 48 attempts."""
    from lmms_eval_tasks.framework.server_requests import ServerGuard

    guard = ServerGuard("http://server/v1", timeout=3, attempts=5, backoff=0)
    guard.breaker.threshold = 2
    for payload in ([1], [2]):  # two requests, three failed attempts each, well within a request's 15 s
        for _ in range(3):
            guard._failed(TimeoutError("Request timed out."), payload, time.monotonic())
    assert guard.breaker.tripped == "attempts"
    assert "failed 6 attempts in a row (5 a request; timeout after 3 s)" in guard._down_message()
    guard._failed(TimeoutError("Request timed out."), [3], time.monotonic() - 15)  # sent 15 s ago
    guard._failed(TimeoutError("Request timed out."), [4], time.monotonic())  # a new request, sent since
    assert guard.breaker.tripped == "hung"
    assert "answered nothing for 15 s, the longest a request may take: every attempt timed out after 3 s" in (
        guard._down_message()
    )


def test_two_requests_that_hang_in_a_row_do_not_stop_a_server_that_answers():
    """The hung rule opened on two hanging requests in a row at one in flight, and a rerun then asked the
    same two first: 20 of 36 documents asked, then 2 a rerun, for ever. A one-token request (``probe``)
    tells a server that answers (the run goes on) from a hung one."""
    from lmms_eval_tasks.framework.server_requests import ServerGuard

    def probe(answers: bool) -> str:
        if not answers:
            raise TimeoutError("Request timed out.")
        return "a reply"

    for answers in (True, False):
        guard = ServerGuard("http://server/v1", timeout=3, attempts=1, backoff=0)
        guard.probe = lambda answers=answers: probe(answers)
        guard._failed(TimeoutError("Request timed out."), [1], time.monotonic() - 3)
        guard._failed(TimeoutError("Request timed out."), [2], time.monotonic())  # a new request, sent since
        assert guard.down is not answers


def test_the_stop_line_leaves_out_the_key_an_error_echoes():
    """An error echoing the model's API key (no ``sk-`` or ``Bearer`` to recognise it by) was scrubbed in the
    failure but not in the stop line (the last error), which the launcher prints and every refused attempt
    repeats."""
    from lmms_eval_tasks.framework.server_requests import ServerGuard

    guard = ServerGuard("http://server/v1", timeout=3, attempts=1, backoff=0)
    guard.secrets, guard.breaker.threshold = ("QwErTy123456secret",), 1
    guard._failed(ValueError("key QwErTy123456secret rejected"), [1], time.monotonic())
    assert guard.down and "key [REDACTED] rejected" in guard._down_message()


def test_a_storm_of_rate_limits_that_fails_every_request_stops_the_run(monkeypatch):
    """A 429 attempt is paced, not counted; but requests that all end failed on 429s (a quota spent, a
    server refusing everyone) are failed requests in a row: before, the run asked every document."""
    from fake_openai import FakeOpenAIServer, Fault

    from lmms_eval_tasks.framework.server_requests import ServerDown

    monkeypatch.setenv("LMMS_EVAL_TASKS_SERVER_BREAKER", "2")
    with FakeOpenAIServer(faults=lambda call: Fault("rate_limit", retry_after="0.01")) as server:
        settings = {"max_retries": 2, "retry_backoff_s": 0, "num_concurrent": 2}
        with pytest.raises(ServerDown) as stopped:
            _pipelined_run(server, monkeypatch, 12, payload_workers=1, **settings)
        assert 4 <= server.call_count() <= (2 + 3) * 2  # as a hung server: not 12 requests x 2 attempts
    message = str(stopped.value.code)  # it names what failed: before, "(timeout)"
    assert "each after 2 attempts (HTTP 429 rate limit, Retry-After 0.01 s)" in message
    assert "timeout" not in message.lower()


def test_only_timeouts_for_one_requests_bound_new_requests_included_open_the_breaker():
    """The hung rule: a slow server answering within the timeout never times out; one timing out now and
    then answers in between; a few slow requests retried alone are no hung server. Only a request's bound of
    nothing but timeouts, a request first sent after the first of them included, opens it."""
    from lmms_eval_tasks.judges.circuit_breaker import CircuitBreaker

    breaker, now = CircuitBreaker(16, hung_after=19), time.monotonic()
    for sent in (now - 90, now - 60, now - 30):  # timeouts, each followed by an answer
        breaker.failed_attempt("timeout", sent, first=True)
        breaker.success()
    for sent in (now - 40, now - 30, now - 20, now - 10):  # two slow requests retried alone for 40 s
        breaker.failed_attempt("timeout", sent, first=sent < now - 25)
    assert breaker.tripped is None
    breaker.failed_attempt("HTTP 500")  # another failure ends the silence
    breaker.failed_attempt("timeout", time.monotonic(), first=True)
    assert breaker.tripped is None  # a new request, but it begins the silence
    breaker.failed_attempt("timeout", now - 20)  # a retry sent 20 s ago: the silence began then
    assert breaker.tripped is None
    breaker.failed_attempt("timeout", time.monotonic(), first=True)  # and a new request failed too
    assert breaker.tripped == "hung" and breaker.open
    never = CircuitBreaker(0, hung_after=19)  # LMMS_EVAL_TASKS_SERVER_BREAKER=0: never opens
    never.failed_attempt("timeout", now - 100)
    never.failed_attempt("timeout", time.monotonic(), first=True)
    assert not never.open


@pytest.mark.parametrize("client", ["openai_pipelined", "openai"])
def test_a_reply_with_an_error_body_fails_saying_what_the_server_said(monkeypatch, client):
    """An HTTP 200 carrying ``{"error": ...}`` (a proxy, a gateway) was "'NoneType' object is not
    subscriptable"; the failure names the server's message, without the key it echoed."""
    import fake_openai
    from lmms_eval.models.chat.openai import OpenAICompatible

    error = {"error": {"message": "upstream model overloaded (key sk-test)", "code": 503}}
    monkeypatch.setattr(fake_openai, "_completion", lambda *args: error)
    assert patches.apply_patch("server_timeouts").state in ("applied", "not needed")
    with fake_openai.FakeOpenAIServer() as server:
        model_class = {"openai": OpenAICompatible}.get(client)
        answers, _ = _pipelined_run(server, monkeypatch, 1, model_class, max_retries=2, retry_backoff_s=0)
        assert server.call_count() == 2  # a failed attempt, asked again
    expected = "[LMMS_EVAL_REQUEST_FAILED after 2 retries] the server replied without choices: upstream model"
    assert answers[0].text.startswith(expected) and "sk-test" not in answers[0].text, answers[0].text


def test_a_hung_judge_endpoint_stops_after_its_failed_items_in_a_row(tmp_path, monkeypatch):
    """The judge shares the breaker but not its timeouts rule (two slow items in a row are no hung judge:
    tests/judges/test_judges_openai.py): 3 failed items in a row here, each after its two attempts."""
    from fake_openai import FakeOpenAIServer, Fault, isolate_judge_env

    from lmms_eval_tasks.judges import JudgeRequest, get_judge

    isolate_judge_env(monkeypatch, tmp_path)
    with FakeOpenAIServer(faults=lambda call: Fault("timeout", sleep=5)) as server:
        settings = {"timeout": 0.3, "max_retries": 1, "backoff_base": 0.005, "concurrency": 1}
        judge = get_judge(
            "openai", base_url=server.base_url, api_key="sk-test", circuit_breaker=3, **settings
        )
        replies = judge.judge([JudgeRequest(f"item {index}: right?") for index in range(10)])
        assert server.call_count() == 6  # the first 3 items' two attempts each; 7 skipped
    assert all(row[0].text is None for row in replies)
    assert all("circuit breaker open" in row[0].error for row in replies[3:]), replies[3][0].error


def test_a_second_run_on_one_cache_store_is_refused_while_the_first_holds_it(tmp_path, monkeypatch):
    import os
    import subprocess
    import sys

    monkeypatch.setenv(resume.RUN_ID_ENV, "run-a")
    argv = ["--use_cache", str(tmp_path / "cache")]
    holder = subprocess.Popen(  # another process holding the store of run-a (as a first run would)
        [sys.executable, "-c", "import sys; from lmms_eval_tasks.host import resume; "
         f"print(resume.claim_cache({argv!r}), flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ},
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "None"  # the first run has it
        refusal = resume.claim_cache(argv)
        assert refusal.startswith(f"lmms_eval: the response cache {tmp_path / 'cache'} is in use by another")
        assert f"(pid {holder.pid})" in refusal and resume.RUN_ID_ENV in refusal
        monkeypatch.setenv(resume.RUN_ID_ENV, "run-b")
        assert resume.claim_cache(argv) is None  # its own run id: its own store
    finally:
        holder.communicate("")
    monkeypatch.setenv(resume.RUN_ID_ENV, "run-a")
    assert resume.claim_cache(argv) is None  # the first run ended: the store is free


def test_accelerate_cpu_with_several_processes_is_warned_to_run_one():
    from lmms_eval_tasks.host.launcher import one_process_warning

    launch = ["python", "/venv/bin/accelerate", "launch", "--cpu", "--num_processes", "2", "-m", "x"]
    warning = one_process_warning(launch)
    assert "runs ONE process" in warning and "--multi_gpu" in warning
    assert one_process_warning([*launch[:3], "--multi_gpu", *launch[3:]]) is None
    assert one_process_warning([*launch[:5], "1", *launch[6:]]) is None
    assert one_process_warning(["bash", "run.sh"]) is None
