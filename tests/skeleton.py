"""The benchmark `lmms-eval-tasks new-benchmark` writes, checked with the registered ones: tests that check
every benchmark parametrise over ``with_skeleton(names)``; the skeleton (``SKELETON``) is generated once
per process into a temporary package of its own and registered only while a test that names it runs
(``skeleton_registered``, an autouse fixture of tests/conftest.py), so the guide cannot drift from them."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from lmms_eval_tasks.framework import registry

SKELETON = "zz_skeleton"
_written: list[Path] = []


def with_skeleton(names: list[str]) -> list[str]:
    """``names`` (the registered benchmarks) and the skeleton, for a test's parametrisation."""
    return [*names, SKELETON]


def skeleton_folder(tmp_path_factory: pytest.TempPathFactory | None = None) -> Path:
    """The skeleton's package folder, written on first use (``new-benchmark SKELETON --out DIR``)."""
    if not _written:
        from lmms_eval_tasks.cli.new_benchmark import write_benchmark

        assert tmp_path_factory is not None, "the skeleton is written by the fixture skeleton_registered"
        root = tmp_path_factory.mktemp("skeleton")
        write_benchmark(SKELETON, out=root)  # registers it: skeleton_registered does, per test
        registry.unregister(SKELETON)
        _written.append(root / SKELETON)
    return _written[0]


def task_folder(name: str) -> Path:
    """The folder whose YAML defines benchmark ``name``'s tasks: the skeleton's, the pack's tasks folder, or
    the package folder of a benchmark installed next to the pack (``new-benchmark --out``)."""
    from lmms_eval_tasks import TASKS_DIR

    if name == SKELETON:
        return skeleton_folder()
    package = str(registry.get_benchmark(name).behaviour).rpartition(".")[0]
    if package.startswith("lmms_eval_tasks."):
        return TASKS_DIR
    return Path(importlib.import_module(package).__file__).resolve().parent


@pytest.fixture(autouse=True)
def skeleton_registered(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Registers the skeleton for a test parametrised with it (and only then)."""
    callspec = getattr(request.node, "callspec", None)
    values = callspec.params.values() if callspec is not None else ()
    if not any(isinstance(value, str) and value == SKELETON for value in values):  # arrays: elementwise ==
        yield
        return
    skeleton_folder(tmp_path_factory)
    registry.register(importlib.import_module(SKELETON).BENCHMARK)
    try:
        yield
    finally:
        registry.unregister(SKELETON)
