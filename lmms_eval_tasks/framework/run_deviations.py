"""What a run's own arguments changed (``--limit`` and its rounding, ``--offset``, differing
``--gen_kwargs``), as report deviations with their values (docs/reports.md); recorded, not refused."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.reporting.schema import recorded_limit


def _parsed_gen_kwargs(value: Any) -> dict[str, str]:
    """``--gen_kwargs`` as ``{key: text}`` (the host's ``k=v,k2=v2`` string, split as the host splits it:
    not at commas inside quotes or brackets, ``until=["a","b"]``; or a mapping)."""
    if isinstance(value, dict):
        return {str(key): str(item) for key, item in value.items()}
    text = str(value or "").strip()
    try:
        from lmms_eval.utils import _smart_comma_split

        parts = _smart_comma_split(text) if text else []
    except ImportError:  # another host version
        parts = text.split(",")
    pairs: dict[str, str] = {}
    for part in parts:
        key, sep, item = part.partition("=")
        if sep and key.strip():
            pairs[key.strip()] = item.strip()
    return pairs


def _same(given: str, own: Any) -> bool:
    if str(own).lower() == given.lower():
        return True
    try:
        return float(given) == float(own)
    except (TypeError, ValueError):
        return False


def _own_settings(name: str, seen: frozenset[str] = frozenset()) -> list[dict[str, Any]] | None:
    """The ``generation_kwargs`` of ``name``'s tasks (a group's members, subgroups too); None if unknown."""
    from lmms_eval_tasks.framework.task_index import group_members, task_config, task_entry

    entry = task_entry(name)
    if entry is not None and entry.kind == "task":
        own = task_config(entry).get("generation_kwargs")
        return [dict(own) if isinstance(own, dict) else {}]
    members = group_members(name) if name not in seen else None
    if not members:
        return None
    settings: list[dict[str, Any]] = []
    for member in members:
        found = _own_settings(member, seen | {name})
        if found is None:
            return None
        settings += found
    return settings


def argument_deviations(args: Any, task: str) -> list[str]:
    """One deviation per run argument changing ``task``'s numbers (limit, differing generation settings)."""
    from lmms_eval_tasks.framework.cuts import cut_note, limit_and_size

    deviations: list[str] = []
    limit = recorded_limit(args)
    if limit is not None:
        note, sized = cut_note(task), limit_and_size(task)
        shown = int(limit) if isinstance(limit, float) and limit.is_integer() else limit  # the host's 4.0
        part = "only part of the task's documents were evaluated"
        if note:
            deviations.append(f"{note}; {part}")
        elif sized is not None and sized[0] >= sized[1]:
            deviations.append(
                f"--limit {shown}: not below the task's {sized[1]} documents: every document was evaluated"
            )
        elif sized is not None:
            first = f"the first {sized[0]} of the task's {sized[1]} documents"
            deviations.append(f"--limit {shown}: {first}; {part}")
        else:
            deviations.append(f"--limit {shown}: only part of each task's documents were evaluated")
    offset = getattr(args, "offset", None) if args is not None else None
    try:
        skipped = int(offset or 0)
    except (TypeError, ValueError):
        skipped = 0
    if skipped > 0:
        deviations.append(
            f"--offset {skipped}: each task's first {skipped} documents were skipped (a scoring unit they "
            "split is scored in part)"
        )
    given = _parsed_gen_kwargs(getattr(args, "gen_kwargs", None) if args is not None else None)
    if given:
        settings = _own_settings(task)
        if settings is None:
            shown = ", ".join(f"{key}={value}" for key, value in given.items())
            deviations.append(
                f"--gen_kwargs {shown}: generation settings set for the run, not the tasks' own"
            )
        else:  # a task's own settings, or every member task's of a group
            changed = {
                key: value
                for key, value in given.items()
                if any(key not in own or not _same(value, own[key]) for own in settings)
            }
            if changed:
                shown = ", ".join(f"{key}={value}" for key, value in changed.items())
                theirs = ", ".join(
                    f"{key}={'/'.join(dict.fromkeys(str(own[key]) for own in settings if key in own))}"
                    for key in changed
                    if any(key in own for own in settings)
                )
                whose = "the task's own" if len(settings) == 1 else "its tasks' own"
                deviations.append(
                    f"--gen_kwargs {shown}: generation settings differ from {whose} ({theirs or 'not set'}); "
                    "the numbers do not follow the paper's protocol"
                )
    return deviations
