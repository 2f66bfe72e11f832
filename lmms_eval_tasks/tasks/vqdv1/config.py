"""VQDv1's scoring options: the one reader of its scoring environment variables (docs/vqdv1.md)."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks import environment
from lmms_eval_tasks.tasks.vqdv1 import scoring

OPTION_ENV = {
    "protocol": ("LMMS_EVAL_TASKS_VQDV1_PROTOCOL", scoring.PROTOCOLS),
    "coords": ("LMMS_EVAL_TASKS_VQDV1_COORDS", scoring.COORDS),
    "box_format": ("LMMS_EVAL_TASKS_VQDV1_BOX_FORMAT", scoring.BOX_FORMATS),
    "syntax": ("LMMS_EVAL_TASKS_VQDV1_SYNTAX", scoring.SYNTAXES),
}


def score_options(task: str = "vqdv1") -> dict[str, Any]:
    """Scoring options from the environment (defaults: the spec's protocol, the official coordinate rule)."""
    options: dict[str, Any] = {}
    for option, (variable, allowed) in OPTION_ENV.items():
        value = environment.text(variable)
        if value:
            if value not in allowed:
                raise ValueError(f"{variable}={value!r}: expected one of {', '.join(allowed)}")
            options[option] = value
    return options
