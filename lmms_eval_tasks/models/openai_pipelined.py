"""``--model openai_pipelined``: the host's ``openai`` chat client with the client no longer the bottleneck.

lmms-eval 0.7.3's ``openai`` builds each payload (images to PNG and base64) one at a time on its dispatch
thread: one core paces the run. Here payloads are built by ``payload_workers`` threads while
``num_concurrent`` requests are in flight, each image encoded once (``EncodingCache``) as a faster PNG of the
same pixels (``fast_png``) or the file its official pipeline sends (``framework/sent_images.py``), each body
serialised once (``RequestBodies``), every attempt under ``framework/server_requests.py``'s rules. Payload
fields, retries, failure text and answers are the host's; docs/models.md ("Model servers") says why.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import threading
import time
from collections import OrderedDict
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from lmms_eval.api.instance import GenerationResult, TokenCounts
from lmms_eval.models.chat.openai import OpenAICompatible, _validate_single_choice_n
from lmms_eval.models.model_utils.usage_metrics import is_budget_exceeded, log_usage
from lmms_eval.models.simple.openai import _get_max_new_tokens
from lmms_eval.protocol import ChatMessages
from loguru import logger
from tqdm import tqdm

from lmms_eval_tasks.framework.failed_generations import cut_reply
from lmms_eval_tasks.framework.sent_images import file_of
from lmms_eval_tasks.framework.server_requests import guard_model, guard_of, stop_when_down
from lmms_eval_tasks.framework.work_slots import holding, wait_for
from lmms_eval_tasks.judges.reply_deadline import bound_replies

FAILURE_PREFIX = "[LMMS_EVAL_REQUEST_FAILED after {retries} retries] "
BUDGET_MARKER = "[LMMS_EVAL_BUDGET_EXCEEDED]"


class EncodingCache:
    """Base64 encodings of image objects, least recently used first out; the image is kept with its encoding
    so its ``id`` cannot be reused by another object while the entry lives. An encoding being made by one
    thread is waited for, not made again, by the others. Thread-safe."""

    def __init__(self, items: int) -> None:
        self.items = max(0, int(items))
        self._entries: OrderedDict[tuple[Any, ...], tuple[Any, Future]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def encoded(self, image: Any, key: tuple[Any, ...], encode: Any) -> str:
        """``encode()`` once for this image object and key while the entry lives; its result otherwise."""
        if self.items == 0:
            with self._lock:
                self.misses += 1
            return encode()
        full_key = (id(image), *key)
        with self._lock:
            entry = self._entries.get(full_key)
            owner = entry is None or entry[0] is not image
            if owner:
                future: Future = Future()
                self._entries[full_key] = (image, future)
                while len(self._entries) > self.items:
                    self._entries.popitem(last=False)
                self.misses += 1
            else:
                future = entry[1]
                self._entries.move_to_end(full_key)
                self.hits += 1
        if owner:
            try:
                future.set_result(encode())
            except BaseException as error:
                future.set_exception(error)
                with self._lock:
                    if self._entries.get(full_key, (None, None))[1] is future:
                        del self._entries[full_key]
            return future.result()
        return wait_for(future)  # being encoded by another thread: a build slot held here is free meanwhile


_PNG_COLOUR_TYPES = {"L": (1, 0), "RGB": (3, 2), "RGBA": (4, 6)}  # mode: (channels, PNG colour type)


def fast_png(image: Any) -> bytes | None:
    """``image`` as a PNG with the same pixels as Pillow's, about 6x faster and mostly without the GIL: the
    "up" filter on every row and zlib level 1 with run-length matching, instead of Pillow's adaptive filter
    at level 6. None where Pillow's PNG says more than 8-bit L/RGB/RGBA pixels (an ICC profile, a
    transparency key, other modes): the host's encoder writes those."""
    import struct
    import zlib

    import numpy as np

    if image.mode not in _PNG_COLOUR_TYPES or {"icc_profile", "transparency"} & set(image.info):
        return None
    channels, colour_type = _PNG_COLOUR_TYPES[image.mode]
    width, height = image.size
    rows = np.asarray(image).reshape(height, width * channels)
    filtered = np.empty((height, width * channels + 1), dtype=np.uint8)
    filtered[:, 0] = 2  # filter type "up": each byte minus the one above (the first row: minus zero)
    filtered[0, 1:] = rows[0]
    np.subtract(rows[1:], rows[:-1], out=filtered[1:, 1:])
    compressor = zlib.compressobj(1, zlib.DEFLATED, 15, 8, zlib.Z_RLE)
    data = compressor.compress(filtered) + compressor.flush()

    def chunk(kind: bytes, content: bytes) -> bytes:
        checksum = struct.pack(">I", zlib.crc32(kind + content))
        return struct.pack(">I", len(content)) + kind + content + checksum

    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


def _mime_of(image_format: str) -> str:
    """The data URL's MIME type for the host's ``LMMS_IMAGE_ENCODE_FORMAT`` spelling (as the host)."""
    return f"image/{'jpeg' if image_format == 'JPG' else image_format.lower()}"


def cached_chat_messages(cache: EncodingCache) -> type[ChatMessages]:
    """The host's ``ChatMessages`` whose images are encoded once each (the host's encoder, looked up in
    ``cache`` first) and whose text-and-image messages become the host's OpenAI messages without building
    each data URL again."""

    class CachedChatMessages(ChatMessages):
        def encode_image(
            self, image: Any, cache_dict: Any = None, image_format: str = "PNG", quality: Any = None
        ) -> str:
            if isinstance(image, str):  # a path: the host's own path cache handles it
                return super().encode_image(image, cache_dict, image_format, quality)
            encode = super().encode_image
            key = (str(image_format).upper(), quality)
            return cache.encoded(image, key, lambda: encode(image, cache_dict, image_format, quality))

        def image_url(self, image: Any, image_format: str, quality: Any) -> str:
            """The data URL the host builds for ``image`` (or for the file it carries), made once."""
            carried = file_of(image)
            if carried is not None:
                mime, data = carried
                return cache.encoded(
                    image, ("file", mime), lambda: DataURL(mime, base64.b64encode(data).decode())
                )
            encode = super().encode_image
            mime = _mime_of(image_format)

            def data_url() -> DataURL:
                png = fast_png(image) if image_format == "PNG" else None
                if png is not None:
                    return DataURL(mime, base64.b64encode(png).decode("ascii"))
                return DataURL(mime, encode(image, None, image_format, quality))

            return cache.encoded(image, ("url", image_format, quality), data_url)

        def to_openai_messages(
            self, video_kwargs: dict[str, Any] | None = None, pass_video_url: bool = False
        ) -> list[dict[str, Any]]:
            contents = [content for message in self.messages for content in message.content]
            if any(
                content.type not in ("text", "image")
                or (content.type == "image" and isinstance(content.url, str))
                for content in contents
            ):  # videos, audio, image paths: the host's conversion as it is
                return super().to_openai_messages(video_kwargs=video_kwargs, pass_video_url=pass_video_url)
            image_format = os.getenv("LMMS_IMAGE_ENCODE_FORMAT", "PNG").upper()  # as the host reads them
            quality = (
                int(os.getenv("LMMS_IMAGE_JPEG_QUALITY", "85"))
                if image_format in {"JPEG", "JPG", "WEBP"}
                else None
            )
            messages = []
            for message in self.messages:
                parts: list[dict[str, Any]] = []
                for content in message.content:
                    if content.type == "text":
                        parts.append({"type": "text", "text": content.text})
                    else:
                        url = self.image_url(content.url, image_format, quality)
                        parts.append({"type": "image_url", "image_url": {"url": url}})
                messages.append({"role": message.role, "content": parts})
            return messages

    return CachedChatMessages


_SIMPLE_FIELDS = frozenset(
    {
        "messages",
        "model",
        "max_tokens",
        "temperature",
        "top_p",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "n",
    }
)
_COMPLETION_STUB = {
    "id": "probe",
    "object": "chat.completion",
    "created": 0,
    "model": "probe",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}],
}


class RequestBodies:
    """Chat-completions request bodies byte for byte as ``chat.completions.create`` serialises them, with
    each image's data URL spliced in instead of escaped again; the SDK's field order and value transform
    are learnt once per request shape from the SDK itself (a request captured in memory, never sent)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._token = secrets.token_hex(8)
        self._orders: dict[tuple[Any, ...], tuple[str, ...] | None] = {}
        self._lock = threading.Lock()

    def body(self, payload: dict[str, Any]) -> bytes | None:
        """The bytes ``create(**payload)`` would send, or None where this cannot vouch for them."""
        if not set(payload) <= _SIMPLE_FIELDS or not isinstance(payload.get("messages"), list):
            return None
        urls: list[str] = []
        light_messages = []
        shape: list[Any] = [tuple(payload)]
        for message in payload["messages"]:
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list) or set(message) != {"role", "content"}:
                return None
            parts = []
            for part in content:
                if not isinstance(part, dict):
                    return None
                image_url = part.get("image_url") if set(part) == {"type", "image_url"} else None
                plain = isinstance(image_url, dict) and set(image_url) == {"url"}
                url = image_url["url"] if plain else None
                if part.get("type") == "image_url" and isinstance(url, DataURL):
                    parts.append({"type": "image_url", "image_url": {"url": self._placeholder(len(urls))}})
                    urls.append(url)
                else:
                    parts.append(part)
                shape.append((message["role"], part.get("type"), tuple(sorted(part))))
            light_messages.append({"role": message["role"], "content": parts})
        light = {**payload, "messages": light_messages}
        key = tuple(map(repr, shape))
        with self._lock:
            known = key in self._orders
            order = self._orders.get(key)
        if not known:
            order = self._learn(light)
            with self._lock:
                self._orders[key] = order
        if order is None:
            return None
        text = _dumps({name: light[name] for name in order})
        pieces: list[bytes] = []
        for index, url in enumerate(urls):
            before, text = text.split(json.dumps(self._placeholder(index)), 1)
            pieces += [before.encode(), url.json]
        pieces.append(text.encode())
        return b"".join(pieces)

    def _placeholder(self, index: int) -> str:
        return f"lmms-eval-tasks-image-{self._token}-{index}"

    def _learn(self, light: dict[str, Any]) -> tuple[str, ...] | None:
        """The SDK's field order for this shape, if its body for ``light`` is exactly ours in that order."""
        try:
            import httpx2

            captured: list[bytes] = []

            def capture(request: Any) -> Any:
                captured.append(request.content)
                return httpx2.Response(200, json=_COMPLETION_STUB)

            with httpx2.Client(transport=httpx2.MockTransport(capture)) as http_client:
                self.client.copy(http_client=http_client, max_retries=0).chat.completions.create(**light)
            sdk_body = captured[0]
            order = tuple(json.loads(sdk_body))
            if set(order) != set(light) or _dumps({name: light[name] for name in order}).encode() != sdk_body:
                raise ValueError("the SDK's body differs from the payload's JSON")
            return order
        except Exception as error:  # noqa: BLE001 - any doubt: the SDK's own create() for this shape
            logger.info(f"openai_pipelined: request bodies through chat.completions.create ({error})")
            return None


def _dumps(value: Any) -> str:
    """JSON as the SDK writes request bodies (``openapi_dumps``: compact, UTF-8, no NaN)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class DataURL(str):
    """A ``data:<type>;base64,<base64>`` URL made here from an encoder's base64: nothing in it needs
    escaping in JSON, so its JSON string, ``json``, is the URL in quotes (checked on the short head only),
    made once per image for every request body that carries it."""

    json: bytes

    def __new__(cls, mime: str, encoded: str) -> DataURL:
        if not all(32 <= ord(char) < 127 and char not in '"\\' for char in mime):
            raise ValueError(f"unexpected MIME type {mime!r}")
        url = super().__new__(cls, f"data:{mime};base64,{encoded}")
        url.json = b'"' + url.encode("ascii") + b'"'
        return url


class OpenAIPipelined(OpenAICompatible):
    """The host's ``openai`` chat model with payloads built in parallel and each image encoded once."""

    is_simple = False

    def __init__(
        self, *args: Any, payload_workers: int = 0, image_cache_items: int = 64, **kwargs: Any
    ) -> None:
        from lmms_eval_tasks.judges.redact import safe_url

        super().__init__(*args, **kwargs)
        self.payload_workers = max(1, int(payload_workers) or (os.cpu_count() or 1))
        self.encodings = EncodingCache(int(image_cache_items))
        self._messages_class = cached_chat_messages(self.encodings)
        self._size_connection_pool()  # a copy keeps the timeout the guard may have given already
        given = kwargs.get("timeout")
        url = safe_url(str(self.client.base_url).rstrip("/"))
        self.guard = guard_of(self) or guard_model(self, given, url)
        bound_replies(self.client, self.guard.timeout)  # the pool's client, if sized after the guard
        self.bodies = RequestBodies(self.client)

    def _size_connection_pool(self) -> None:
        """A kept-alive connection for every request in flight: the SDK's client keeps 100 alive (of 1,000
        open), so a larger ``num_concurrent`` would open and close a connection per request beyond them."""
        from openai import DefaultHttpxClient
        from openai._constants import DEFAULT_CONNECTION_LIMITS

        wanted = int(self.num_concurrent)
        if wanted <= (DEFAULT_CONNECTION_LIMITS.max_keepalive_connections or 0):
            return
        import httpx2

        trust_env = bool(getattr(getattr(self.client, "_client", None), "trust_env", True))
        limits = httpx2.Limits(
            max_connections=max(wanted, DEFAULT_CONNECTION_LIMITS.max_connections or 0),
            max_keepalive_connections=wanted,
        )
        self.client = self.client.copy(http_client=DefaultHttpxClient(limits=limits, trust_env=trust_env))

    # -- the host's payload, built in a worker thread ---------------------------------------------------
    def build_payload(self, request: Any) -> dict[str, Any]:
        """The chat-completions payload the host's ``openai`` model sends for ``request``."""
        _, doc_to_messages, gen_kwargs, doc_id, task, split = request.args
        chat_messages = self._messages_class(messages=doc_to_messages(self.task_dict[task][split][doc_id]))
        request_gen_kwargs = dict(gen_kwargs)
        max_new_tokens = _get_max_new_tokens(request_gen_kwargs)
        if self.video_fps is not None and self.video_fps > 0:
            video_kwargs: dict[str, Any] = {"fps": self.video_fps}
        else:
            video_kwargs = {"nframes": self.max_frames_num}
        payload: dict[str, Any] = {
            "messages": chat_messages.to_openai_messages(
                video_kwargs=video_kwargs, pass_video_url=self.pass_video_url
            ),
            "model": self.model_version,
            "max_tokens": max_new_tokens,
            "temperature": request_gen_kwargs.get("temperature", 0),
        }
        for parameter in ("top_p", "seed", "presence_penalty", "frequency_penalty", "n"):
            value = request_gen_kwargs.get(parameter)
            if value is not None:
                payload[parameter] = value
        extra_body: dict[str, Any] = {}
        if self.pass_video_url:
            extra_body["media_io_kwargs"] = {"video": {"num_frames": int(self.max_frames_num)}}
        if self.enable_thinking_kwarg is not None:
            flag = self.enable_thinking_kwarg
            extra_body["chat_template_kwargs"] = {
                "enable_thinking": flag.lower() == "true" if isinstance(flag, str) else bool(flag)
            }
        if extra_body:
            payload["extra_body"] = extra_body
        if any(name in self.model_version for name in ("o1", "o3", "o4", "gpt-5")):
            payload.pop("temperature")
            payload.pop("max_tokens")
            payload["response_format"] = {"type": "text"}
            payload["max_completion_tokens"] = max_new_tokens
        return payload

    # -- one request, the host's retries and failure text -----------------------------------------------
    def send(self, payload: dict[str, Any], label: str = "a request") -> GenerationResult:
        """The server's answer to ``payload``, or the host's failure marker after ``max_retries`` attempts."""
        last_error = "unknown error"
        messages = payload.get("messages")
        for attempt in range(self.max_retries):
            try:  # timed out, paced, watched; the breaker stops the run (``server_requests``)
                response = self.guard.attempt(lambda: self.create(payload), messages, label)
                choice = response.choices[0]
                text = cut_reply(choice.message.content, choice.finish_reason)  # counted, warned
                usage = getattr(response, "usage", None)  # as the host: words counted without usage
                counts = TokenCounts(
                    getattr(usage, "prompt_tokens", 0) or 0,
                    (getattr(usage, "completion_tokens", 0) or 0) if usage else len((text or "").split()),
                    getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", 0) or 0,
                )
                log_usage(self.model_version, None, **vars(counts), source="model")
                return GenerationResult(text=text, token_counts=counts)
            except Exception as error:  # noqa: BLE001 - as the host: retried, then reported as the answer
                last_error = str(error)
                logger.info(f"Attempt {attempt + 1}/{self.max_retries} failed with error: {last_error}")
                if attempt == self.max_retries - 1:
                    logger.error(f"All {self.max_retries} attempts failed. Last error: {last_error}")
                else:
                    time.sleep(self.retry_backoff_s)
        preview = last_error.replace("\n", " ")[:200]
        return GenerationResult(
            text=FAILURE_PREFIX.format(retries=self.max_retries) + preview, token_counts=TokenCounts()
        )

    def create(self, payload: dict[str, Any]) -> Any:
        """``client.chat.completions.create(**payload)``: the same bytes posted through the SDK's ``post``
        when ``RequestBodies`` vouches for them (no second validation and escaping of the images)."""
        body = self.bodies.body(payload)
        if body is None:
            return self.client.chat.completions.create(**payload)
        from openai._base_client import make_request_options
        from openai.types.chat import ChatCompletion

        options = make_request_options(security={"bearer_auth": True})
        return self.client.post("/chat/completions", cast_to=ChatCompletion, content=body, options=options)

    def generate_until(self, requests: list[Any]) -> list[GenerationResult]:
        """The answers to ``requests``; the run stops once the server is down (``stop_when_down``)."""
        return stop_when_down(type(self)._answer_all, self, requests)

    def _answer_all(self, requests: list[Any]) -> list[GenerationResult]:
        if not requests:
            return []
        requests = list(requests)
        for request in requests:
            _validate_single_choice_n(request.args[2])
        building = threading.BoundedSemaphore(self.payload_workers)

        def answer(request: Any) -> GenerationResult:
            with holding(building):  # payload_workers builds at once (a waiting build frees its slot)
                payload = self.build_payload(request)
            if is_budget_exceeded():
                return GenerationResult(text=BUDGET_MARKER, token_counts=TokenCounts())
            _, _, _, doc_id, task, _ = request.args
            return self.send(payload, f"task {task}, document {doc_id}")

        responses: list[GenerationResult | None] = [None] * len(requests)
        workers = self.num_concurrent + self.payload_workers
        window = 2 * workers  # requests handed to the pool ahead of completion (bounded memory)
        progress = tqdm(total=len(requests), disable=(self.rank != 0), desc="Model Responding")
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai-pipelined")
        try:
            pending: dict[Any, int] = {}
            cursor = 0
            while cursor < len(requests) or pending:
                while cursor < len(requests) and len(pending) < window:
                    pending[pool.submit(answer, requests[cursor])] = cursor
                    cursor += 1
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    responses[pending.pop(future)] = future.result()
                    progress.update(1)
        except BaseException:  # ServerDown, SIGTERM: no queued request starts; running ones end by timeout
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        progress.close()
        return [response or GenerationResult(text="", token_counts=TokenCounts()) for response in responses]
