"""The pack's fixes for lmms-eval 0.7.3 bugs under their old names; they live in ``host.patches``.

Each ``install_*`` applies one patch through ``host.apply_patch``: only on the host versions it was written
for and when its probe finds the code it expects (otherwise a warning, and the host is left alone).
"""

from __future__ import annotations

from collections.abc import Sequence

from lmms_eval_tasks.host import patches as host
from lmms_eval_tasks.host.patches import is_loglikelihood_result

__all__ = [
    "install_host_fixes",
    "install_llava_hf_loglikelihood_fix",
    "install_llava_hf_text_only_fix",
    "install_loglikelihood_result_fix",
    "is_loglikelihood_result",
]


def install_loglikelihood_result_fix() -> bool:
    """Keep ``(log_prob, is_greedy)`` pairs intact in the evaluator; True unless the patch was skipped."""
    return host.apply_patch("loglikelihood_result").ok


def install_llava_hf_loglikelihood_fix() -> None:
    """Make the host llava_hf wrapper's loglikelihood work on transformers 5 (imports the wrapper)."""
    host.apply_patch("llava_hf_loglikelihood")


def install_llava_hf_text_only_fix() -> None:
    """Make the host's llava_hf (simple and chat) answer requests that carry no image."""
    host.apply_patch("llava_hf_text_only")


def install_host_fixes(model_names: Sequence[str] = ()) -> None:
    """The bug fixes a run needs: the evaluator fix always, the llava_hf ones when that model is used."""
    host.apply_patches(
        model_names, [name for name in host.patches_for(model_names) if name not in _INTEGRATION_PATCHES]
    )


_INTEGRATION_PATCHES = ("pack_task_index", "failure_recorder")  # installed by the launcher itself
