"""The `task_index_cache` host patch: the host's index of its own task folder, kept between runs, is the index
the host builds, and is rebuilt whenever anything it was built from changed
(host/speedups/task_index_cache.py).

The folders here are indexed by the host's real indexer (`TaskManager._get_task_and_group`); only the cache
folder and the host version the key records are the test's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

# Imported first: importing either removes every loguru handler (a warnings_logged sink too).
import lmms_eval.llm_judge.launcher  # noqa: F401
import lmms_eval.models  # noqa: F401
import pytest
from loguru import logger

from lmms_eval_tasks.host import patches as host
from lmms_eval_tasks.host.patch_kit import unwrapped
from lmms_eval_tasks.host.speedups import task_index as speedups
from lmms_eval_tasks.host.speedups import task_index_cache as index_cache
from tests.helpers import REPO_ROOT

FILES = {
    "_template_yaml": "dataset_path: json\ndoc_to_text: !function utils.doc_to_text\n",
    "a.yaml": "include: _template_yaml\ntask: cache_probe_a\ntag: cache_probe_tag\n",
    "sub/b.yaml": "task: cache_probe_b\ndataset_path: json\ngroup: cache_probe_old_group\n",
    "sub/group.yaml": "group: cache_probe_group\ntask: [cache_probe_a, cache_probe_b]\n",
    "sub/note.yaml": "dataset_path: json\n",  # neither a task nor a group: the host logs a debug line
}


@pytest.fixture
def tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A task folder with an include template, a tag, a group and a file that is neither; cwd elsewhere."""
    folder = tmp_path / "tasks"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    host.apply_patch("libyaml_task_index")  # the YAML stand-in tells a recording build what it parsed
    return folder


def manager() -> Any:
    from lmms_eval.tasks import TaskManager

    indexer = TaskManager.__new__(TaskManager)
    indexer.logger, indexer.verbosity = logger, "ERROR"
    return indexer


def host_index(folder: Path) -> dict[str, Any]:
    """The host's own index of ``folder``, no cache involved."""
    from lmms_eval.tasks import TaskManager

    return dict(unwrapped(TaskManager._get_task_and_group)(manager(), str(folder)))


def indexed(folder: Path, cache: Path, version: str = "0.7.3") -> tuple[dict[str, Any], Any]:
    """(index, replayed lines or None when built) through the cache, with the host's real indexer."""
    from lmms_eval.tasks import TaskManager

    indexer = manager()
    build = TaskManager._get_task_and_group.__get__(indexer)
    index, replay = index_cache.indexed(indexer, str(folder), lambda: build(str(folder)), version, cache)
    return dict(index), replay


def test_the_probe_applies_on_the_installed_host() -> None:
    assert host.check_patch("task_index_cache").state in ("applies", "applied")


def test_built_once_then_served_the_same(tasks: Path, tmp_path: Path) -> None:
    truth = host_index(tasks)
    assert sorted(truth) == ["cache_probe_a", "cache_probe_b", "cache_probe_group", "cache_probe_old_group",
                             "cache_probe_tag"]  # fmt: skip
    built, replay = indexed(tasks, tmp_path / "cache")
    assert replay is None and built == truth
    served, replay = indexed(tasks, tmp_path / "cache")
    assert replay is not None and served == truth and list(served) == list(truth)  # the same order too
    (cache_file,) = (tmp_path / "cache").glob("*.json")
    payload = json.loads(cache_file.read_text(encoding="utf-8"))
    assert payload["listing"] == index_cache.yaml_listing(str(tasks))
    assert str(tasks / "_template_yaml") in payload["opened"]  # an include is part of the key
    assert payload["absent"] == ["_template_yaml"]  # resolved next to a.yaml: not a file in the cwd


def test_a_hit_replays_the_lines_the_build_logged(tasks: Path, tmp_path: Path) -> None:
    lines: list[tuple[str, str]] = []
    sink = logger.add(
        lambda message: lines.append((message.record["level"].name, message.record["message"])),
        level="DEBUG",
        filter=lambda record: record["name"] == "lmms_eval.tasks",  # the host's indexer
    )
    try:
        indexed(tasks, tmp_path / "cache")
        built_lines, lines[:] = list(lines), []
        _, replay = indexed(tasks, tmp_path / "cache")
    finally:
        logger.remove(sink)
    note = ("DEBUG", f"File note.yaml in {tasks}/sub could not be loaded as a task or group")
    assert len(built_lines) == 2 and note in built_lines  # and the host's notice on b.yaml's `group` key
    assert any(line[1].startswith("`group` and `group_alias` keys") for line in built_lines)
    assert list(replay) == built_lines and lines == []  # replayed by the patch's wrapper, not by lookup


def test_a_served_index_is_a_fresh_copy(tasks: Path, tmp_path: Path) -> None:
    indexed(tasks, tmp_path / "cache")
    served, _ = indexed(tasks, tmp_path / "cache")
    served["cache_probe_tag"]["task"].append("changed by a caller")
    again, _ = indexed(tasks, tmp_path / "cache")
    assert again == host_index(tasks)


@pytest.mark.parametrize(
    "change",
    [
        "edited",
        "edited_same_size",
        "include_edited",
        "added",
        "removed",
        "renamed",
        "added_under_a_new_folder",
        "host_version",
        "include_in_cwd",
    ],
)
def test_any_change_it_was_built_from_rebuilds(change: str, tasks: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    indexed(tasks, cache)
    version = "0.7.3"
    if change == "edited":
        (tasks / "sub/b.yaml").write_text("task: cache_probe_b_renamed\n", encoding="utf-8")
    elif change == "edited_same_size":
        path = tasks / "sub/b.yaml"
        before = path.stat()
        path.write_text(FILES["sub/b.yaml"].replace("probe_b", "probe_x"), encoding="utf-8")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
        assert path.stat().st_size == before.st_size
    elif change == "include_edited":  # not a *.yaml file: only its being read makes it part of the key
        (tasks / "_template_yaml").write_text("dataset_path: json\nclass: Probe\n", encoding="utf-8")
    elif change == "added":
        (tasks / "c.yaml").write_text("task: cache_probe_c\n", encoding="utf-8")
    elif change == "removed":
        (tasks / "sub/note.yaml").unlink()
    elif change == "renamed":
        (tasks / "sub/note.yaml").rename(tasks / "sub/note2.yaml")
    elif change == "added_under_a_new_folder":
        (tasks / "new").mkdir()
        (tasks / "new/d.yaml").write_text("task: cache_probe_d\n", encoding="utf-8")
    elif change == "host_version":
        version = "0.7.4"
    elif change == "include_in_cwd":  # the host tries an include name in the working directory first
        Path("_template_yaml").write_text("dataset_path: json\ntag: cache_probe_cwd_tag\n", encoding="utf-8")
    truth = host_index(tasks)
    if change == "include_edited":
        assert truth["cache_probe_a"]["type"] == "python_task"  # the template's `class` made it one
    index, replay = indexed(tasks, cache, version)
    assert replay is None, "served from a stale cache"
    assert index == truth
    served, replay = indexed(tasks, cache, version)
    assert replay is not None and served == truth  # and the rebuilt index is cached again


def test_changes_inside_ignored_folders_change_nothing(tasks: Path, tmp_path: Path) -> None:
    indexed(tasks, tmp_path / "cache")
    (tasks / "sub/__pycache__").mkdir()
    (tasks / "sub/__pycache__/x.yaml").write_text("task: cache_probe_hidden\n", encoding="utf-8")
    (tasks / "notes.txt").write_text("not YAML\n", encoding="utf-8")
    served, replay = indexed(tasks, tmp_path / "cache")
    assert replay is not None and served == host_index(tasks)


@pytest.mark.parametrize(
    "damage",
    ["", "{", "\x00\xff garbage", "[]", '{"format": 1}', "half"],
    ids=["empty", "cut", "binary", "a list", "fields missing", "cut in half"],
)
def test_a_damaged_cache_file_is_rebuilt_with_a_warning(
    damage: str, tasks: Path, tmp_path: Path, warnings_logged: list[str]
) -> None:
    cache = tmp_path / "cache"
    indexed(tasks, cache)
    (cache_file,) = cache.glob("*.json")
    whole = cache_file.read_text(encoding="utf-8")
    cache_file.write_text(whole[: len(whole) // 2] if damage == "half" else damage, encoding="utf-8")
    index, replay = indexed(tasks, cache)
    assert replay is None and index == host_index(tasks)
    assert len(warnings_logged) == 1
    assert f"the host task index cache {cache_file} is damaged" in warnings_logged[0]
    assert "indexing the host's tasks again and rewriting it" in warnings_logged[0]
    assert json.loads(cache_file.read_text(encoding="utf-8"))["index"] == host_index(tasks)  # rewritten
    assert indexed(tasks, cache)[1] is not None


def test_an_unwritable_cache_warns_once_and_builds_once_per_process(
    tasks: Path, tmp_path: Path, warnings_logged: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be\n", encoding="utf-8")
    cache = blocked / "cache"
    builds = []
    original = index_cache.record
    monkeypatch.setattr(index_cache, "record", lambda *args: builds.append(1) or original(*args))
    first, replay = indexed(tasks, cache)
    assert replay is None and first == host_index(tasks)
    second, replay = indexed(tasks, cache)
    assert replay is not None and second == first and len(builds) == 1  # this process's copy served it
    assert len(warnings_logged) == 1 and "could not write the host task index cache" in warnings_logged[0]
    assert "LMMS_EVAL_TASKS_CACHE" in warnings_logged[0]


def test_threads_indexing_at_once_get_the_same_index(tasks: Path, tmp_path: Path) -> None:
    truth = host_index(tasks)
    results: list[dict[str, Any]] = []
    errors: list[BaseException] = []

    def index_it() -> None:
        try:
            for _ in range(5):
                results.append(indexed(tasks, tmp_path / "cache")[0])
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    workers = [threading.Thread(target=index_it) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == [] and len(results) == 20 and all(result == truth for result in results)


WRITER = """
import sys
from pathlib import Path
from lmms_eval_tasks.host.speedups import task_index_cache as index_cache

path, rounds = Path(sys.argv[1]), int(sys.argv[2])
payload = {"format": 1, "task_dir": sys.argv[3], "listing": [], "opened": {}, "absent": [], "messages": [],
           "index": {f"task_{n}": {"type": "task", "yaml_path": "x" * 200} for n in range(2000)}}
for _ in range(rounds):
    index_cache.store(path, payload)
"""


def test_concurrent_writers_leave_a_whole_file_readers_never_see_a_part(tmp_path: Path) -> None:
    """Four processes rewrite one cache file (400 KB) while this one reads it: every read is a whole payload,
    and no temporary file is left."""
    path = tmp_path / "cache" / "index.json"
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), "25", f"writer {n}"], env=environment)
        for n in range(4)
    ]
    reads = 0
    while any(writer.poll() is None for writer in writers) or reads == 0:
        index_cache._MEMO.clear()
        try:
            payload = index_cache._read(path)
        except index_cache.Damaged as error:
            pytest.fail(f"a reader saw part of a file: {error}")
        if payload is not None:
            reads += 1
            assert len(payload["index"]) == 2000 and payload["task_dir"].startswith("writer ")
    assert [writer.wait() for writer in writers] == [0, 0, 0, 0]
    assert reads > 0 and [item.name for item in path.parent.iterdir()] == ["index.json"]


def test_the_host_folder_through_a_task_manager_is_the_hosts_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The installed patch: a TaskManager's index of the host's ~1,900 built-in task files is the index the
    host builds, the second time served from the cache (every built-in task, group and tag)."""
    from lmms_eval.tasks import TaskManager

    monkeypatch.setenv("LMMS_EVAL_TASKS_CACHE", str(tmp_path))
    for name in ("pack_task_index", "libyaml_task_index", "task_index_cache"):
        assert host.apply_patch(name).ok
    host_dir = speedups._host_tasks_dir()
    truth = speedups._host_index_of(host_dir, fast=True)  # the host's indexer with libyaml, no cache
    served = []
    original = index_cache.lookup
    monkeypatch.setattr(index_cache, "lookup", lambda *args: served.append(original(*args)) or served[-1])
    first = TaskManager("ERROR").task_index
    second = TaskManager("ERROR").task_index
    assert served[0] is None and served[1] is not None  # built, then served
    assert first == second
    assert {name: entry for name, entry in second.items() if name in truth} == truth
    assert len(truth) > 1500
    assert list(index_cache.cache_dir().glob("*.json")) == [index_cache.cache_file(host_dir)]


def test_a_subclass_that_reads_yaml_its_own_way_is_not_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lmms_eval.tasks import TaskManager

    monkeypatch.setenv("LMMS_EVAL_TASKS_CACHE", str(tmp_path))
    assert host.apply_patch("task_index_cache").ok

    class OnlyGroups(TaskManager):
        def _config_is_task(self, config: Any) -> bool:
            return False

    indexer = OnlyGroups.__new__(OnlyGroups)
    indexer.logger = logger
    index = indexer._get_task_and_group(speedups._host_tasks_dir())
    assert index and all(entry["type"] != "task" for entry in index.values())
    assert not index_cache.cache_dir().exists()
