"""``"module:function"`` strings: how the registry, the record contract and the YAML generator name a
callable without importing it (imported only when used)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def resolve(target: str) -> Callable[..., Any]:
    """Import ``"module:function"`` and return the function (a clear error when either is missing)."""
    module_name, separator, function_name = target.partition(":")
    if not separator or not function_name:
        raise ValueError(f"expected 'module:function', got {target!r}")
    module = importlib.import_module(module_name)
    try:
        return getattr(module, function_name)
    except AttributeError:
        raise AttributeError(f"{module_name} has no {function_name!r} (named by {target!r})") from None
