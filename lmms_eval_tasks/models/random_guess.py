"""``random_guess``: a seeded random-chance baseline answering in each task's answer space
(``framework.answer_spaces``), each answer a function of (seed, task, doc id, request, repeat) only."""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from typing import Any

from lmms_eval.api.instance import Instance
from lmms_eval.api.model import lmms
from loguru import logger
from tqdm import tqdm

from lmms_eval_tasks.framework.answer_spaces import answer_function, fallback_answer
from lmms_eval_tasks.host import patches as host


def request_rng(
    seed: int, task: str, doc_id: Any, request_index: int, repeat_index: int = 0
) -> random.Random:
    """A generator seeded by a stable hash of the request's identity (never Python's salted ``hash``)."""
    key = "\x1f".join(str(part) for part in (seed, task, doc_id, request_index, repeat_index))
    return random.Random(int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big"))


class RandomGuess(lmms):
    """Answers uniformly at random within the task's answer space; ``--model_args seed=N`` (default 0)."""

    is_simple = True

    def __init__(
        self,
        seed: int | str = 0,
        batch_size: int | str | None = None,
        max_batch_size: int | str | None = None,
        device: str | None = None,
        **unexpected: Any,
    ) -> None:
        super().__init__()
        if unexpected:
            raise TypeError(f"random_guess: unknown model_args {sorted(unexpected)}; it takes seed=<int>")
        try:
            self.seed = int(seed)
        except (TypeError, ValueError):
            raise ValueError(f"random_guess: seed must be an integer, got {seed!r}") from None
        # batch_size/max_batch_size/device come from the CLI for every model; guessing needs none of them.
        self._device_name = device or "cpu"
        # Without this, lmms-eval 0.7.3 stringifies loglikelihood results and multiple_choice tasks crash.
        host.apply_patch("loglikelihood_result")
        logger.info(f"random_guess baseline with seed {self.seed}")

    @property
    def device(self) -> Any:
        """Where the harness puts its cross-process bookkeeping tensors (the accelerator's device if any)."""
        accelerator = getattr(self, "accelerator", None)
        return accelerator.device if accelerator is not None else self._device_name

    def _rngs(self, requests: list[Instance]) -> list[random.Random]:
        """One generator per request; the harness repeats an instance ``repeats`` times, numbered here."""
        seen: Counter[tuple] = Counter()
        generators = []
        for request in requests:
            arguments = request.args
            task, doc_id = arguments[-2], arguments[-3]
            key = (task, doc_id, request.idx)
            generators.append(request_rng(self.seed, task, doc_id, request.idx, seen[key]))
            seen[key] += 1
        return generators

    def _doc(self, task: str, split: str, doc_id: Any) -> dict:
        try:
            return self.task_dict[task][split][doc_id]
        except (KeyError, IndexError, TypeError) as error:
            raise KeyError(f"random_guess: no doc {doc_id!r} in task {task!r} split {split!r}") from error

    def generate_until(self, requests: list[Instance]) -> list[str]:
        """A random answer from the task's answer space for each request (see answer_spaces)."""
        answers = []
        for request, rng in tqdm(
            zip(requests, self._rngs(requests), strict=True),
            total=len(requests),
            disable=self.rank != 0,
            desc="random_guess",
        ):
            context, generation_kwargs, _doc_to_visual, doc_id, task, split = request.args
            function = answer_function(task)
            if function is not None:
                answer = function(task, self._doc(task, split, doc_id), rng)
                if not isinstance(answer, str):
                    raise TypeError(f"random_answer of {task!r} returned {type(answer).__name__}, not str")
            else:
                answer = fallback_answer(context if isinstance(context, str) else "", rng)
            answers.append(answer)
            self.cache_hook.add_partial("generate_until", (context, generation_kwargs), answer)
        return answers

    def loglikelihood(self, requests: list[Instance]) -> list[tuple[float, bool]]:
        """A random log-probability per option (i.i.d., so the argmax option is uniform), never greedy."""
        return [(math.log(1.0 - rng.random()), False) for rng in self._rngs(requests)]

    def generate_until_multi_round(self, requests: list[Instance]) -> list[str]:
        raise NotImplementedError(
            "random_guess does not support multi-round generation (generate_until_multi_round tasks); "
            "use it on generate_until, loglikelihood or multiple_choice tasks"
        )
