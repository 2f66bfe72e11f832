"""The README's two commands share one set-up path: `make demo` and `make test` plan the same set-up steps
(read from `make -n`, which runs nothing), `make test` adds only what tests need on top, nothing the demo
does not use runs before the demo, and once set up both run offline with no set-up step at all."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT

# What the Makefile's set-up rules depend on (copied into a scratch folder; the real .venv is never touched).
SETUP_INPUTS = (
    "Makefile",
    "pyproject.toml",
    "constraints/cpu.txt",
    "scripts/install_packages.sh",
    "scripts/install_wordnet.sh",
    "lmms_eval_tasks/wordnet.py",
)
# .venv/.lmms-eval-tasks-<name>, in the order set-up makes them
STAMPS = ("setup", "wordnet", "doctor", "test")
WORDNET_STAMP = Path(".venv/.lmms-eval-tasks-wordnet")

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    for name in SETUP_INPUTS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, tmp_path / name)
    return tmp_path


def planned(folder: Path, target: str) -> list[str]:
    """The commands `make TARGET` would run in ``folder`` (`make -n` runs none: no line calls $(MAKE))."""
    completed = subprocess.run(
        ["make", "-n", "--no-print-directory", target],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MAKEFLAGS": ""},
    )
    return completed.stdout.splitlines()


def set_up(folder: Path, stamps: tuple[str, ...] = STAMPS) -> None:
    """The stamps a finished set-up leaves, each newer than the last and than every input."""
    venv = folder / ".venv"
    (venv / "bin").mkdir(parents=True)
    newest = max((folder / name).stat().st_mtime for name in SETUP_INPUTS)
    for offset, name in enumerate(stamps, start=1):
        stamp = venv / f".lmms-eval-tasks-{name}"
        stamp.touch()
        os.utime(stamp, (newest + offset, newest + offset))


def test_from_nothing_demo_and_test_plan_the_same_set_up_and_chromium_only_for_the_tests(
    checkout: Path,
) -> None:
    demo, test = planned(checkout, "demo"), planned(checkout, "test")
    set_up_steps = demo[: demo.index("touch .venv/.lmms-eval-tasks-doctor") + 1]
    for step in ("install_packages.sh", "build-tiny-llava", "install_wordnet.sh", "doctor --dev"):
        assert any(step in line for line in set_up_steps), (step, set_up_steps)
    assert demo[len(set_up_steps) :] == [
        ".venv/bin/python -m lmms_eval_tasks.demo --output out/demo --tiny-llava .cache/tiny-llava"
    ]
    assert test[: len(set_up_steps)] == set_up_steps  # the same path, in the same order
    assert not any("chromium" in line for line in demo)
    extra = test[len(set_up_steps) :]
    assert any("apt-get install" in line and "chromium" in line for line in extra)
    assert "pytest" in extra[-1]
    # the tiny LLaVA is built while WordNet installs: one recipe line starts the build in the background
    [side_by_side] = [line for line in set_up_steps if "build-tiny-llava" in line]
    assert side_by_side.rstrip(" \\").endswith("&")


def test_once_set_up_demo_and_test_run_no_set_up_step(checkout: Path) -> None:
    set_up(checkout)
    assert planned(checkout, "demo") == [
        ".venv/bin/python -m lmms_eval_tasks.demo --output out/demo --tiny-llava .cache/tiny-llava"
    ]
    [test] = planned(checkout, "test")
    assert test.startswith(".venv/bin/python -m pytest")


def test_a_venv_set_up_before_the_test_stamp_existed_adds_only_the_tests_extras(checkout: Path) -> None:
    set_up(checkout, STAMPS[:-1])
    assert len(planned(checkout, "demo")) == 1
    test = planned(checkout, "test")
    assert not any("install_packages.sh" in line or "doctor" in line for line in test)
    assert any("chromium" in line for line in test) and "pytest" in test[-1]


def test_a_changed_installer_sets_up_again_and_wordnet_is_not_installed_twice(checkout: Path) -> None:
    set_up(checkout)
    installer = checkout / "scripts/install_packages.sh"
    later = (checkout / ".venv/.lmms-eval-tasks-test").stat().st_mtime + 10
    os.utime(installer, (later, later))
    demo = planned(checkout, "demo")
    assert any("install_packages.sh" in line for line in demo)
    # the set-up recipe installs WordNet and then stamps it after its own stamp; `make -n` cannot touch, so
    # the separate WordNet rule shows once more here, but never before the set-up recipe that stamps it
    first_wordnet = next(index for index, line in enumerate(demo) if "install_wordnet.sh" in line)
    assert "build-tiny-llava" in demo[first_wordnet - 1]
    assert demo[first_wordnet + 1] == "touch .venv/.lmms-eval-tasks-setup && touch " + str(WORDNET_STAMP)
