"""Pack task, group and tag names never collide with the host's built-ins (the host silently wins a clash)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.framework.task_index import pack_names, pack_tasks, sample_tasks


@pytest.fixture(scope="module")
def host_index() -> dict:
    from lmms_eval.tasks import TaskManager

    return TaskManager("ERROR", include_path=str(TASKS_DIR)).task_index


def _from_pack(entry: dict) -> bool:
    yaml_path = entry.get("yaml_path", -1)
    return isinstance(yaml_path, str) and Path(yaml_path).resolve().is_relative_to(TASKS_DIR.resolve())


def test_no_pack_name_collides_with_a_host_builtin(host_index: dict) -> None:
    host_builtin_names = {name for name, entry in host_index.items() if not _from_pack(entry)}
    names = pack_names()
    assert names, "the pack defines no tasks"
    assert not names & host_builtin_names, sorted(names & host_builtin_names)


def test_every_pack_task_and_group_is_indexed_from_the_pack(host_index: dict) -> None:
    for entry in pack_tasks():
        assert entry.name in host_index, entry.name
        assert _from_pack(host_index[entry.name]), f"{entry.name} resolves to {host_index[entry.name]}"


def test_every_benchmark_ships_an_offline_sample_task() -> None:
    samples = set(sample_tasks())
    benchmark_folders = {
        path.name for path in TASKS_DIR.iterdir() if path.is_dir() and any(path.rglob("*.yaml"))
    }
    for benchmark in benchmark_folders:
        assert any(name.startswith(benchmark) for name in samples), f"{benchmark} has no *_sample task"


def _resolved(index: dict) -> dict:
    return {
        name: {**entry, "yaml_path": str(Path(entry["yaml_path"]).resolve())}
        if isinstance(entry.get("yaml_path"), str)
        else entry
        for name, entry in index.items()
    }


def test_precomputed_index_matches_what_the_host_parses() -> None:
    """The launcher's shipped `host_index.json` is fresh: equal to the host indexing the YAML files now.

    After editing task YAML, regenerate it with `python -m lmms_eval_tasks.framework.task_index`.
    """
    from lmms_eval_tasks.framework.task_index import host_task_entries, load_host_index

    shipped = load_host_index()
    assert shipped is not None, (
        "host_index.json is missing or stale: run `python -m lmms_eval_tasks.framework.task_index`"
    )
    assert _resolved(shipped) == _resolved(host_task_entries())


def test_a_stale_precomputed_index_is_ignored(tmp_path: Path) -> None:
    import shutil

    from lmms_eval_tasks.framework.task_index import load_host_index, write_host_index

    copy = tmp_path / "tasks"
    shutil.copytree(TASKS_DIR / "hallusionbench", copy / "hallusionbench")
    index_file = tmp_path / "index.json"
    write_host_index(copy, index_file)
    assert load_host_index(copy, index_file) is not None
    yaml_file = copy / "hallusionbench" / "yaml" / "hallusionbench_sample.yaml"
    yaml_file.write_text(yaml_file.read_text() + "\n# edited\n")
    assert load_host_index(copy, index_file) is None  # the launcher then parses the YAML itself
