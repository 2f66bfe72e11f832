"""Report warnings from a scorer's counts (``Benchmark.count_keys``): one line in ``provenance.warnings``
per count that changes a headline number when not zero."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# What each count of a benchmark's ``count_keys`` is, and what it does to the headline numbers.
COUNT_MEANINGS: dict[str, tuple[str, str]] = {
    "unparsed": ("unparsed answers", "scored as wrong"),
    "simple_unparsed": ("unparsed answers to simple questions", "scored as wrong"),
    "complex_unparsed": ("unparsed answers to complex questions", "scored as wrong"),
    "unjudged": ("unjudged verdicts", "the judge gave none; left out of the judged metrics"),
    "unjudged_verdicts": ("unjudged verdicts", "the judge gave none; left out of the judged metrics"),
    "empty_predictions": ("empty predictions", "generation errors? scored as the model's answers"),
    "missing_predictions": ("missing (null) predictions", "generation errors? scored as wrong"),
    "no_verdict": ("judge replies without a verdict word", "see the report's details for how they scored"),
    "undiagnosed_verdicts": (
        "judged verdicts without an LH/VI diagnosis",
        "an input of the decision tree (pair reference verdict or consistency verdict) is unknown; left out "
        "of the LH/VI/Mixed shares",
    ),
    "unjudged_consistency_needed": (
        "consistency verdicts the diagnosis needed but the judge did not give",
        "those answers are left out of the LH/VI/Mixed shares",
    ),
}


def _count_value(key: str, metrics: Mapping[str, Any], details: Mapping[str, Any]) -> int | None:
    """``key``'s count from the metrics, else the details, else ``details["counts"]`` (None if absent)."""
    counts = details.get("counts") if isinstance(details.get("counts"), Mapping) else {}
    for source in (metrics, details, counts):
        value = source.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, int) or value.is_integer():
                return int(value)
    return None


def count_warnings(
    count_keys: Sequence[str],
    metrics: Mapping[str, Any],
    details: Mapping[str, Any],
    records: int,
    given: Sequence[str] = (),
) -> list[str]:
    """One warning per declared count that is not zero, ``"N <what> (of <records> records, count '<key>'):
    <consequence>"``, unless a warning in ``given`` already starts with ``"N <what>"``."""
    warnings: list[str] = []
    for key in dict.fromkeys(count_keys):
        value = _count_value(key, metrics, details)
        if not value:
            continue
        what, consequence = COUNT_MEANINGS.get(key, (key.replace("_", " "), "see the report's details"))
        if any(str(warning).startswith(f"{value} {what}") for warning in [*given, *warnings]):
            continue
        warnings.append(f"{value} {what} (of {records} records, count {key!r}): {consequence}")
    return warnings


def with_count_warnings(
    given: Sequence[str],
    count_keys: Sequence[str],
    metrics: Mapping[str, Any],
    details: Mapping[str, Any],
    records: int,
) -> list[str]:
    """``given`` (the run's and the scorer's warnings), then each count warning none of them says."""
    given = list(given)
    return list(dict.fromkeys([*given, *count_warnings(count_keys, metrics, details, records, given)]))
