"""The pack's task YAML read without the host (names, kinds, descriptions, tags, group members), and the
precomputed host index the launcher merges into every host task index."""

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

    # libyaml's parser where PyYAML has it (same safe constructors, about 7x faster: the launcher reads
    # every pack YAML on each run), else PyYAML's pure-Python one.
    safe_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _TaskYamlLoader(safe_loader):  # type: ignore[misc,valid-type]
        """SafeLoader that keeps `!function x.y` as the plain string `x.y`."""

    _TaskYamlLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    return _TaskYamlLoader


@cache
def load_yaml(path: Path) -> dict[str, Any]:
    import yaml

    with open(path, encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=_loader()) or {}
    include = data.get("include")
    if include:
        base = load_yaml((path.parent / include).resolve())
        data = {**base, **{key: value for key, value in data.items() if key != "include"}}
    return data


def _describe(config: dict[str, Any], kind: str) -> str:
    metadata = config.get("metadata")
    if isinstance(metadata, dict) and metadata.get("description"):
        return str(metadata["description"]).strip().splitlines()[0]
    if kind == "group":
        return f"group of {len(config.get('task') or [])} tasks"
    source = config.get("dataset_path", "?")
    return f"{config.get('output_type', 'generate_until')} task on {source}"


def pack_tasks(tasks_dir: Path = TASKS_DIR) -> list[TaskEntry]:
    """Every task and group defined by `*.yaml` files under ``tasks_dir``, sorted by name; read once per
    process (group aggregations ask for their members hundreds of times)."""
    return list(_pack_tasks(Path(tasks_dir)))


@cache
def _pack_tasks(tasks_dir: Path) -> tuple[TaskEntry, ...]:
    entries: dict[str, TaskEntry] = {}
    for path in sorted(tasks_dir.rglob("*.yaml")):
        config = load_yaml(path.resolve())
        tags = config.get("tag") or []
        tags = (tags,) if isinstance(tags, str) else tuple(tags)
        if "group" in config and isinstance(config.get("task"), list):
            name, kind = str(config["group"]), "group"
        elif "task" in config and isinstance(config["task"], str):
            name, kind = config["task"], "task"
        else:
            continue
        entries[name] = TaskEntry(name, kind, _describe(config, kind), str(path.relative_to(tasks_dir)), tags)
    return tuple(sorted(entries.values(), key=lambda entry: entry.name))


def task_config(entry: TaskEntry, tasks_dir: Path = TASKS_DIR) -> dict[str, Any]:
    """A pack task or group's YAML configuration (``include`` resolved, ``!function`` kept as strings)."""
    return dict(load_yaml((tasks_dir / entry.path).resolve()))


def group_members(group: str, tasks_dir: Path = TASKS_DIR) -> list[str] | None:
    """The member tasks (or groups) a group's YAML under ``tasks_dir`` lists, None when it is no group."""
    entry = task_entry(group, tasks_dir)
    if entry is None or entry.kind != "group":
        return None
    members = task_config(entry, tasks_dir).get("task") or []
    return [member if isinstance(member, str) else str(member.get("task", "")) for member in members]


def pack_names(tasks_dir: Path = TASKS_DIR) -> set[str]:
    """All task, group and tag names the pack introduces."""
    return {name for entry in pack_tasks(tasks_dir) for name in (entry.name, *entry.tags)}


def sample_tasks(tasks_dir: Path = TASKS_DIR) -> list[str]:
    """Top-level sample tasks/groups (names ending in `_sample`) that run on bundled offline data."""
    return [entry.name for entry in pack_tasks(tasks_dir) if entry.name.endswith("_sample")]


# The precomputed host index: the pack's entries added to every host task index without parsing its YAML.

HOST_INDEX_FILE = TASKS_DIR / "host_index.json"


def yaml_fingerprint(tasks_dir: Path = TASKS_DIR) -> str:
    """SHA-256 over the host's version (it may index YAML differently) and every task YAML and template."""
    import hashlib

    from lmms_eval_tasks.reporting import schema

    digest = hashlib.sha256()
    digest.update(f"lmms-eval {schema.host_version()}".encode() + b"\0")
    for path in sorted(tasks_dir.rglob("*")):
        if path.is_file() and (path.suffix == ".yaml" or path.name.endswith("_yaml")):
            digest.update(path.relative_to(tasks_dir).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def host_task_entries(tasks_dir: Path = TASKS_DIR) -> dict[str, Any]:
    """The entries the host's own indexer (``TaskManager._get_task_and_group``, whose signature the
    ``pack_task_index`` patch probes) makes for ``tasks_dir``, without indexing the host's own tasks."""
    from lmms_eval.tasks import TaskManager
    from loguru import logger

    indexer = TaskManager.__new__(TaskManager)
    indexer.logger = logger
    return dict(indexer._get_task_and_group(str(tasks_dir)))


def write_host_index(tasks_dir: Path = TASKS_DIR, target: Path = HOST_INDEX_FILE) -> Path:
    """Regenerate the precomputed index (paths stored relative to ``tasks_dir``)."""
    import json

    entries = {}
    for name, entry in sorted(host_task_entries(tasks_dir).items()):
        entry = dict(entry)
        if isinstance(entry.get("yaml_path"), str):
            entry["yaml_path"] = (
                Path(entry["yaml_path"]).resolve().relative_to(tasks_dir.resolve()).as_posix()
            )
        entries[name] = entry
    payload = {"fingerprint": yaml_fingerprint(tasks_dir), "entries": entries}
    target.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return target


def load_host_index(tasks_dir: Path = TASKS_DIR, source: Path = HOST_INDEX_FILE) -> dict[str, Any] | None:
    """The precomputed entries with absolute paths, or None when missing or stale (then parse the YAML)."""
    import json

    try:
        payload = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if payload.get("fingerprint") != yaml_fingerprint(tasks_dir):
        return None
    entries = {}
    for name, entry in payload["entries"].items():
        entry = dict(entry)
        if isinstance(entry.get("yaml_path"), str):
            entry["yaml_path"] = str(tasks_dir / entry["yaml_path"])
        if isinstance(entry.get("task"), list):
            entry["task"] = list(entry["task"])
        entries[name] = entry
    return entries


def leaf_tasks(names: list[str], tasks_dir: Path = TASKS_DIR) -> list[str]:
    """The pack's tasks ``--tasks names`` runs (groups and tags expanded, in order; other names left out)."""
    entries = {entry.name: entry for entry in pack_tasks(tasks_dir)}
    tagged: dict[str, list[str]] = {}
    for entry in entries.values():
        for tag in entry.tags:
            tagged.setdefault(tag, []).append(entry.name)
    found: list[str] = []
    pending, seen = list(names), set()
    while pending:
        name = pending.pop(0)
        if name in seen:
            continue
        seen.add(name)
        entry = entries.get(name)
        if entry is None:
            pending[:0] = tagged.get(name, [])
        elif entry.kind == "task":
            found.append(name)
        else:
            pending[:0] = group_members(name, tasks_dir) or []
    return found


def task_entry(name: str, tasks_dir: Path = TASKS_DIR) -> TaskEntry | None:
    """The pack's task or group called ``name``, or None."""
    return next((entry for entry in pack_tasks(tasks_dir) if entry.name == name), None)
