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

__all__ = ["__version__", "PACKAGE_DIR", "TASKS_DIR", "TASKS_PACKAGE"]
