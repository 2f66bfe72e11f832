"""The tools of the host patches' probes and installs: outcomes, marked wrappers, behaviour checks (never
source text). Nothing here imports lmms-eval."""

from __future__ import annotations

import contextlib
import inspect
import re
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

APPLIES, NOT_NEEDED, MISMATCH = "applies", "not needed", "mismatch"
FIX_MARK = "_lmms_eval_tasks_fix"  # set on every wrapper the pack installs (its original in __wrapped__)
probe_lock = threading.RLock()  # held while a probe spies on a host function, and while patches install


def mark(wrapper: Any, wrapped: Any, tag: str | None = None) -> Any:
    """Mark ``wrapper`` as the pack's, wrapping ``wrapped`` (so installs are idempotent and undoable; it keeps
    the host's docstring); ``tag`` names it among several patches wrapping one host function."""
    setattr(wrapper, FIX_MARK, True)
    if tag:
        setattr(wrapper, tag, True)
    wrapper.__wrapped__ = wrapped
    wrapper.__doc__ = wrapper.__doc__ or getattr(wrapped, "__doc__", None)
    return wrapper


def replaces(owner: Any, name: str) -> Callable[[Callable[..., Any]], Any]:
    """Decorator of an install: ``owner.name`` becomes the decorated ``fix(original, *args, **kwargs)`` (a
    static or class method stays one), marked; installing the same fix again changes nothing."""

    def install(fix: Callable[..., Any]) -> Any:
        raw = inspect.getattr_static(owner, name)
        kind = type(raw) if isinstance(raw, staticmethod | classmethod) else None
        original = raw.__func__ if kind else getattr(owner, name)
        tag = "_lmms_eval_tasks_" + re.sub(r"\W", "_", f"{fix.__module__}.{fix.__qualname__}")
        if not has_wrapper(original, tag):

            def wrapper(*args: Any, **kwargs: Any) -> Any:
                return fix(original, *args, **kwargs)

            setattr(owner, name, kind(mark(wrapper, original, tag)) if kind else mark(wrapper, original, tag))
        return fix

    return install


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


class Mismatch(Exception):
    """A probe's finding that the host does not behave as its patch expects (the text says how)."""


def expect(condition: Any, detail: str) -> None:
    """Raise ``Mismatch(detail)`` unless ``condition`` holds."""
    if not condition:
        raise Mismatch(detail)


def expect_parameters(owner: str, function: Any, expected: Sequence[str]) -> None:
    """Raise ``Mismatch`` unless ``function`` takes exactly ``expected``."""
    expect(callable(function), f"{owner} is not callable")
    found = parameters(function)
    expect(found == list(expected), f"{owner} takes ({', '.join(found)}), expected ({', '.join(expected)})")


def _compiled(owner: str, function: Any) -> types.CodeType:
    """The code object of ``function`` under every decorator (``functools.wraps`` chains included)."""
    code = getattr(inspect.unwrap(function), "__code__", None)
    expect(code is not None, f"{owner} is not a Python function")
    return code


def _code_names(code: types.CodeType) -> set[str]:
    """The global and attribute names compiled code (and the functions nested in it) looks up."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _code_names(constant)
    return names


def expect_lookups(owner: str, function: Any, names: Sequence[str]) -> None:
    """Raise ``Mismatch`` unless ``function`` looks up every one of ``names`` when it runs (so replacing the
    module global or attribute of that name reaches it). Reads compiled code, not source."""
    missing = [name for name in names if name not in _code_names(_compiled(owner, function))]
    expect(not missing, f"{owner} no longer uses {', '.join(missing)}")


def expect_keywords(owner: str, function: Any, keywords: Sequence[str]) -> None:
    """Raise ``Mismatch`` unless ``function`` passes each of ``keywords`` by name to some call (its compiled
    code's keyword names: a tuple per call, or single constants for a call with many keywords)."""
    constants = _compiled(owner, function).co_consts
    names = {const for const in constants if isinstance(const, str)}
    for const in constants:
        if isinstance(const, tuple):
            names |= {item for item in const if isinstance(item, str)}
    missing = [keyword for keyword in keywords if keyword not in names]
    expect(not missing, f"{owner} no longer passes {', '.join(f'{keyword}=' for keyword in missing)}")


@contextlib.contextmanager
def spying(owner: Any, name: str, answer: Callable[..., Any]) -> Iterator[list[tuple[tuple, dict]]]:
    """In the block, ``owner.name`` answers with ``answer(original, *args, **kwargs)`` (which delegates any
    call not the probe's to ``original``) and records its calls, under ``probe_lock``."""
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
