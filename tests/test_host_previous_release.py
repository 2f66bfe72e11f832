"""The pack against the previous lmms-eval release, 0.7.2, from the package registry: which host patches apply
by probe, and for any that does not, why.

The release is downloaded once (``pip download lmms-eval==0.7.2 --no-deps``) and unpacked under the pack
cache (``$LMMS_EVAL_TASKS_CACHE/host-releases``), so reruns are offline. A subprocess puts its sources first
on ``sys.path`` (the environment's other packages stay as they are) and loads the pack there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from lmms_eval_tasks import cache_root
from lmms_eval_tasks.host.patches import PATCHES
from tests.helpers import REPO_ROOT, offline_environment

pytestmark = pytest.mark.slow  # a subprocess importing a whole host release

PREVIOUS_RELEASE = "0.7.2"

# What the pack does on 0.7.2, patch by patch (see docs/models.md): every patch applies as on 0.7.3 except
# cache_version, whose probe finds no `_lmms_eval_repo_root` there (0.7.2 keys its cache another way).
EXPECTED_ON_PREVIOUS_RELEASE = {**dict.fromkeys(PATCHES, "applied"), "cache_version": "skipped"}

LOAD_THE_PACK = """
import json
import lmms_eval
from lmms_eval_tasks.host import patches, version

statuses = patches.apply_patches(names=list(patches.PATCHES))  # every patch, each model's too
try:  # the release's own task index, which every evaluation builds first
    from lmms_eval.tasks import TaskManager

    TaskManager(verbosity="ERROR")
    host_index = "builds"
except Exception as error:
    host_index = f"{type(error).__name__}: {error}"
print(json.dumps({
    "host_sources": lmms_eval.__file__,
    "host_version": version.host_version(),
    "host_tested": version.host_tested(),
    "statuses": {status.name: [status.state, status.detail] for status in statuses},
    "warning": patches.skipped_line(statuses),
    "host_index": host_index,
}))
"""


def release_sources(release: str) -> Path:
    """The unpacked wheel of lmms-eval ``release`` in the pack cache, downloaded from the registry once."""
    folder = cache_root() / "host-releases" / f"lmms_eval-{release}"
    if (folder / "lmms_eval" / "__init__.py").is_file():
        return folder
    with tempfile.TemporaryDirectory(prefix="lmms_eval_release_") as download:
        command = [sys.executable, "-m", "pip", "download", f"lmms-eval=={release}", "--no-deps"]
        command += ["--only-binary", ":all:", "--quiet", "--dest", download]
        completed = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        if completed.returncode != 0:
            reason = (completed.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"lmms-eval {release} cannot be downloaded from the package registry here: {reason}")
        (wheel,) = Path(download).glob("lmms_eval-*.whl")
        staging = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(staging)
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            staging.rename(folder)
        except OSError:  # another worker unpacked it first
            shutil.rmtree(staging, ignore_errors=True)
    return folder


@pytest.fixture(scope="module")
def pack_on_previous_release() -> dict:
    sources = release_sources(PREVIOUS_RELEASE)
    environment = offline_environment(PYTHONPATH=os.pathsep.join([str(sources), str(REPO_ROOT)]))
    completed = subprocess.run(
        [sys.executable, "-c", LOAD_THE_PACK],
        capture_output=True,
        text=True,
        env=environment,
        cwd=REPO_ROOT,
        timeout=900,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    loaded = json.loads(completed.stdout.strip().splitlines()[-1])
    assert Path(loaded["host_sources"]).is_relative_to(sources)  # the release's sources, not the venv's
    assert loaded["host_version"] == PREVIOUS_RELEASE and loaded["host_tested"] is False
    return loaded


def test_which_patches_apply_to_the_previous_release(pack_on_previous_release: dict) -> None:
    statuses = pack_on_previous_release["statuses"]
    table = "\n".join(f"{name:24} {state:11} {detail}" for name, (state, detail) in statuses.items())
    print(f"host patches on lmms-eval {PREVIOUS_RELEASE}:\n{table}")
    assert {name: state for name, (state, _) in statuses.items()} == EXPECTED_ON_PREVIOUS_RELEASE, table
    # the one skipped patch is named, with its cause, in the one warning line
    warning = pack_on_previous_release["warning"]
    assert warning and "\n" not in warning and "cache_version" in warning, warning


def test_the_previous_release_cannot_build_its_own_task_index(pack_on_previous_release: dict) -> None:
    """Why the pack still requires lmms-eval 0.7.3: the 0.7.2 wheel lacks a file its own task YAML includes,
    so every evaluation fails before it starts, with or without the pack (docs/models.md)."""
    found = pack_on_previous_release["host_index"]
    assert found.startswith("FileNotFoundError") and "corecognition/_default_template_yaml" in found, found
