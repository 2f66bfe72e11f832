"""Scrub secrets from any text the judges put into logs, errors, results or caches."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

_SECRET_ENV_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
_PATTERNS = [
    re.compile(r"\bsk-[A-Za-z0-9_\-*]{6,}"),  # OpenAI-style keys, even partially masked ones
    re.compile(r"\bhf_[A-Za-z0-9]{8,}"),  # Hugging Face tokens
    # Authorization schemes (Basic: base64 of user:password)
    # values stop before a backslash: a JSON line keeps its escapes (``x\"`` must not lose its ``\``)
    re.compile(r"(?i)(bearer\s+)[^\s\"',}\\]{6,}"),
    # user info of a URL (``scheme://user:password@host``): kept the scheme and host, dropped the rest
    # (bounded and anchored at a word start: linear on hostile text)
    re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]{0,30}://)[^\s/@\"'<>]{1,256}@"),
    # a URL's query parameters named like a credential (``?key=...``, ``&sig=...``, ``api_key``), any length
    re.compile(
        r"(?i)([?&;](?:[\w.\-]{0,40}[_.\-])?(?:key|token|secret|password|passwd|pwd|sig|signature|auth)=)"
        r"[^&#\s\"'<>]+"
    ),  # fmt: skip
    re.compile(
        r"(?i)((?:api[-_]?key|authorization|access[-_]?token|hf[-_]?token|token|password|secret)[\"']?\s*[:=]"
        r"\s*[\"']?)[^\s\"',}&\\]{6,}"  # 6+ characters: "token: 5 cents" is prose, not a secret
    ),
]
REDACTED = "[REDACTED]"
# ``Basic <base64 of user:password>``: redacted when the token decodes to a credential (has a colon)
_BASIC = re.compile(r"(?i)\b(basic\s+)([A-Za-z0-9+/]{8,}={0,2})")


def _basic_credential(match: re.Match[str]) -> str:
    import base64
    import binascii

    token = match.group(2)
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return match.group(0)
    return f"{match.group(1)}{REDACTED}" if b":" in decoded else match.group(0)


_last: tuple[Any, list[str]] = (None, [])  # (extra and the environment's raw items, their secret values)


def secret_values(extra: tuple[str | None, ...] = ()) -> list[str]:
    """Secrets to scrub: the given values plus every env var whose name looks secret (KEY/TOKEN/...),
    remembered for the last ``extra`` and raw environment in one tuple replaced whole (thread-safe): a run
    scrubs thousands of lines, and reading ``os.environ`` decodes every variable each time."""
    global _last
    raw = getattr(os.environ, "_data", None)
    decode = getattr(os.environ, "decodekey", None), getattr(os.environ, "decodevalue", None)
    if not isinstance(raw, dict) or not (callable(decode[0]) and callable(decode[1])):
        return _secret_values(extra, os.environ.items())
    items = tuple(raw.items())  # one snapshot: the key, and the values read from it (not os.environ again,
    key = (tuple(extra), items)  # which another thread may have changed since)
    last_key, last_values = _last
    if last_key == key:
        return list(last_values)
    values = _secret_values(extra, [(decode[0](name), decode[1](value)) for name, value in items])
    _last = (key, values)
    return list(values)


def _secret_values(extra: tuple[str | None, ...], environment: Iterable[tuple[str, str]]) -> list[str]:
    values = [value for value in extra if value]
    for name, value in environment:
        if value and len(value) >= 6 and any(word in name.upper() for word in _SECRET_ENV_WORDS):
            values.append(value)
    values += [form for value in values for form in _base64_forms(value)]
    # longest first so a key that contains another is removed whole
    return sorted(set(values), key=len, reverse=True)


def _base64_forms(value: str) -> list[str]:
    """The part of ``value``'s base64 encoding that does not depend on its neighbours, at each of the three
    alignments (a judge or proxy echoing the request's headers base64-encoded)."""
    import base64

    forms = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + value.encode("utf-8", "surrogatepass")).decode("ascii")
        core = encoded[(4 * offset + 2) // 3 : len(encoded) - 4]  # drop what the neighbours' bytes touch
        if len(core) >= 12:
            forms.append(core)
    return forms


def scrub(text: str, secrets: tuple[str | None, ...] = ()) -> str:
    """``text`` with known secret values and key-like patterns replaced by a marker."""
    return _scrubbed(text, secret_values(secrets))


def scrub_lines(lines: list[str], secrets: tuple[str | None, ...] = ()) -> list[str]:
    """``[scrub(line) for line in lines]``, the secret values looked up once: about half of ``scrub``'s
    time, and a results file has thousands of lines."""
    values = secret_values(secrets)
    return [_scrubbed(line, values) for line in lines]


def _scrubbed(text: str, values: list[str]) -> str:
    for value in values:
        text = text.replace(value, REDACTED)
    text = _BASIC.sub(_basic_credential, text)
    for pattern in _PATTERNS:
        if pattern.pattern.startswith("(?i)(\\b[a-z]"):  # URL user info: scheme kept, "[REDACTED]@" shown
            text = pattern.sub(lambda match: f"{match.group(1)}{REDACTED}@", text)
        elif pattern.groups:
            text = pattern.sub(lambda match: match.group(1) + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def safe_url(url: str | None) -> str | None:
    """A URL without user info, query string or fragment (they can carry keys): what descriptions show."""
    if not url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
