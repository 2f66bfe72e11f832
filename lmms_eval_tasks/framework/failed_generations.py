"""Failed generations are never answers: the host's failure markers become records carrying only
``failed_generation``, counted instead of scored; answers cut at the token limit are counted. Thread-safe."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

FAILURE_MARKERS = ("[LMMS_EVAL_REQUEST_FAILED", "[LMMS_EVAL_BUDGET_EXCEEDED]", "[LMMS_EVAL_TASKS_NO_TEXT]")
FAILED_KEY = "failed_generation"  # the record field holding the failure's reason
NO_TEXT = "the model returned no text (None)"
# what the ``no_text_result`` host patch hands process_results for a reply without text (content null),
# which the host would otherwise turn into "" and the task score as an empty answer
NO_TEXT_MARKER = f"[LMMS_EVAL_TASKS_NO_TEXT] {NO_TEXT}"


CUT_KEY = "cut_by_token_limit"  # the record field of an answer the server ended at the token limit


class CutReply(str):
    """A reply the server ended at the token limit: scored as given (as the papers do) and counted per task;
    it stays one when stripped, and the ``cut_replies`` host patch keeps it one through the host."""

    def strip(self, chars: str | None = None) -> CutReply:
        return CutReply(super().strip(chars))

    def lstrip(self, chars: str | None = None) -> CutReply:
        return CutReply(super().lstrip(chars))

    def rstrip(self, chars: str | None = None) -> CutReply:
        return CutReply(super().rstrip(chars))


def cut_reply(text: Any, finish_reason: Any) -> Any:
    """``text`` as a ``CutReply`` when ``finish_reason`` says the token limit ended it; else unchanged."""
    return CutReply(text) if finish_reason == "length" and isinstance(text, str) else text


def is_cut(results: Sequence[Any]) -> bool:
    """True when a document's results hold a reply cut at the token limit."""
    return any(isinstance(getattr(result, "text", result), CutReply) for result in results)


def failure_of(output: Any) -> str | None:
    """The failure a model output (text, GenerationResult, rounds) stands for (300 characters), or None."""
    text = getattr(output, "text", output)
    if text is None:
        return NO_TEXT
    if (
        isinstance(text, list | tuple)
        and text
        and all(isinstance(item, str) or item is None for item in text)
    ):
        return next(filter(None, map(failure_of, text)), None)
    if isinstance(text, str) and text.lstrip().startswith(FAILURE_MARKERS):
        return " ".join(text.split())[:300]
    return None


def failure_in_results(results: Sequence[Any]) -> str | None:
    """The first failure among a document's results (generation tasks pass one), or None."""
    if not results:
        return None
    first = results[0]
    if isinstance(first, tuple) and len(first) == 2 and not isinstance(first[0], str):
        return None  # a loglikelihood (log_prob, is_greedy) pair
    return next(filter(None, map(failure_of, results)), None)


def failed_records(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records that stand for failed generations."""
    return [record for record in records if record.get(FAILED_KEY)]


@dataclass(frozen=True)
class TaskFailures:
    """One task's failed generations in this run: how many of how many, and the first reason."""

    task: str
    failed: int
    total: int
    example: str


_lock = threading.Lock()
_failures: dict[str, TaskFailures] = {}


def note_failures(task: str, records: Sequence[Mapping[str, Any]]) -> TaskFailures | None:
    """Count ``task``'s failed records (kept for the launcher's last lines); None when there are none."""
    failed = failed_records(records)
    if not failed:
        return None
    entry = TaskFailures(task, len(failed), len(records), str(failed[0][FAILED_KEY]))
    with _lock:
        _failures[task] = entry
    return entry


def has_failures(tasks: Iterable[str]) -> list[str]:
    """Those of ``tasks`` with failed generations in this run."""
    with _lock:
        return [task for task in tasks if task in _failures]


_cut: dict[str, tuple[int, int]] = {}


def note_cut(task: str, records: Sequence[Mapping[str, Any]]) -> int:
    """Count ``task``'s answers cut at the token limit (for the launcher's warning and table); the count."""
    cut = sum(1 for record in records if record.get(CUT_KEY))
    if cut:
        with _lock:
            _cut[task] = (cut, len(records))
    return cut


def answers_cut(task: str) -> tuple[int, int] | None:
    """(answers cut at the token limit, answers) of ``task`` in this run, or None when none was cut."""
    with _lock:
        return _cut.get(task)


def cut_deviation(cut: int, total: int) -> str:
    """The report's deviation (and the launcher's warning) for ``cut`` of ``total`` answers cut."""
    return (
        f'{cut} of {total} answers were cut at the token limit (finish_reason "length"), scored as given; '
        "raise the task's max_new_tokens (--gen_kwargs max_new_tokens=N) if the answers need more"
    )


def cut_lines() -> list[str]:
    """The launcher's warnings for tasks whose answers were cut at the token limit in this run."""
    with _lock:
        return [f"lmms_eval: warning: {task}: {cut_deviation(*_cut[task])}" for task in sorted(_cut)]


def clear_failures() -> None:
    """Forget the noted failures and cut answers (the launcher calls it before each run)."""
    with _lock:
        _failures.clear()
        _cut.clear()


def failure_lines(uses_cache: bool) -> list[str]:
    """The launcher's closing lines for failed generations: one per task, then the total and the way on."""
    with _lock:
        entries = [_failures[task] for task in sorted(_failures)]
    if not entries:
        return []
    lines = [
        f"lmms_eval: {entry.task}: {entry.failed} of {entry.total} generations failed, not scored "
        f"(first: {entry.example})"
        for entry in entries
    ]
    total = sum(entry.failed for entry in entries)
    if uses_cache:
        way = (
            "rerun the same command: the response cache (--use_cache) keeps every answer and no failure, "
            f"so the rerun asks the server only for these {total}"
        )
    else:
        way = (
            "rerun with --use_cache DIR to keep answers across runs (this run kept none, so a rerun asks "
            "for every request again; with the cache a later rerun asks only for what failed)"
        )
    lines.append(
        f"lmms_eval: evaluation incomplete: {total} failed generation(s) in {len(entries)} task(s) "
        f"(server down, errors or budget); their tasks have no metrics; fix: check the server, then {way}"
    )
    return lines
