"""Fixes for lmms-eval 0.7.3 bugs that break loglikelihood tasks and text-only requests.

1. ``lmms_eval.evaluator`` passes each model output through ``unwrap_generation_output``, which keeps
   strings, ``GenerationResult``s and ``(str, dict)`` pairs but stringifies anything else, including the
   ``(log_prob, is_greedy)`` pairs that ``loglikelihood`` returns; ``process_results`` then crashes ("too
   many values to unpack") for every model. ``install_loglikelihood_result_fix`` keeps such pairs intact.
2. The ``llava_hf`` wrapper's ``loglikelihood`` fails on transformers 5 for every LLaVA checkpoint (see
   ``install_llava_hf_loglikelihood_fix``).
3. The ``llava_hf`` wrapper answers "" to every request without an image (see
   ``install_llava_hf_text_only_fix``).
All are opt-in patches of the host, idempotent, and do nothing else; the launcher installs them.
"""

from __future__ import annotations

import numbers
import threading
from collections.abc import Sequence
from typing import Any

_lock = threading.Lock()


def is_loglikelihood_result(output: Any) -> bool:
    """True for a ``(log_prob, is_greedy)`` pair as ``lmms.loglikelihood`` returns it."""
    return (
        isinstance(output, tuple | list)
        and len(output) == 2
        and isinstance(output[0], numbers.Real)
        and not isinstance(output[0], bool)
        and isinstance(output[1], bool | numbers.Integral)
    )


def install_loglikelihood_result_fix() -> bool:
    """Patch the host evaluator (idempotent); True if the patch is active afterwards."""
    import lmms_eval.evaluator as evaluator

    with _lock:
        current = evaluator.unwrap_generation_output
        if getattr(current, "_lmms_eval_tasks_fix", False):
            return True
        probe, _ = current((-1.5, False))
        if isinstance(probe, tuple):  # the host keeps pairs already (fixed upstream): nothing to do
            return True

        def unwrap_generation_output(output: Any) -> tuple[Any, Any]:
            if is_loglikelihood_result(output):
                return (float(output[0]), bool(output[1])), None
            return current(output)

        unwrap_generation_output.__doc__ = current.__doc__
        unwrap_generation_output._lmms_eval_tasks_fix = True  # type: ignore[attr-defined]
        unwrap_generation_output.__wrapped__ = current  # type: ignore[attr-defined]
        evaluator.unwrap_generation_output = unwrap_generation_output
        return True


def _llava_hf_loglikelihood(self: Any, requests: list[Any]) -> list[tuple[float, bool]]:
    """llava_hf's loglikelihood, fixed for transformers 5: (mean loss over the continuation, is_greedy).

    Keeps the host's conventions (the value is the mean cross-entropy of the continuation tokens, lower is
    better, which is what the host's multiple_choice argmin expects; same chat template and ``<image>``
    placeholders) and fixes three things: the context is tokenized with its images, so it is accepted by
    transformers 5 and the loss mask lines up with the expanded image tokens; text-only requests pass no
    images instead of an empty list; ``is_greedy`` compares each continuation token with the prediction
    made one position earlier.
    """
    import torch
    from lmms_eval.models.simple.llava_hf import VICUNA_CHAT_TEMPLATE
    from tqdm import tqdm

    template = self.chat_template or self.tokenizer.chat_template or VICUNA_CHAT_TEMPLATE
    image_token = getattr(self._image_processor, "image_token", None) or "<image>"
    results: list[tuple[float, bool]] = []
    for context, doc_to_target, doc_to_visual, doc_id, task, split in tqdm(
        [request.args for request in requests], disable=self.rank != 0, desc="Model Responding"
    ):
        doc = self.task_dict[task][split][doc_id]
        continuation = doc_to_target if isinstance(doc_to_target, str) else doc_to_target(doc)
        visuals = self.flatten([doc_to_visual(doc)])
        user_text = " ".join([image_token] * len(visuals)) + "\n" + context if visuals else context
        messages = [{"role": "user", "content": user_text}, {"role": "assistant", "content": continuation}]
        prompt = self.tokenizer.apply_chat_template(
            messages[:1], chat_template=template, tokenize=False, add_generation_prompt=True
        )
        full_text = self.tokenizer.apply_chat_template(
            messages, chat_template=template, tokenize=False, add_generation_prompt=False
        )
        images = visuals or None
        inputs = self._image_processor(text=[full_text], images=images, return_tensors="pt")
        inputs = inputs.to(self._device, self.model.dtype)
        prompt_length = self._image_processor(text=[prompt], images=images, return_tensors="pt")[
            "input_ids"
        ].shape[1]
        input_ids = inputs["input_ids"]
        labels = input_ids.clone()
        labels[:, :prompt_length] = -100
        with torch.inference_mode():
            outputs = self.model(**inputs, labels=labels)
        predicted = outputs.logits[:, prompt_length - 1 : input_ids.shape[1] - 1].argmax(dim=-1)
        is_greedy = bool((predicted == input_ids[:, prompt_length:]).all())
        results.append((float(outputs.loss.item()), is_greedy))
    return results


def install_llava_hf_loglikelihood_fix() -> None:
    """Replace the host llava_hf wrapper's loglikelihood (simple and chat classes) with the fixed one.

    lmms-eval 0.7.3 tokenizes the context, which holds ``<image>``, without its images; transformers 5's
    processors reject that ("Found 1 <image> tokens in the text but no images were passed") and text-only
    requests crash on an empty image list, so no loglikelihood or multiple_choice task runs on llava_hf.
    Importing the wrapper imports transformers and decord: call this only when llava_hf is used.
    """
    from lmms_eval.models.simple.llava_hf import LlavaHf

    with _lock:
        if not getattr(LlavaHf.loglikelihood, "_lmms_eval_tasks_fix", False):
            _llava_hf_loglikelihood._lmms_eval_tasks_fix = True  # type: ignore[attr-defined]
            _llava_hf_loglikelihood.__wrapped__ = LlavaHf.loglikelihood  # type: ignore[attr-defined]
            LlavaHf.loglikelihood = _llava_hf_loglikelihood


def install_host_fixes(model_names: Sequence[str] = ()) -> None:
    """Install the fixes a run needs: the evaluator fix always, the llava_hf one when that model is used."""
    install_loglikelihood_result_fix()
    if "llava_hf" in model_names:
        install_llava_hf_loglikelihood_fix()
        install_llava_hf_text_only_fix()


class _NoEmptyImagesProcessor:
    """Delegates to a processor, passing ``images=None`` instead of an empty image list.

    A LLaVA processor given ``images=[]`` yields empty ``pixel_values`` that the vision tower cannot
    unpack, so the host's llava_hf returns "" for every text-only request (e.g. HallusionBench's 178
    no-image questions, which a judge then reads as "unclear" - counted as right for those questions).
    """

    def __init__(self, processor: Any) -> None:
        self._processor = processor

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "images" in kwargs and kwargs["images"] is not None and len(kwargs["images"]) == 0:
            kwargs["images"] = None
        return self._processor(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._processor, name)


def _text_only_safe(generate_until: Any) -> Any:
    def generate_until_with_text_only_requests(self: Any, requests: list[Any]) -> Any:
        processor = self.__dict__.get("_image_processor")
        if processor is None or isinstance(processor, _NoEmptyImagesProcessor):
            return generate_until(self, requests)
        self._image_processor = _NoEmptyImagesProcessor(processor)
        try:
            return generate_until(self, requests)
        finally:
            self._image_processor = processor

    generate_until_with_text_only_requests._lmms_eval_tasks_fix = True  # type: ignore[attr-defined]
    generate_until_with_text_only_requests.__wrapped__ = generate_until  # type: ignore[attr-defined]
    return generate_until_with_text_only_requests


def install_llava_hf_text_only_fix() -> None:
    """Make the host's llava_hf (simple and chat) answer requests that carry no image."""
    from lmms_eval.models.chat.llava_hf import LlavaHf as ChatLlavaHf
    from lmms_eval.models.simple.llava_hf import LlavaHf as SimpleLlavaHf

    with _lock:
        for cls in (SimpleLlavaHf, ChatLlavaHf):
            method = cls.__dict__.get("generate_until")
            if method is not None and not getattr(method, "_lmms_eval_tasks_fix", False):
                cls.generate_until = _text_only_safe(method)
