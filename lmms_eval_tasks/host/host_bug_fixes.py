"""Fixes for lmms-eval bugs, each small and self-contained so it can be offered upstream.

Each fix has a probe that runs the host's own code on a tiny input and shows whether the bug is still there
(``NOT_NEEDED`` once the host fixes it) and that the fix works on this host. The llava_hf fixes never copy a
host method: they run it on a ``CallView`` of the model wrapper that replaces, for that one call, the object
the bug is about (the processor, the model's logits), so concurrent calls share no swapped state.
docs/models.md ("lmms-eval bugs the pack fixes") gives each bug and the one-line upstream change.
Nothing here imports lmms-eval, torch or transformers at import time.
"""

from __future__ import annotations

import numbers
import types
from typing import Any

from lmms_eval_tasks.host.patch_kit import (
    APPLIES,
    MISMATCH,
    NOT_NEEDED,
    CallView,
    Touched,
    expect_parameters,
    is_marked,
    mark,
    unwrapped,
)

# --- loglikelihood_result: (log_prob, is_greedy) pairs stringified by the evaluator ------------------------


_PAIR_FIX = "_lmms_eval_tasks_pair_fix"


def _has_wrapper(function: Any, attribute: str) -> bool:
    """Whether one of the pack's wrappers around ``function`` carries ``attribute`` (two fixes wrap
    ``unwrap_generation_output``: each installs once, in either order)."""
    while function is not None:
        if getattr(function, attribute, False):
            return True
        function = getattr(function, "__wrapped__", None) if is_marked(function) else None
    return False


def is_loglikelihood_result(output: Any) -> bool:
    """True for a ``(log_prob, is_greedy)`` pair as ``lmms.loglikelihood`` returns it."""
    return (
        isinstance(output, tuple | list)
        and len(output) == 2
        and isinstance(output[0], numbers.Real)
        and not isinstance(output[0], bool)
        and isinstance(output[1], bool | numbers.Integral)
    )


def probe_loglikelihood_result() -> tuple[str, str]:
    import lmms_eval.evaluator as evaluator

    current = getattr(evaluator, "unwrap_generation_output", None)
    problem = expect_parameters("lmms_eval.evaluator.unwrap_generation_output", current, ["output"])
    if problem:
        return MISMATCH, problem
    try:
        kept, _ = unwrapped(current)((-1.5, False))
    except Exception as error:  # noqa: BLE001 - an unexpected host behaviour is a mismatch, not a crash
        return MISMATCH, f"unwrap_generation_output((-1.5, False)) raised {type(error).__name__}: {error}"
    if isinstance(kept, tuple):
        return NOT_NEEDED, "the host keeps (log_prob, is_greedy) pairs already"
    if not isinstance(kept, str):
        return MISMATCH, f"unwrap_generation_output turns a pair into {type(kept).__name__}, expected str"
    return APPLIES, "the host stringifies (log_prob, is_greedy) pairs; they are kept intact"


def install_loglikelihood_result() -> None:
    import lmms_eval.evaluator as evaluator

    current = evaluator.unwrap_generation_output
    if _has_wrapper(current, _PAIR_FIX):
        return

    def unwrap_generation_output(output: Any) -> tuple[Any, Any]:
        if is_loglikelihood_result(output):
            return (float(output[0]), bool(output[1])), None
        return current(output)

    unwrap_generation_output.__doc__ = current.__doc__
    setattr(unwrap_generation_output, _PAIR_FIX, True)
    evaluator.unwrap_generation_output = mark(unwrap_generation_output, current)


# --- no_text_result: a reply without text handed to process_results as "" ---------------------------------

_NO_TEXT_FIX = "_lmms_eval_tasks_no_text_fix"


def probe_no_text_result() -> tuple[str, str]:
    import lmms_eval.evaluator as evaluator
    from lmms_eval.api.instance import GenerationResult

    current = getattr(evaluator, "unwrap_generation_output", None)
    problem = expect_parameters("lmms_eval.evaluator.unwrap_generation_output", current, ["output"])
    if problem:
        return MISMATCH, problem
    try:
        text, _ = unwrapped(current)(GenerationResult(text=None))  # type: ignore[arg-type]
    except Exception as error:  # noqa: BLE001 - an unexpected host behaviour is a mismatch, not a crash
        name = type(error).__name__
        return MISMATCH, f"unwrap_generation_output(GenerationResult(text=None)) raised {name}"
    if text is not None:
        return NOT_NEEDED, f"the host turns a reply without text into {text!r}"
    return APPLIES, (
        "the host hands process_results \"\" for a reply without text (content null): a failed generation"
    )


def install_no_text_result() -> None:
    """A generation whose text is None (the server's content was null) reaches ``process_results`` as the
    pack's failure marker, not as the "" the host's ``ConfigurableTask.process_results`` would make of it."""
    import lmms_eval.evaluator as evaluator

    from lmms_eval_tasks.framework.failed_generations import NO_TEXT_MARKER

    current = evaluator.unwrap_generation_output
    if _has_wrapper(current, _NO_TEXT_FIX):
        return

    def unwrap_generation_output(output: Any) -> tuple[Any, Any]:
        text, counts = current(output)
        return (NO_TEXT_MARKER if text is None else text), counts

    unwrap_generation_output.__doc__ = current.__doc__
    setattr(unwrap_generation_output, _NO_TEXT_FIX, True)
    evaluator.unwrap_generation_output = mark(unwrap_generation_output, current)


# --- llava_hf_loglikelihood: the context tokenized without its images; is_greedy one token off -------------


def _no_empty_list(images: Any) -> Any:
    """``None`` for an empty image list (a LLaVA processor given ``[]`` yields pixel values the vision tower
    cannot unpack); anything else unchanged."""
    return None if images is not None and len(images) == 0 else images


class ContextWithItsImages:
    """The processor for one ``loglikelihood`` call: the context is tokenized with the images of the full
    text tokenized just before it, and an empty image list becomes ``None``.

    The host tokenizes ``prompt + continuation`` with the request's images, then the prompt alone without
    them: transformers 5 refuses ``<image>`` without images, and with transformers 4 the prompt length
    counted one token per image instead of the expanded image tokens (the loss mask was off).
    """

    def __init__(self, processor: Any) -> None:
        self._processor = processor
        self._images: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "images" in kwargs:
            self._images = kwargs["images"] = _no_empty_list(kwargs["images"])
        else:
            kwargs["images"] = self._images
        return self._processor(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._processor, name)


class PredictionsAtTheirTokens:
    """The model for one ``loglikelihood`` call: its logits shifted one position right, so position ``i``
    holds the prediction for token ``i``.

    The host compares ``logits.argmax(-1)[:, n:]`` with ``input_ids[:, n:]``, but a causal LM predicts token
    ``i`` at position ``i - 1``: ``is_greedy`` was one token off. The loss, computed inside the model from
    the labels, is unchanged.
    """

    def __init__(self, model: Any) -> None:
        self._model = model

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import torch

        outputs = self._model(*args, **kwargs)
        logits = outputs["logits"]
        outputs["logits"] = torch.cat([logits[:, :1], logits[:, :-1]], dim=1)
        return outputs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def loglikelihood_fixed(host_loglikelihood: Any) -> Any:
    """``LlavaHf.loglikelihood`` with the two fixes: the host's own method on a view of the wrapper whose
    processor and model are the per-call adapters above."""

    def loglikelihood(self: Any, requests: list[Any]) -> list[tuple[float, bool]]:
        view = CallView(
            self,
            _image_processor=ContextWithItsImages(self._image_processor),
            model=PredictionsAtTheirTokens(self.model),
        )
        return host_loglikelihood(view, requests)

    loglikelihood.__doc__ = host_loglikelihood.__doc__
    return mark(loglikelihood, host_loglikelihood)


class _ProbeBatch(dict):
    def to(self, *args: Any, **kwargs: Any) -> _ProbeBatch:
        return self


class _ProbeProcessor:
    """Stands in for a transformers 5 LLaVA processor: one token per character, ``<image>`` expanded to
    three tokens per image; it refuses ``<image>`` without images and an empty image list, as transformers
    5 (and the vision tower) do."""

    image_token = "<image>"

    def __call__(self, text: list[str], images: Any = None, return_tensors: str = "pt", **_: Any) -> Any:
        import torch

        (string,) = text
        count = string.count(self.image_token)
        if images is not None and len(images) == 0:
            raise ValueError("empty image list")
        if count != (len(images) if images is not None else 0):
            raise ValueError(f"{count} image tokens in the text but {len(images or [])} images")
        ids: list[int] = []
        for index, part in enumerate(string.split(self.image_token)):
            ids += [3] * 3 if index else []
            ids += [10 + ord(character) % 80 for character in part]
        return _ProbeBatch(input_ids=torch.tensor([ids]))


class _ProbeModel:
    """A causal LM whose every next-token prediction is right (position ``i`` predicts token ``i + 1``); it
    records how many label positions were left unmasked."""

    dtype = None

    def __init__(self) -> None:
        self.scored: list[int] = []

    def __call__(self, input_ids: Any, labels: Any = None, **_: Any) -> dict[str, Any]:
        import torch

        logits = torch.zeros(1, input_ids.shape[1], 100)
        logits[0, torch.arange(input_ids.shape[1] - 1), input_ids[0, 1:]] = 1.0
        self.scored.append(int((labels != -100).sum()))
        return {"loss": torch.tensor(1.0), "logits": logits}


class _ProbeTokenizer:
    chat_template = "probe"

    def apply_chat_template(self, messages: list[dict], tokenize: bool = False, **kwargs: Any) -> str:
        text = "".join(f"{message['role']}: {message['content']} " for message in messages)
        return text + ("assistant:" if kwargs.get("add_generation_prompt") else "")


def _probe_llava_hf(cls: type, **attributes: Any) -> Any:
    """A ``cls`` instance made without loading a model, with the attributes the host methods read."""
    instance = cls.__new__(cls)
    defaults = {
        "_rank": 1,  # no progress bars
        "_device": "cpu",
        "accelerator": types.SimpleNamespace(is_main_process=False, unwrap_model=lambda model: model),
        "chat_template": None,
        "batch_size_per_gpu": 1,
    }
    for name, value in {**defaults, **attributes}.items():
        setattr(instance, name, value)
    return instance


def _run_loglikelihood(method: Any, images: int) -> tuple[Any, list[int]]:
    """(result or the exception raised, unmasked label counts) of ``method`` on one request with
    ``images`` images and the three-character continuation "xyz"."""
    from lmms_eval.api.instance import Instance
    from lmms_eval.models.simple.llava_hf import LlavaHf

    model = _ProbeModel()
    instance = _probe_llava_hf(
        LlavaHf,
        _tokenizer=_ProbeTokenizer(),
        _image_processor=_ProbeProcessor(),
        _model=model,
        task_dict={"probe": {"test": {0: {}}}},
    )
    request = Instance(
        "loglikelihood",
        ("question?", "xyz", lambda doc: ["image"] * images, 0, "probe", "test"),
        idx=0,
        metadata={"task": "probe", "doc_id": 0, "repeats": 1},
    )
    try:
        return method(instance, [request]), model.scored
    except Exception as error:  # noqa: BLE001 - the probe reports what the host does
        return error, model.scored


def probe_llava_hf_loglikelihood() -> tuple[str, str]:
    from lmms_eval.models.simple.llava_hf import LlavaHf

    host = unwrapped(LlavaHf.loglikelihood)
    problem = expect_parameters("simple LlavaHf.loglikelihood", host, ["self", "requests"])
    if problem:
        return MISMATCH, problem
    continuation = len(" xyz ")  # "assistant: xyz " minus the prompt "assistant:": what the loss covers
    expected = [(1.0, True)]
    before, scored = _run_loglikelihood(host, images=1)
    if before == expected and scored == [continuation]:
        return NOT_NEEDED, "the host's llava_hf loglikelihood tokenizes the context with its images"
    fixed = loglikelihood_fixed(host)
    for images in (1, 0):
        after, scored = _run_loglikelihood(fixed, images)
        if after != expected or scored != [continuation]:
            return MISMATCH, (
                f"the fix does not work on this host ({images} image(s): {after!r}, loss over {scored} "
                f"tokens instead of [{continuation}])"
            )
    found = f"{type(before).__name__}: {before}" if isinstance(before, Exception) else repr(before)
    return APPLIES, f"the host's llava_hf loglikelihood gives {found} on a probe request; fixed"


def install_llava_hf_loglikelihood() -> None:
    from lmms_eval.models.simple.llava_hf import LlavaHf

    if not is_marked(LlavaHf.loglikelihood):
        LlavaHf.loglikelihood = loglikelihood_fixed(LlavaHf.loglikelihood)


# --- llava_hf_text_only: chat llava_hf passes an empty image list for a request without image -------------


class NoEmptyImages:
    """A processor that is given ``images=None`` where the host passes an empty list.

    A LLaVA processor given ``images=[]`` yields empty ``pixel_values`` that the vision tower cannot
    unpack, so the host's chat llava_hf answered "" to every text-only request (e.g. HallusionBench's 178
    no-image questions, which a judge then reads as "unclear").
    """

    def __init__(self, processor: Any) -> None:
        self._processor = processor

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "images" in kwargs:
            kwargs["images"] = _no_empty_list(kwargs["images"])
        return self._processor(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._processor, name)


def generate_until_fixed(host_generate_until: Any) -> Any:
    """Chat ``LlavaHf.generate_until`` run on a view of the wrapper whose processor passes no empty image
    list (per call: nothing shared is swapped)."""

    def generate_until(self: Any, requests: list[Any]) -> Any:
        return host_generate_until(
            CallView(self, _image_processor=NoEmptyImages(self._image_processor)), requests
        )

    generate_until.__doc__ = host_generate_until.__doc__
    return mark(generate_until, host_generate_until)


class _ProbeStop(Exception):
    """Ends a probe's generate_until at the processor call it inspects."""


class _RecordingProcessor:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def apply_chat_template(self, *args: Any, **kwargs: Any) -> str:
        return "user: question?"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        raise _ProbeStop


def _images_passed(method: Any) -> Any:
    """What the chat llava_hf ``method`` passes as ``images=`` for one text-only request (Touched when it
    never calls the processor)."""
    from lmms_eval.api.instance import Instance
    from lmms_eval.models.chat.llava_hf import LlavaHf

    processor = _RecordingProcessor()
    instance = _probe_llava_hf(LlavaHf, _image_processor=processor, task_dict={"probe": {"test": {0: {}}}})
    messages = [{"role": "user", "content": [{"type": "text", "text": "question?"}]}]
    request = Instance(
        "generate_until",
        ("question?", lambda doc: messages, {"max_new_tokens": 1}, 0, "probe", "test"),
        idx=0,
        metadata={"task": "probe", "doc_id": 0, "repeats": 1},
    )
    try:
        method(instance, [request])
    except _ProbeStop:
        return processor.calls[-1].get("images", None)
    return Touched("the processor was not called")


def probe_llava_hf_text_only() -> tuple[str, str]:
    from lmms_eval.models.chat.llava_hf import LlavaHf

    host = unwrapped(LlavaHf.__dict__.get("generate_until"))
    problem = expect_parameters("chat LlavaHf.generate_until", host, ["self", "requests"])
    if problem:
        return MISMATCH, problem
    before = _images_passed(host)
    if before is None:
        return NOT_NEEDED, "the host's chat llava_hf passes no images for a text-only request"
    if not isinstance(before, list) or before:
        return MISMATCH, f"chat llava_hf passes images={before!r} for a text-only request, expected []"
    after = _images_passed(generate_until_fixed(host))
    if after is not None:
        return MISMATCH, f"the fix does not work on this host (images={after!r})"
    return APPLIES, "chat llava_hf passes images=[] for a text-only request; it passes None instead"


def install_llava_hf_text_only() -> None:
    from lmms_eval.models.chat.llava_hf import LlavaHf

    method = LlavaHf.__dict__.get("generate_until")
    if method is not None and not is_marked(method):
        LlavaHf.generate_until = generate_until_fixed(method)


# --- llava_hf_simple_text_only: simple llava_hf answers a text-only request with the previous one's inputs --


class TextOnlyRequestRefused(RuntimeError):
    """The simple llava_hf was asked to answer a request without an image, which it cannot do right."""


TEXT_ONLY_REFUSAL = (
    "lmms-eval's simple llava_hf (--force_simple) cannot answer a request without an image: it builds no "
    "inputs for it and would answer with the previous request's inputs (or ''); run without --force_simple "
    "(the chat llava_hf answers text-only requests; models.md in the pack's documentation)"
)


def _has_no_image(self: Any, request: Any) -> bool:
    context, _, doc_to_visual, doc_id, task, split = request.args
    return not self.flatten([doc_to_visual(self.task_dict[task][split][doc_id])])


def simple_generate_until_guarded(host_generate_until: Any) -> Any:
    """Simple ``LlavaHf.generate_until`` that refuses, before generating anything, a batch holding a request
    without an image (the host would answer it with the inputs of the request before it)."""

    def generate_until(self: Any, requests: list[Any]) -> Any:
        text_only = [request for request in requests if _has_no_image(self, request)]
        if text_only:
            raise TextOnlyRequestRefused(f"{TEXT_ONLY_REFUSAL} ({len(text_only)} such request(s))")
        return host_generate_until(self, requests)

    generate_until.__doc__ = host_generate_until.__doc__
    return mark(generate_until, host_generate_until)


class _ProbeTextTokenizer(_ProbeTokenizer):
    eos_token_id = 2

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [ord(character) % 80 for character in text]

    def decode(self, tokens: Any) -> str:
        return ""

    def batch_decode(self, tokens: Any, skip_special_tokens: bool = True) -> list[str]:
        return [""]


def probe_llava_hf_simple_text_only() -> tuple[str, str]:
    import contextlib

    from lmms_eval.api.instance import Instance
    from lmms_eval.models.simple.llava_hf import LlavaHf
    from loguru import logger

    host = unwrapped(LlavaHf.__dict__.get("generate_until"))
    problem = expect_parameters("simple LlavaHf.generate_until", host, ["self", "requests"])
    if problem:
        return MISMATCH, problem
    processor = _RecordingProcessor()
    instance = _probe_llava_hf(
        LlavaHf,
        _tokenizer=_ProbeTextTokenizer(),
        _image_processor=processor,
        _model=types.SimpleNamespace(dtype=None, generate=lambda **kwargs: [[]]),
        task_dict={"probe": {"test": {0: {}}}},
        cache_hook=types.SimpleNamespace(add_partial=lambda *args: None),
        use_cache=False,
    )
    request = Instance(
        "generate_until",
        ("question?", {"max_new_tokens": 1}, lambda doc: [], 0, "probe", "test"),
        idx=0,
        metadata={"task": "probe", "doc_id": 0, "repeats": 1},
    )
    logger.disable(LlavaHf.__module__)  # the host logs the error it swallows for this request
    try:
        with contextlib.suppress(_ProbeStop):
            host(instance, [request])
    finally:
        logger.enable(LlavaHf.__module__)
    if processor.calls:
        return NOT_NEEDED, "the host's simple llava_hf tokenizes a text-only request"
    try:
        simple_generate_until_guarded(host)(instance, [request])
    except TextOnlyRequestRefused:
        return APPLIES, (
            "the host's simple llava_hf builds no inputs for a text-only request (it answers with the "
            "previous request's); such a request is refused with the way out"
        )
    return MISMATCH, "the guard did not refuse a text-only request on this host"


def install_llava_hf_simple_text_only() -> None:
    from lmms_eval.models.simple.llava_hf import LlavaHf

    method = LlavaHf.__dict__.get("generate_until")
    if method is not None and not is_marked(method):
        LlavaHf.generate_until = simple_generate_until_guarded(method)


# --- chat_loglikelihood: chat tasks refuse loglikelihood / multiple_choice requests ------------------------


def probe_chat_loglikelihood() -> tuple[str, str]:
    from lmms_eval.api.task import ConfigurableMessagesTask, ConfigurableTask

    method = ConfigurableMessagesTask.__dict__.get("construct_requests")
    problem = expect_parameters(
        "ConfigurableMessagesTask.construct_requests", method, ["self", "doc_id", "ctx", "kwargs"]
    ) or expect_parameters(
        "ConfigurableTask.construct_requests",
        ConfigurableTask.__dict__.get("construct_requests"),
        ["self", "doc_id", "ctx", "kwargs"],
    )
    if problem:
        return MISMATCH, problem

    class LoglikelihoodTask:  # a chat task asked for a loglikelihood request: it may read its output type
        OUTPUT_TYPE = "loglikelihood"

        def __getattr__(self, name: str) -> Any:
            raise Touched(name)

    try:
        unwrapped(method)(LoglikelihoodTask(), 0, "probe", metadata={"split": "test"})
    except Touched:
        return NOT_NEEDED, "chat tasks no longer refuse loglikelihood requests"
    except Exception as error:  # noqa: BLE001 - the refusal this patch lifts
        return APPLIES, (
            f"chat tasks refuse loglikelihood requests ({type(error).__name__}); "
            "chat-mode loglikelihood / multiple_choice tasks send the simple request shape"
        )
    return NOT_NEEDED, "chat tasks no longer refuse loglikelihood requests"


def install_chat_loglikelihood() -> None:
    from lmms_eval.api.task import ConfigurableMessagesTask, ConfigurableTask

    original = ConfigurableMessagesTask.construct_requests
    if is_marked(original):
        return

    def construct_requests(self: Any, doc_id: int, ctx: str, **kwargs: Any) -> Any:
        if str(self.OUTPUT_TYPE).startswith("generate_until"):
            return original(self, doc_id, ctx, **kwargs)
        return ConfigurableTask.construct_requests(self, doc_id, ctx, **kwargs)

    ConfigurableMessagesTask.construct_requests = mark(construct_requests, original)
