"""Option parsing and failure lines shared by the subcommand modules (``score``, ``compare``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def parse_option(text: str) -> tuple[str, Any]:
    """Parse a `key=value` option; values are JSON when they parse as JSON, else strings."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    key, raw = text.split("=", 1)
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


def fail(prog: str, message: object, code: int = 2) -> int:
    """Print ``<prog>: <message>`` on stderr; returns the command's exit ``code``."""
    print(f"{prog}: {message}", file=sys.stderr)
    return code
