"""Scrub secrets from any text the judges put into logs, errors, results or caches."""

from __future__ import annotations

import os
import re

_SECRET_ENV_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
_PATTERNS = [
    re.compile(r"\bsk-[A-Za-z0-9_\-*]{6,}"),  # OpenAI-style keys, even partially masked ones
    re.compile(r"(?i)(bearer\s+)[^\s\"',}]+"),
    re.compile(r"(?i)((?:api[-_]?key|authorization|access[-_]?token)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}&]+"),
]
REDACTED = "[REDACTED]"


def secret_values(extra: tuple[str | None, ...] = ()) -> list[str]:
    """Secrets to scrub: the given values plus every env var whose name looks secret (KEY/TOKEN/...)."""
    values = [value for value in extra if value]
    for name, value in os.environ.items():
        if value and len(value) >= 6 and any(word in name.upper() for word in _SECRET_ENV_WORDS):
            values.append(value)
    # longest first so a key that contains another is removed whole
    return sorted(set(values), key=len, reverse=True)


def scrub(text: str, secrets: tuple[str | None, ...] = ()) -> str:
    """``text`` with known secret values and key-like patterns replaced by a marker."""
    for value in secret_values(secrets):
        text = text.replace(value, REDACTED)
    for pattern in _PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda match: match.group(1) + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def safe_url(url: str | None) -> str | None:
    """A URL without user info, query string or fragment (they can carry keys)."""
    if not url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
