"""Persistent judge-reply cache: one SQLite file in WAL mode, a transaction per reply, safe to kill and to
share; keyed by a SHA-256 of everything that determines a reply, never storing a key (docs/judges.md)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CACHE_SCHEMA = 1


def cache_key(
    model: str, messages: list[dict[str, str]], params: dict[str, Any], repeat: int, namespace: str = ""
) -> str:
    """SHA-256 of the canonical JSON of everything that determines the judge's reply."""
    payload = {
        "schema": CACHE_SCHEMA,
        "namespace": namespace,
        "model": model,
        "messages": messages,
        "params": params,
        "repeat": repeat,
    }
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedReply:
    """A stored reply."""

    text: str
    prompt_tokens: int
    completion_tokens: int


class ReplyCache:
    """Thread-safe, process-safe key -> reply store; ``path=None`` keeps it in memory only."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        target = str(self.path) if self.path is not None else ":memory:"
        self._connection = sqlite3.connect(
            target, timeout=60.0, check_same_thread=False, isolation_level=None
        )
        with self._lock:
            self._connection.execute("PRAGMA busy_timeout=60000")
            if self.path is not None:
                self._connection.execute("PRAGMA journal_mode=WAL")
                self._connection.execute("PRAGMA synchronous=NORMAL")
            self._connection.execute(
                "CREATE TABLE IF NOT EXISTS replies ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, repeat INTEGER NOT NULL, reply TEXT NOT NULL,"
                " prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,"
                " created REAL NOT NULL)"
            )

    def get_many(self, keys: Iterable[str]) -> dict[str, CachedReply]:
        """The stored replies among ``keys``."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, CachedReply] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._connection.execute(
                    f"SELECT key, reply, prompt_tokens, completion_tokens FROM replies"
                    f" WHERE key IN ({marks})",
                    chunk,
                ).fetchall()
                for key, reply, prompt_tokens, completion_tokens in rows:
                    found[key] = CachedReply(reply, prompt_tokens, completion_tokens)
        return found

    def put(
        self, key: str, model: str, repeat: int, reply: str, prompt_tokens: int, completion_tokens: int
    ) -> None:
        """Store one successful reply (its own transaction: durable and atomic)."""
        with self._lock:
            self._connection.execute(
                "INSERT OR REPLACE INTO replies"
                " (key, model, repeat, reply, prompt_tokens, completion_tokens, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, model, repeat, reply, prompt_tokens, completion_tokens, time.time()),
            )

    def keys(self) -> set[str]:
        """All stored keys (for tests and maintenance)."""
        with self._lock:
            return {row[0] for row in self._connection.execute("SELECT key FROM replies")}

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._connection.close()
