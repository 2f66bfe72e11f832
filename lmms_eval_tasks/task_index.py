"""Read the pack's task YAML files without the host: names, kinds, descriptions, tags.

Used by `lmms-eval-tasks tasks`, the demo (which runs every `*_sample` task) and the test that guards
against name clashes with the host's built-in tasks (the host silently prefers its own on a clash).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from lmms_eval_tasks import TASKS_DIR


@dataclass(frozen=True)
class TaskEntry:
    """One task or group the pack defines."""

    name: str
    kind: str  # "task" or "group"
    description: str
    path: str
    tags: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _loader() -> type:
    import yaml

    class _TaskYamlLoader(yaml.SafeLoader):
        """SafeLoader that keeps `!function x.y` as the plain string `x.y`."""

    def _function(loader: Any, node: Any) -> str:
        return loader.construct_scalar(node)

    _TaskYamlLoader.add_constructor("!function", _function)
    return _TaskYamlLoader


@cache
def _load_yaml(path: Path) -> dict[str, Any]:
    import yaml

    with open(path, encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=_loader()) or {}
    include = data.get("include")
    if include:
        base = _load_yaml((path.parent / include).resolve())
        data = {**base, **{key: value for key, value in data.items() if key != "include"}}
    return data


def _describe(config: dict[str, Any], kind: str) -> str:
    metadata = config.get("metadata")
    if isinstance(metadata, dict) and metadata.get("description"):
        return str(metadata["description"]).strip().splitlines()[0]
    if kind == "group":
        members = config.get("task") or []
        return f"group of {len(members)} tasks"
    source = config.get("dataset_path", "?")
    return f"{config.get('output_type', 'generate_until')} task on {source}"


def pack_tasks(tasks_dir: Path = TASKS_DIR) -> list[TaskEntry]:
    """Every task and group defined by `*.yaml` files under ``tasks_dir``, sorted by name."""
    entries: dict[str, TaskEntry] = {}
    for path in sorted(tasks_dir.rglob("*.yaml")):
        config = _load_yaml(path.resolve())
        tags = config.get("tag") or []
        tags = (tags,) if isinstance(tags, str) else tuple(tags)
        if "group" in config and isinstance(config.get("task"), list):
            name, kind = str(config["group"]), "group"
        elif "task" in config and isinstance(config["task"], str):
            name, kind = config["task"], "task"
        else:
            continue
        entries[name] = TaskEntry(name, kind, _describe(config, kind), str(path.relative_to(tasks_dir)), tags)
    return sorted(entries.values(), key=lambda entry: entry.name)


def pack_names(tasks_dir: Path = TASKS_DIR) -> set[str]:
    """All task, group and tag names the pack introduces."""
    names: set[str] = set()
    for entry in pack_tasks(tasks_dir):
        names.add(entry.name)
        names.update(entry.tags)
    return names


def sample_tasks(tasks_dir: Path = TASKS_DIR) -> list[str]:
    """Top-level sample tasks/groups (names ending in `_sample`) that run on bundled offline data."""
    return [entry.name for entry in pack_tasks(tasks_dir) if entry.name.endswith("_sample")]
