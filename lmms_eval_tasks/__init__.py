"""lmms-eval-tasks: a task pack for the lmms-eval harness.

Adds DARE, HallusionBench, VRB, the Revisiting-MLLM-Evaluation datasets and ConTextual, plus the
shared machinery they need (image corruptions, LLM judges, scoring). Importing this package is cheap:
heavy libraries (torch, cv2, nltk, openai) are imported lazily by the modules that need them.
"""

from pathlib import Path

__version__ = "0.1.0"

PACKAGE_DIR = Path(__file__).resolve().parent
TASKS_DIR = PACKAGE_DIR / "tasks"
TASKS_PACKAGE = f"{__name__}.tasks"  # the benchmarks' packages, found by folder (framework.registry)

CACHE_ENV = "LMMS_EVAL_TASKS_CACHE"


def cache_root() -> Path:
    """``$LMMS_EVAL_TASKS_CACHE``, else ``~/.cache/lmms_eval_tasks``: the one root of every pack cache (judge
    answers, corrupted images, WordNet, ConTextual's images, the tiny LLaVA, the host's task index), read here
    only."""
    from lmms_eval_tasks import environment

    root = environment.value(CACHE_ENV)
    return Path(root).expanduser() if root else Path.home() / ".cache" / "lmms_eval_tasks"


__all__ = ["__version__", "CACHE_ENV", "PACKAGE_DIR", "TASKS_DIR", "TASKS_PACKAGE", "cache_root"]
