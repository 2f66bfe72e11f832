"""Published numbers as data, with their source: the reports' "published, not re-run" rows and the
reproduction verdict (values in the metric's unit)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

PUBLISHED_MARK = "published, not re-run"


@dataclass(frozen=True)
class Source:
    """Where a published value comes from and under which conditions it was measured."""

    paper: str
    table: str
    benchmark_version: str
    judge: str = "none (rule-based scoring)"
    checked_against: str = ""  # where in ``table`` the values stand ("": not checked against a source text)
    excerpt: str = ""  # the excerpt file (in the benchmark's folder) holding that text; tests compare with it
    unchecked_reason: str = ""  # why an unchecked value could not be checked (required then)
    corroboration: str = ""  # evidence short of the source text (e.g. recomputed from released results)

    def __str__(self) -> str:
        parts = [self.paper, self.table, self.benchmark_version]
        if self.judge:
            parts.append(f"judge: {self.judge}")
        if not self.checked_against:
            parts.append("not checked against the source text")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class PublishedRow:
    """A row of numbers copied from a paper (never re-run), with its source: ``label`` is the paper's model
    name, ``task`` the pack task whose metrics the values correspond to."""

    label: str
    values: Mapping[str, float]
    source: Source | str
    task: str = ""
    # The model's name as the source prints it, when ``label`` (the pack's canonical name) differs.
    printed_as: str = ""
    # Metrics the reproduction verdict compares (default: every value).
    headline: tuple[str, ...] = field(default=())

    @property
    def row_label(self) -> str:
        return f"{self.label} ({PUBLISHED_MARK})"

    @property
    def compared(self) -> tuple[str, ...]:
        return self.headline or tuple(self.values)
