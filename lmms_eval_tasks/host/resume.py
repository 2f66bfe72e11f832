"""Resume after preemption: with ``--use_cache`` the same command asks only for what is missing, the store's
``LMMS_CACHE_RUN_ID`` fixed from the model and its arguments (the host picks a random one)."""

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


_claimed: dict[str, int] = {}  # lock file -> its descriptor, held for the life of the process


def claim_cache(argv: Sequence[str]) -> str | None:
    """With ``--use_cache``, hold (on rank 0) the lock of this run id's store: None, or the one-line refusal
    (two runs on one store would both ask for what it lacks)."""
    cache = flag_value(argv, "--use_cache")
    if cache is None or os.environ.get("RANK", os.environ.get("LOCAL_RANK", "0")) != "0":
        return None
    import fcntl
    from pathlib import Path

    run_id = os.environ.get(RUN_ID_ENV, "")
    path = Path(cache, f"lmms_eval_tasks-{hashlib.sha256(run_id.encode()).hexdigest()[:16]}.lock")
    if str(path) in _claimed:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip() or "?"
        os.close(descriptor)
        return (
            f"lmms_eval: the response cache {cache} is in use by another run of run id {run_id} "
            f"(pid {holder}): two runs on one store would both ask for what it lacks; wait until it "
            f"ends (this command then resumes from its answers), or give this run its own {RUN_ID_ENV}"
        )
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, str(os.getpid()).encode(), 0)
    _claimed[str(path)] = descriptor
    return None
