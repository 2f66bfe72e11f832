"""The official judge prompt templates (byte-exact copies of the spec's files) and safe rendering: one
left-to-right substitution of the named ``{placeholders}``, never ``str.format`` (outputs hold braces)."""

from __future__ import annotations

import re
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parent
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def prompt_path(name: str) -> Path:
    """Path of the template file ``<name>.txt``; raises FileNotFoundError naming the known templates."""
    if not re.fullmatch(r"[A-Za-z0-9_\-]+", name):
        raise ValueError(f"invalid prompt name {name!r}")
    path = PROMPTS_DIR / f"{name}.txt"
    if not path.is_file():
        known = ", ".join(available_prompts())
        raise FileNotFoundError(f"no judge prompt named {name!r} (known: {known})")
    return path


def available_prompts() -> list[str]:
    """Names of the shipped templates."""
    return sorted(path.stem for path in PROMPTS_DIR.glob("*.txt"))


def load_prompt(name: str) -> str:
    """The template text exactly as shipped (decoded from UTF-8 bytes, no newline translation)."""
    return prompt_path(name).read_bytes().decode("utf-8")


def placeholders(name: str) -> list[str]:
    """The distinct ``{name}`` placeholders of a template, in order of first appearance."""
    return list(dict.fromkeys(match.group(1) for match in _PLACEHOLDER.finditer(load_prompt(name))))


def render_prompt(name: str, **fields: str) -> str:
    """Fill the template's named placeholders with ``fields`` (all of them, exactly those, strings only)."""
    template = load_prompt(name)
    expected = set(placeholders(name))
    if not expected:
        raise ValueError(f"prompt {name!r} has no named placeholders; use render_positional")
    for field, value in fields.items():
        if not isinstance(value, str):
            raise TypeError(f"prompt {name!r}: field {field!r} must be a str, got {type(value).__name__}")
    missing = sorted(expected - set(fields))
    unknown = sorted(set(fields) - expected)
    if missing or unknown:
        raise ValueError(f"prompt {name!r}: missing fields {missing}, unknown fields {unknown}")
    return _PLACEHOLDER.sub(lambda match: fields[match.group(1)], template)  # every one is in ``fields``


def render_positional(name: str, *values: str) -> str:
    """Fill a template's positional ``{}`` slots left to right (VLMEvalKit style), one value per slot."""
    template = load_prompt(name)
    pieces = template.split("{}")
    if len(pieces) - 1 != len(values):
        raise ValueError(f"prompt {name!r} has {len(pieces) - 1} positional slots, got {len(values)} values")
    for position, value in enumerate(values):
        if not isinstance(value, str):
            raise TypeError(f"prompt {name!r}: value {position} must be a str, got {type(value).__name__}")
    return pieces[0] + "".join(value + piece for value, piece in zip(values, pieces[1:], strict=True))
