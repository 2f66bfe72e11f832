"""Where a message sends the user for more: a docs page as a path that exists on this machine (installed
under ``<prefix>/share/lmms-eval-tasks/docs/`` or in a checkout's ``docs/``), never a bare ``docs/x.md``."""

from __future__ import annotations

import sys
from pathlib import Path

INSTALLED_DOCS = Path("share", "lmms-eval-tasks", "docs")
CHECKOUT_DOCS = Path(__file__).resolve().parent.parent / "docs"


def doc(page: str) -> str:
    """The path of docs page ``page`` (``models.md``, ``judges.md#anchor``) as installed or checked out."""
    name, _, anchor = page.partition("#")
    for root in (Path(sys.prefix) / INSTALLED_DOCS, CHECKOUT_DOCS):
        if (root / name).is_file():
            return str(root / name) + (f"#{anchor}" if anchor else "")
    return f"{name} in the lmms-eval-tasks documentation"
