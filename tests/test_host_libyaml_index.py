"""The `libyaml_task_index` host patch: the host's task index parsed by libyaml is the index PyYAML's pure
Python parser gives, and task configs (where `!function` resolves from the file's path) still load in full."""

from __future__ import annotations

import threading
from pathlib import Path

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.host import patches as host
from lmms_eval_tasks.host.speedups import task_index as speedups


def test_the_probe_applies_on_the_installed_host() -> None:
    assert host.check_patch("libyaml_task_index").state in ("applies", "applied")


def test_the_packs_task_folder_indexes_the_same_both_ways() -> None:
    host.apply_patch("libyaml_task_index")
    slow = speedups._host_index_of(str(TASKS_DIR), fast=False)
    fast = speedups._host_index_of(str(TASKS_DIR), fast=True)
    assert len(slow) > 100 and fast == slow


def test_a_full_load_outside_the_index_resolves_function_tags(tmp_path: Path) -> None:
    """libyaml's loader has no file name, so `!function` could not resolve: only the index uses it."""
    import lmms_eval.utils as host_utils

    host.apply_patch("libyaml_task_index")
    (tmp_path / "hooks.py").write_text("def answer(doc):\n    return 42\n", encoding="utf-8")
    (tmp_path / "task.yaml").write_text("task: t\ndoc_to_text: !function hooks.answer\n", encoding="utf-8")
    loaded: dict = {}

    def load() -> None:  # another thread, while this one is inside an index build
        loaded.update(host_utils.load_yaml_config(str(tmp_path / "task.yaml"), mode="full"))

    speedups._INDEXING.active = True
    try:
        worker = threading.Thread(target=load)
        worker.start()
        worker.join()
    finally:
        speedups._INDEXING.active = False
    assert loaded["doc_to_text"]({}) == 42
    assert host_utils.load_yaml_config(str(tmp_path / "task.yaml"), mode="full")["doc_to_text"]({}) == 42
