"""lmms-eval-tasks: a task pack for the lmms-eval harness (DARE, HallusionBench, VRB, the Revisiting datasets,
ConTextual and their machinery); cheap to import, heavy libraries are imported where they are used."""

from pathlib import Path

__version__ = "0.1.0"

PACKAGE_DIR = Path(__file__).resolve().parent
TASKS_DIR = PACKAGE_DIR / "tasks"
TASKS_PACKAGE = f"{__name__}.tasks"  # the benchmarks' packages, found by folder (framework.registry)

CACHE_ENV = "LMMS_EVAL_TASKS_CACHE"


def cache_root() -> Path:
    """``$LMMS_EVAL_TASKS_CACHE``, else ``~/.cache/lmms_eval_tasks``: the one root of every pack cache (read
    here only)."""
    from lmms_eval_tasks import environment

    root = environment.value(CACHE_ENV)
    return Path(root).expanduser() if root else Path.home() / ".cache" / "lmms_eval_tasks"


__all__ = ["__version__", "CACHE_ENV", "PACKAGE_DIR", "TASKS_DIR", "TASKS_PACKAGE", "cache_root"]
