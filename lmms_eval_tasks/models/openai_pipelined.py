"""``--model openai_pipelined``: the host's ``openai`` chat client with the client no longer the bottleneck.

lmms-eval 0.7.3's ``openai`` model builds every request's payload (the task's images through
``doc_to_messages``, each encoded to PNG and base64) one at a time on its dispatch thread, so however large
``num_concurrent`` is, one CPU core paces the run and at most one or two requests are in flight. This model
subclasses it and changes only how the work is scheduled:

- payloads are built by ``payload_workers`` threads (default: the CPU count) while up to ``num_concurrent``
  requests are in flight (PNG encoding and the pack's corruptions release the GIL for most of their time);
- an image object met again (VRB's corrupted image is the same object for all questions on it, from the
  task's bounded cache) is encoded once: a bounded LRU of encodings (``image_cache_items``, default 256);
- the requests are the host's own: the same ``ChatMessages.to_openai_messages`` conversion and encoder, the
  same payload fields, retries (``max_retries``, ``retry_backoff_s``) and failure text
  (``[LMMS_EVAL_REQUEST_FAILED after N retries] ...``) and the same answers, in request order.

Not carried over: the host's adaptive concurrency and prefix-aware ordering (concurrency is fixed at
``num_concurrent``). Why a pack model and not a patch of the host's client: docs/models.md.
"""

from __future__ import annotations

import os
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


def cached_chat_messages(cache: EncodingCache) -> type[ChatMessages]:
    """The host's ``ChatMessages`` whose ``encode_image`` looks in ``cache`` first (same encoder)."""

    class CachedChatMessages(ChatMessages):
        def encode_image(
            self, image: Any, cache_dict: Any = None, image_format: str = "PNG", quality: Any = None
        ) -> str:
            if isinstance(image, str):  # a path: the host's own path cache handles it
                return super().encode_image(image, cache_dict, image_format, quality)
            encode = super().encode_image
            key = (str(image_format).upper(), quality)
            return cache.encoded(image, key, lambda: encode(image, cache_dict, image_format, quality))

    return CachedChatMessages


class OpenAIPipelined(OpenAICompatible):
    """The host's ``openai`` chat model with payloads built in parallel and each image encoded once."""

    is_simple = False

    def __init__(
        self, *args: Any, payload_workers: int = 0, image_cache_items: int = 256, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.payload_workers = max(1, int(payload_workers) or (os.cpu_count() or 1))
        self.encodings = EncodingCache(int(image_cache_items))
        self._messages_class = cached_chat_messages(self.encodings)

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
    def send(self, payload: dict[str, Any]) -> GenerationResult:
        """The server's answer to ``payload``, or the host's failure marker after ``max_retries`` attempts."""
        last_error = "unknown error"
        for attempt in range(self.max_retries):
            try:
                response = self.client.chat.completions.create(**payload)
                text = response.choices[0].message.content
                usage = getattr(response, "usage", None)
                input_tokens = getattr(usage, "prompt_tokens", 0) or 0 if usage else 0
                output_tokens = (
                    (getattr(usage, "completion_tokens", 0) or 0) if usage else len((text or "").split())
                )
                details = getattr(usage, "completion_tokens_details", None) if usage else None
                reasoning_tokens = (getattr(details, "reasoning_tokens", 0) or 0) if details else 0
                log_usage(
                    model_name=self.model_version,
                    task_name=None,
                    input_tokens=input_tokens,
                    output_tokens=output_tokens,
                    reasoning_tokens=reasoning_tokens,
                    source="model",
                )
                counts = TokenCounts(input_tokens, output_tokens, reasoning_tokens)
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

    def generate_until(self, requests: list[Any]) -> list[GenerationResult]:
        if not requests:
            return []
        requests = list(requests)
        for request in requests:
            _validate_single_choice_n(request.args[2])
        building = threading.BoundedSemaphore(self.payload_workers)

        def answer(request: Any) -> GenerationResult:
            with building:  # at most payload_workers payloads built at once; sending is not limited by it
                payload = self.build_payload(request)
            if is_budget_exceeded():
                return GenerationResult(text=BUDGET_MARKER, token_counts=TokenCounts())
            return self.send(payload)

        responses: list[GenerationResult | None] = [None] * len(requests)
        workers = self.num_concurrent + self.payload_workers
        window = 2 * workers  # requests handed to the pool ahead of completion (bounded memory)
        progress = tqdm(total=len(requests), disable=(self.rank != 0), desc="Model Responding")
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai-pipelined") as pool:
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
        progress.close()
        return [response or GenerationResult(text="", token_counts=TokenCounts()) for response in responses]
