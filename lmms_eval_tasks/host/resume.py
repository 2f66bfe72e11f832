"""Resume after preemption: the same command, run again, asks the model only for what it had not answered.

The host's response cache (``--use_cache DIR``) writes each run into ``DIR/runs/<run id>/`` and merges it
into ``DIR/cache.db`` only when the evaluation succeeds; the run id is ``LMMS_CACHE_RUN_ID``, else
``SLURM_JOB_ID``/``TORCHELASTIC_RUN_ID``, else a random one. A killed run's answers therefore stay in a
folder no later run reads. The launcher fixes the run id to one derived from the model and its arguments
(unless ``LMMS_CACHE_RUN_ID`` is set), so a rerun of the same model reopens the killed run's store; with the
``cache_checkpoints`` patch (``host/host_bug_fixes.py``) answers are stored as they come.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence

from lmms_eval_tasks.host.argv import flag_value

RUN_ID_ENV = "LMMS_CACHE_RUN_ID"
CHECKPOINT_ENV = "LMMS_CACHE_CHECKPOINT_INTERVAL"
DEFAULT_CHECKPOINT_INTERVAL = 256  # the host's default


def stable_run_id(model: str, model_args: str | None) -> str:
    """The cache run id of every run of ``model`` with ``model_args`` (order of the arguments ignored)."""
    parts = sorted(part.strip() for part in (model_args or "").split(",") if part.strip())
    digest = hashlib.sha256(json.dumps([model, parts]).encode("utf-8")).hexdigest()[:16]
    return f"lmms-eval-tasks-{digest}"


def prepare_cache(argv: Sequence[str]) -> str | None:
    """With ``--use_cache``, fix the cache's run id for this model (unless the user set one); returns the
    one-line notice to print, or None without ``--use_cache``."""
    cache = flag_value(argv, "--use_cache")
    if cache is None:
        return None
    interval = os.environ.get(CHECKPOINT_ENV) or str(DEFAULT_CHECKPOINT_INTERVAL)
    if os.environ.get(RUN_ID_ENV):
        run_id = os.environ[RUN_ID_ENV]
        origin = f"{RUN_ID_ENV} as set"
    else:
        model = flag_value(argv, "--model") or "hf"
        run_id = stable_run_id(model, flag_value(argv, "--model_args"))
        os.environ[RUN_ID_ENV] = run_id
        origin = "the same for every run of this model and model_args"
    return (
        f"lmms_eval: response cache {cache}: answers are stored every {interval} responses "
        f"({CHECKPOINT_ENV}) in run {run_id} ({origin}); a killed run resumes with the same command"
    )
