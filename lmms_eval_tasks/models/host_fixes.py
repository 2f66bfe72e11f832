"""A fix for lmms-eval 0.7.3's evaluator, which turns every loglikelihood result into a string.

``lmms_eval.evaluator`` passes each model output through ``unwrap_generation_output``, which keeps strings,
``GenerationResult``s and ``(str, dict)`` pairs but stringifies anything else, including the
``(log_prob, is_greedy)`` pairs that ``loglikelihood`` must return. ``loglikelihood`` and
``multiple_choice`` tasks then crash in ``process_results`` ("too many values to unpack") for every model.
``install_loglikelihood_result_fix`` makes the evaluator keep ``(number, bool)`` pairs as they are.
"""

from __future__ import annotations

import numbers
import threading
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
