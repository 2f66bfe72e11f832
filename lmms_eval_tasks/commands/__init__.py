"""Subcommands of `lmms-eval-tasks`, one module each, found automatically.

Every module in this package defines ``register(subparsers) -> None``, which adds its parser and sets
``handler=<function(args) -> int>`` as the parser's default. Keep module import cheap: import heavy
libraries inside the handler. Adding a command = adding a module here; nothing else to edit.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any


def register_all(subparsers: Any) -> None:
    """Call ``register(subparsers)`` of every module in this package, in name order."""
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        register = getattr(module, "register", None)
        if register is None:
            raise AttributeError(f"{module.__name__} defines no register(subparsers)")
        register(subparsers)
