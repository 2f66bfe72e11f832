"""The tools of the host patches' probes and installs: outcomes, wrapper marks, and behaviour checks (a
function's signature, the names its compiled code looks up, a spied call), never source text. Nothing here
imports lmms-eval.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

APPLIES, NOT_NEEDED, MISMATCH = "applies", "not needed", "mismatch"
FIX_MARK = "_lmms_eval_tasks_fix"  # set on every wrapper the pack installs (its original in __wrapped__)
probe_lock = threading.RLock()  # held while a probe spies on a host function, and while patches install


def mark(wrapper: Any, wrapped: Any, tag: str | None = None) -> Any:
    """Mark ``wrapper`` as the pack's, wrapping ``wrapped`` (so installs are idempotent and undoable); ``tag``
    names it among several patches that wrap the same host function (``has_wrapper``)."""
    setattr(wrapper, FIX_MARK, True)
    if tag:
        setattr(wrapper, tag, True)
    wrapper.__wrapped__ = wrapped
    return wrapper


def is_marked(function: Any) -> bool:
    return bool(getattr(function, FIX_MARK, False))


def has_wrapper(function: Any, tag: str) -> bool:
    """True when one of the pack's wrappers around ``function`` was marked with ``tag`` (several patches wrap
    the same host function, installed in either order, each once)."""
    while is_marked(function):
        if getattr(function, tag, False):
            return True
        function = getattr(function, "__wrapped__", None)
    return False


def unwrapped(function: Any) -> Any:
    """``function`` without the pack's own wrappers around it."""
    while is_marked(function) and hasattr(function, "__wrapped__"):
        function = function.__wrapped__
    return function


def bare(cls: type, **attributes: Any) -> Any:
    """A ``cls`` instance made without ``__init__`` (no model, no I/O), with ``attributes`` set (probes)."""
    instance = cls.__new__(cls)
    for name, value in attributes.items():
        setattr(instance, name, value)
    return instance


def parameters(function: Any) -> list[str]:
    """Parameter names of ``function`` (unwrapping the pack's own wrappers first)."""
    return list(inspect.signature(unwrapped(function)).parameters)


def expect_parameters(owner: str, function: Any, expected: Sequence[str]) -> str | None:
    """None when ``function`` takes exactly ``expected``; else a one-line description of the difference."""
    if not callable(function):
        return f"{owner} is not callable"
    found = parameters(function)
    if found != list(expected):
        return f"{owner} takes ({', '.join(found)}), expected ({', '.join(expected)})"
    return None


def _compiled(function: Any) -> types.CodeType | None:
    """The code object of ``function`` under every decorator (``functools.wraps`` chains included)."""
    return getattr(inspect.unwrap(function), "__code__", None)


def _code_names(code: types.CodeType) -> set[str]:
    """The global and attribute names compiled code (and the functions nested in it) looks up."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _code_names(constant)
    return names


def missing_lookups(owner: str, function: Any, names: Sequence[str]) -> str | None:
    """None when ``function`` looks up every one of ``names`` when it runs (so replacing the module global
    or attribute of that name reaches it); else which it no longer uses. Reads compiled code, not source."""
    code = _compiled(function)
    if code is None:
        return f"{owner} is not a Python function"
    missing = [name for name in names if name not in _code_names(code)]
    return f"{owner} no longer uses {', '.join(missing)}" if missing else None


def missing_keywords(owner: str, function: Any, keywords: Sequence[str]) -> str | None:
    """None when ``function`` passes each of ``keywords`` by name to some call (its compiled code's keyword
    names: a tuple per call, or single constants for a call with many keywords); else which it does not."""
    code = _compiled(function)
    if code is None:
        return f"{owner} is not a Python function"
    names = {const for const in code.co_consts if isinstance(const, str)}
    for const in code.co_consts:
        if isinstance(const, tuple):
            names |= {item for item in const if isinstance(item, str)}
    missing = [keyword for keyword in keywords if keyword not in names]
    return f"{owner} no longer passes {', '.join(f'{keyword}=' for keyword in missing)}" if missing else None


@contextlib.contextmanager
def spying(owner: Any, name: str, answer: Callable[..., Any]) -> Iterator[list[tuple[tuple, dict]]]:
    """For one probe call: ``owner.name`` answers with ``answer(original, *args, **kwargs)`` and records its
    calls, until the block ends (under ``probe_lock``). ``answer`` must delegate to ``original`` for any
    call that is not the probe's, so a concurrent caller sees the host's behaviour."""
    with probe_lock:
        original = getattr(owner, name)
        calls: list[tuple[tuple, dict]] = []

        def spy(*args: Any, **kwargs: Any) -> Any:
            calls.append((args, kwargs))
            return answer(original, *args, **kwargs)

        setattr(owner, name, spy)
        try:
            yield calls
        finally:
            setattr(owner, name, original)


class Touched(Exception):
    """Raised by a probe's stand-in object when the host reads more of it than the probe allows."""


class CallView:
    """An instance as one call of a host method sees it, some attributes replaced for that call only: reads
    fall through to the instance, writes go to it, so concurrent calls share no swapped state."""

    __slots__ = ("_instance", "_replaced")

    def __init__(self, instance: Any, **replaced: Any) -> None:
        object.__setattr__(self, "_instance", instance)
        object.__setattr__(self, "_replaced", replaced)

    def __getattr__(self, name: str) -> Any:
        replaced = object.__getattribute__(self, "_replaced")
        if name in replaced:
            return replaced[name]
        return getattr(object.__getattribute__(self, "_instance"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "_instance"), name, value)
