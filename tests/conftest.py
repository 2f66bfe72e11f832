"""The suite's two tiers (marker `slow`) and the session fixtures shared by several test files.

`make test` runs every test on three pytest-xdist workers, a whole file per worker (`--dist loadfile`, so a
module-scoped launcher run is made once), the longest files (as the last run timed them) first;
`make test-quick` runs the tests not marked `slow`. A test marked
`slow` starts the launcher (the host harness) or a benchmark script in a subprocess; any other test that
tries fails with the fix (tests/helpers.py `refuse_in_quick_tests`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import QUICK_TEST_VARIABLE
from tests.skeleton import skeleton_registered  # noqa: F401 - an autouse fixture

REPO_ROOT = Path(__file__).resolve().parents[1]


# Seconds each test file took in the last run that ran it (pytest's cache, .pytest_cache): the next run hands
# the longest files out first, so the xdist workers end together (longest-first is close to the best split).
# A fresh clone (CI) has no cache: it orders by tests/file_seconds.json, a copy of a full run's timings kept
# in the repository (refresh: cp .pytest_cache/v/lmms_eval_tasks/file_seconds tests/file_seconds.json).
FILE_SECONDS_KEY = "lmms_eval_tasks/file_seconds"
FILE_SECONDS_SNAPSHOT = Path(__file__).with_name("file_seconds.json")
UNMEASURED_SLOW_FILE_SECONDS = 600.0  # a file with `slow` tests never timed yet is assumed long
_file_seconds: dict[str, float] = {}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest files first (stable otherwise; a file's tests stay together): xdist hands files out in
    collection order, so the long ones start early and the short ones fill the gaps at the end instead of
    one worker idling. Without timings of a last run, the files holding `slow` tests come first."""
    cache = getattr(config, "cache", None)
    measured: dict[str, float] = {
        **_snapshot_seconds(),
        **((cache.get(FILE_SECONDS_KEY, {}) if cache is not None else {}) or {}),
    }
    slow_files = {_file_of(item.nodeid) for item in items if item.get_closest_marker("slow")}

    def seconds(item: pytest.Item) -> float:
        file = _file_of(item.nodeid)
        return measured.get(file, UNMEASURED_SLOW_FILE_SECONDS if file in slow_files else 0.0)

    items.sort(key=lambda item: -seconds(item))


def _snapshot_seconds() -> dict[str, float]:
    """The repository's copy of a full run's per-file seconds (empty when missing or unreadable)."""
    import json

    try:
        seconds = json.loads(FILE_SECONDS_SNAPSHOT.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return seconds if isinstance(seconds, dict) else {}


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up each file's seconds (setup, call and teardown; under xdist the controller sees every report)."""
    file = _file_of(report.nodeid)
    _file_seconds[file] = _file_seconds.get(file, 0.0) + report.duration


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Name the running test in the environment unless it is `slow` (read by `refuse_in_quick_tests`);
    set before the test's fixtures, so a launcher run in a fixture is checked against the test using it."""
    if item.get_closest_marker("slow"):
        os.environ.pop(QUICK_TEST_VARIABLE, None)
    else:
        os.environ[QUICK_TEST_VARIABLE] = item.nodeid


def pytest_sessionfinish(session: pytest.Session) -> None:
    os.environ.pop(QUICK_TEST_VARIABLE, None)
    cache = getattr(session.config, "cache", None)
    if cache is None or hasattr(session.config, "workerinput") or not _file_seconds:
        return  # an xdist worker: the controller records the whole run's timings
    measured = cache.get(FILE_SECONDS_KEY, {}) or {}
    cache.set(FILE_SECONDS_KEY, {**measured, **{file: round(t, 1) for file, t in _file_seconds.items()}})


def _cache_root() -> Path:
    """The pack's cache: ``$LMMS_EVAL_TASKS_CACHE``, else the repository's ``.cache`` (Makefile default)."""
    configured = os.environ.get("LMMS_EVAL_TASKS_CACHE")
    return Path(configured) if configured else REPO_ROOT / ".cache"


@pytest.fixture
def warnings_logged() -> Iterator[list[str]]:
    """Loguru messages of level WARNING and above emitted during the test."""
    from loguru import logger

    messages: list[str] = []
    sink = logger.add(lambda message: messages.append(str(message)), level="WARNING")
    yield messages
    logger.remove(sink)


@pytest.fixture(scope="session")
def tiny_llava_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built tiny random LLaVA (seed 0): the cached ``<cache>/tiny-llava`` if complete, else a fresh build.

    Use it as ``--model llava_hf --model_args pretrained=<dir>,device=cpu,device_map=cpu``.
    """
    from lmms_eval_tasks.models.tiny_llava import build_tiny_llava, is_complete_build

    cached = _cache_root() / "tiny-llava"
    if is_complete_build(cached, seed=0):
        return cached
    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava") / "model", seed=0)


@pytest.fixture(scope="session")
def tiny_llava_card_run(tiny_llava_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One launcher run of the card's command (tests/helpers.py ``card_command_arguments``: the tiny LLaVA
    as ``--model llava``, --limit 4) shared by the session's tests: (output folder, stderr)."""
    from tests.helpers import card_command_arguments, run_launcher

    output = tmp_path_factory.mktemp("card") / "one"
    completed = run_launcher(*card_command_arguments(tiny_llava_dir, output), timeout=600)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return output, completed.stderr


_TINY_TASK_HOOKS = """
def doc_to_visual(doc):
    return [doc["image"].convert("RGB")]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return doc["question"]


def options_text(doc, lmms_eval_specific_kwargs=None):
    return doc["question"] + "\\nA. red\\nB. green\\nC. blue\\nD. black\\nAnswer with the option's letter."


def process_results(doc, results):
    return {"exact_match": float(results[0].strip() == doc["answer"])}


def process_letter(doc, results):
    return {"exact_match": float(results[0].strip() == doc["letter"])}
"""

_TINY_TASK_COMMON = """dataset_path: parquet
dataset_kwargs:
  data_files:
    test: tiny_models.parquet
test_split: test
doc_to_visual: !function utils.doc_to_visual
"""

_TINY_TASKS = {
    "tiny_models_yesno": """output_type: generate_until
doc_to_text: !function utils.doc_to_text
doc_to_target: answer
generation_kwargs:
  max_new_tokens: 8
process_results: !function utils.process_results
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
""",
    "tiny_models_options": """output_type: generate_until
doc_to_text: !function utils.options_text
doc_to_target: letter
generation_kwargs:
  max_new_tokens: 8
process_results: !function utils.process_letter
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
""",
    "tiny_models_choice": """output_type: multiple_choice
doc_to_text: !function utils.doc_to_text
doc_to_choice: ["Yes", "No"]
doc_to_target: answer
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
""",
}

TINY_TASK_COLOURS = ["red", "green", "blue", "black"]


@pytest.fixture(scope="session")
def tiny_models_task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway task folder (``--include_path``) with 8 generated images and three tiny tasks.

    ``tiny_models_yesno`` (generate_until, yes/no), ``tiny_models_options`` (generate_until, options A-D)
    and ``tiny_models_choice`` (multiple_choice over Yes/No), all on the same parquet with an Image column.
    """
    import datasets
    from PIL import Image

    folder = tmp_path_factory.mktemp("tiny-models-tasks")
    rgb = {"red": (220, 20, 20), "green": (20, 200, 20), "blue": (20, 20, 220), "black": (0, 0, 0)}
    rows: dict[str, list] = {"question": [], "answer": [], "letter": [], "image": []}
    for index in range(8):
        colour = TINY_TASK_COLOURS[index % 4]
        path = folder / f"square_{index}.png"
        Image.new("RGB", (40 + 4 * index, 30), rgb[colour]).save(path)
        rows["question"].append(f"Is square number {index} red? Please answer yes or no.")
        rows["answer"].append("Yes" if colour == "red" else "No")
        rows["letter"].append("ABCD"[TINY_TASK_COLOURS.index(colour)])
        rows["image"].append(str(path))
    dataset = datasets.Dataset.from_dict(rows).cast_column("image", datasets.Image())
    dataset.to_parquet(str(folder / "tiny_models.parquet"))
    (folder / "utils.py").write_text(_TINY_TASK_HOOKS, encoding="utf-8")
    for name, body in _TINY_TASKS.items():
        (folder / f"{name}.yaml").write_text(f"task: {name}\n{_TINY_TASK_COMMON}{body}", encoding="utf-8")
    return folder
