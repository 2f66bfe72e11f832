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
