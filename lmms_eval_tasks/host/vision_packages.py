"""torchvision or timm installed but not importing (PyPI's torchvision next to a CPU torch) breaks every
transformers import: one line naming the fix, for the launcher and ``doctor``."""

from __future__ import annotations

import importlib
import importlib.util

from lmms_eval_tasks.host.model_availability import error_line

VISION_FIX = (
    "pip uninstall -y torchvision timm (transformers works without them), or install the torchvision "
    "made for your torch from the index torch came from (README, 'Using the pack')"
)


def _import_failure(name: str) -> str | None:
    """The first line of the error importing ``name`` when it is installed, else None."""
    if importlib.util.find_spec(name) is None:
        return None
    try:
        importlib.import_module(name)
    except Exception as error:  # noqa: BLE001 - any failure to import is the answer
        return error_line(error)
    return None


def vision_problem() -> str | None:
    """One line when torchvision, or timm (checked only when torchvision is absent or broken: it imports
    torchvision), is installed but cannot import; else None."""
    broken = _import_failure("torchvision")
    name = "torchvision"
    if broken is None and importlib.util.find_spec("torchvision") is not None:
        return None
    if broken is None:
        name, broken = "timm", _import_failure("timm")
    if broken is None:
        return None
    return f"{name} is installed but does not import ({broken}); fix: {VISION_FIX}"
