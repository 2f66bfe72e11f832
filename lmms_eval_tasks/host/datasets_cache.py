"""What an offline run (or one without network) finds in the caches the host's runs read, for ``doctor``, the
launcher's checks and ``task_dataset_context``. An offline ``load_dataset`` reads the `datasets` library's
Arrow cache, never the hub's download cache: ``offline_cache_entry`` asks the ``Cache`` builder it uses."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

LOCAL_DATASET_BUILDERS = {"parquet", "json", "csv", "arrow", "text", "imagefolder", "audiofolder"}
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
# What `datasets`/`huggingface_hub` say of a dataset an offline run's cache lacks (read by the launcher's last
# line and by the host download's retries, which such an error skips).
NOT_CACHED_WORDS = ("OfflineModeIsEnabled", "Couldn't find cache", "is not cached")
HUB_PROBE_TIMEOUT = 5.0  # seconds: one connection attempt instead of the host's 10 download retries
_TRUE = {"1", "true", "yes", "on"}


def datasets_cache_dir() -> Path:
    """Where the host's ``datasets.load_dataset`` caches: as lmms-eval 0.7.3 resolves it."""
    explicit = os.environ.get("LMMS_EVAL_DATASETS_CACHE", "").strip()
    if explicit:
        return Path(os.path.expandvars(explicit)).expanduser()
    hf_home = Path(os.path.expandvars(os.environ.get("HF_HOME", "~/.cache/huggingface"))).expanduser()
    return Path(
        os.path.expandvars(os.environ.get("HF_DATASETS_CACHE", str(hf_home / "datasets")))
    ).expanduser()


def hub_cache_dir() -> Path:
    """The huggingface_hub download cache (``HF_HUB_CACHE``, else ``$HF_HOME/hub``)."""
    explicit = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    hf_home = Path(os.path.expandvars(os.environ.get("HF_HOME", "~/.cache/huggingface"))).expanduser()
    return hf_home / "hub"


def offline_cache_entry(path: str, name: str | None, data_files: Any = None) -> Path | None:
    """The prepared folder an offline ``load_dataset(path, name, data_files=...)`` reads, or None: that of the
    ``Cache`` builder `datasets` itself uses offline (its config id, newest version and commit)."""
    from datasets.packaged_modules.cache.cache import Cache

    try:
        builder = Cache(
            cache_dir=str(datasets_cache_dir()),
            repo_id=path,
            dataset_name=path.split("/")[-1],
            config_name=name,
            version="auto",
            hash="auto",
            **({"data_files": data_files} if data_files else {}),
        )
    except (ValueError, FileNotFoundError, OSError, KeyError, json.JSONDecodeError):
        return None
    return Path(builder.cache_dir)


def hub_snapshot(path: str) -> Path | None:
    """The newest huggingface_hub snapshot folder of dataset ``path``, or None."""
    snapshots = hub_cache_dir() / f"datasets--{path.replace('/', '--')}" / "snapshots"
    found = sorted(snapshots.iterdir(), key=lambda item: item.stat().st_mtime) if snapshots.is_dir() else []
    return found[-1] if found else None


def offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` or ``HF_DATASETS_OFFLINE`` forbids downloads."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in OFFLINE_VARIABLES)


def is_hub_id(path: Any) -> bool:
    """True for a hub dataset id (``org/name``), not a local builder (``parquet``) or an existing folder."""
    return (
        isinstance(path, str)
        and path not in LOCAL_DATASET_BUILDERS
        and path.count("/") == 1
        and not Path(path).expanduser().exists()
    )


def full_cache_kwargs(path: Any, name: Any, dataset_kwargs: dict[str, Any] | None) -> dict[str, Any] | None:
    """``dataset_kwargs`` reading a hub dataset's whole cache, pinned to its commit, for a task asking for
    some of its files (VRB: VQAv2's) when only the whole is cached (by the host's own tasks); else None."""
    if not is_hub_id(path) or not isinstance(dataset_kwargs, dict) or not dataset_kwargs.get("data_files"):
        return None
    if offline_cache_entry(path, name, dataset_kwargs["data_files"]) is not None:
        return None  # its own files are cached: read those
    entry = offline_cache_entry(path, name, None)
    if entry is None:
        return None
    kwargs = {key: value for key, value in dataset_kwargs.items() if key != "data_files"}
    if len(entry.name) == 40:  # a hub commit: an online run reads the same revision from the cache
        kwargs["revision"] = entry.name
    return kwargs


def _hub_reachable(timeout: float = HUB_PROBE_TIMEOUT) -> bool:
    """One TCP connection to the hub endpoint (``HF_ENDPOINT``); True when a proxy is set (not probed)."""
    if any(os.environ.get(name) for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = endpoint.hostname or "huggingface.co"
    port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError:
        return False
    return True


def hub_sources(tasks: list[str], include_paths: Sequence[str] = ()) -> list[tuple[str, str, Any, Any]]:
    """(task, dataset_path, dataset_name, data_files) of each pack task in ``tasks`` reading a hub id, as the
    host will configure it (a task of the user's ``--include_path`` folders wins over the pack's)."""
    from lmms_eval_tasks import TASKS_DIR
    from lmms_eval_tasks.framework.task_index import task_config, task_entry

    folders = [Path(folder) for folder in include_paths if Path(folder).is_dir()] + [Path(TASKS_DIR)]
    sources = []
    for task in tasks:
        found = next(((entry, folder) for folder in folders if (entry := task_entry(task, folder))), None)
        if found is None:
            continue
        config = task_config(*found)
        path = config.get("dataset_path")
        kwargs = config.get("dataset_kwargs") or {}
        if is_hub_id(path) and not kwargs.get("load_from_disk"):
            sources.append((task, path, config.get("dataset_name"), kwargs.get("data_files")))
    return sources


def missing_dataset_line(
    tasks: list[str], probe: bool = True, include_paths: Sequence[str] = ()
) -> str | None:
    """None when every hub dataset the pack's ``tasks`` read is cached or the hub is reachable (one connection
    attempt, ``probe``); else one line naming the first that is not and how to fetch it."""
    missing = [
        (task, path, name)
        for task, path, name, data_files in hub_sources(tasks, include_paths)
        if offline_cache_entry(path, name, data_files) is None
        and (not data_files or offline_cache_entry(path, name, None) is None)  # the whole dataset serves too
    ]
    if not missing or (not offline() and (not probe or _hub_reachable())):
        return None
    task, path, name = missing[0]
    why = (
        " / ".join(f"{var}=1" for var in OFFLINE_VARIABLES if os.environ.get(var)) + " forbids downloading it"
        if offline()
        else "the hub is unreachable from here"
    )
    config = f" [{name}]" if name else ""
    return (
        f"lmms_eval: {task} reads the dataset {path}{config}, which is not in the datasets cache "
        f"({datasets_cache_dir()}) and {why}: run the same command once with network and "
        f"{' / '.join(OFFLINE_VARIABLES)} unset (it downloads and caches the dataset; offline runs then "
        "read the cache), or point the task's dataset_path at a local copy"
    )


def hub_model_cached(repo_id: str) -> bool:
    """True when the huggingface_hub cache holds a snapshot of model ``repo_id``."""
    snapshots = hub_cache_dir() / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    return snapshots.is_dir() and any(snapshots.iterdir())


def missing_checkpoint_line(model: str, checkpoint: str | None, probe: bool = True) -> str | None:
    """None when ``--model model`` can load ``checkpoint`` (a local folder, cached, or the hub reachable);
    else one line naming the checkpoint, how to fetch it and the offline variables."""
    if not checkpoint or checkpoint.count("/") != 1 or Path(checkpoint).expanduser().exists():
        return None
    if hub_model_cached(checkpoint):
        return None
    if not offline() and (not probe or _hub_reachable()):
        return None
    why = "HF_HUB_OFFLINE=1 forbids downloading it" if offline() else "the hub is unreachable from here"
    return (
        f"lmms_eval: --model {model} needs the checkpoint {checkpoint}, which is not in the Hugging Face "
        f"cache ({hub_cache_dir()}) and {why}: download it once with network (`huggingface-cli download "
        f"{checkpoint}`, or a first run with HF_HUB_OFFLINE unset), or pass --model_args pretrained=<a local "
        f"copy>"
    )
