"""The runs a command line asks for, and the arguments the pack's tasks cannot honour (``--limit``,
``--offset``, ``--num_fewshot``, ``--model_args``, devices), refused in one line before the host starts.
Generation settings are not refused: reports record them as deviations (``framework/run_deviations.py``)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.host.argv import config_entries, flag_value, flag_values, parse_model_args, run_values


def _pack_names() -> set[str]:
    """Task, group and tag names the pack defines (from its precomputed host index; cheap)."""
    try:
        entries = json.loads((TASKS_DIR / "host_index.json").read_text(encoding="utf-8"))["entries"]
    except (OSError, ValueError, KeyError):
        from lmms_eval_tasks.framework.task_index import pack_names

        return pack_names()
    return set(entries)


def _pack_tasks(tasks: Any, names: set[str]) -> list[str]:
    """The entries of ``--tasks`` that name pack tasks, groups or tags, matched with ``fnmatch`` as the host
    does (``--tasks "hallusionbench*"``)."""
    import fnmatch

    listed = tasks if isinstance(tasks, list) else str(tasks or "").split(",")
    entries = [str(name).strip() for name in listed if str(name).strip()]
    return [entry for entry in entries if entry in names or fnmatch.filter(names, entry)]


def _non_zero(value: Any) -> bool:
    """A value given (not blank, not "None") that is not the number 0 (a non-number counts as given)."""
    if value is None or str(value).strip() in ("", "None"):
        return False
    try:
        return float(value) != 0  # "00" is 0
    except (TypeError, ValueError):
        return True  # the host reports it


def run_argument_problem(arguments: Sequence[str]) -> str | None:
    """One line refusing a ``--limit``, ``--offset`` or ``--num_fewshot`` the run cannot honour, else None."""
    for run in run_values(arguments, ("--limit", "--offset", "--num_fewshot", "--tasks")):
        problem = _limit_problem(run) or _pack_only_problem(run)
        if problem:
            return problem
    return None


def _limit_problem(run: dict[str, Any]) -> str | None:
    limit = run.get("limit")
    if limit is None:
        return None
    try:
        value = float(limit)
    except (TypeError, ValueError):
        return f"--limit {limit}: expected a number of documents per task; no evaluation was started"
    if not math.isfinite(value) or value == 0 or (value < 0 and value != -1):
        return (
            f"--limit {limit}: expected a {'positive' if math.isfinite(value) else 'whole'} number of "
            "documents per task (leave --limit out, or give -1, for a full run); no evaluation was started"
        )
    fraction = 0 < value < 1 or (value > 1 and not value.is_integer())
    if fraction and (pack := _pack_tasks(run.get("tasks"), _pack_names())):
        return (
            f"--limit {limit}: a fraction is not supported on the pack's tasks ({', '.join(pack)}): "
            "lmms-eval 0.7.3 applies it after the pack rounded the cut to whole scoring units; "
            "give a whole number of documents per task; no evaluation was started"
        )
    return None


def _pack_only_problem(run: dict[str, Any]) -> str | None:
    """A non-zero ``--offset`` or ``--num_fewshot`` on the pack's tasks."""
    offset, shots = (
        value if _non_zero(value) else None for value in (run.get("offset"), run.get("num_fewshot"))
    )
    pack = _pack_tasks(run.get("tasks"), _pack_names()) if offset or shots else []
    if not pack:
        return None
    if offset:
        return (
            f"--offset {offset}: not supported on the pack's tasks ({', '.join(pack)}): the host "
            "would skip documents inside a scoring unit (a question pair, a question's options) and "
            "the report could not say which were skipped; use --limit N for a shorter run (it keeps "
            "whole units); no evaluation was started"
        )
    return (
        f"--num_fewshot {shots}: the pack's tasks ({', '.join(pack)}) are zero-shot, as their papers "
        "evaluate them, and define no few-shot examples; drop --num_fewshot; no evaluation was started"
    )


def requested_models(argv: Sequence[str]) -> list[str]:
    """Model names named by `--model X`, `--model=X` or the `model:` keys of a `--config` file."""
    models = flag_values(argv, "--model")
    for path in flag_values(argv, "--config"):
        models += [entry["model"] for entry in config_entries(path) if isinstance(entry.get("model"), str)]
    return models


def model_runs(argv: Sequence[str]) -> list[tuple[str, str | None]]:
    """(model, model_args) of each evaluation the host will run: one per ``--config`` entry, a command line
    value (not the host's defaults ``hf`` / empty) overriding each entry's, as the host merges them."""
    model, model_args = flag_value(argv, "--model"), flag_value(argv, "--model_args")
    runs = []
    for entry in config_entries(flag_value(argv, "--config")):
        run_model = model if model not in (None, "hf") else entry.get("model", model or "hf")
        run_args = model_args if model_args else entry.get("model_args", model_args)
        if isinstance(run_args, dict):
            run_args = ",".join(f"{key}={value}" for key, value in run_args.items())
        runs.append((str(run_model), None if run_args is None else str(run_args)))
    return runs


def check_model_args(argv: Sequence[str]) -> str | None:
    """None when every run's ``--model_args`` is comma-separated KEY=VALUE pairs (as the host parses them);
    else one line naming the part that is not (the host ended with a bare ``not enough values to unpack``)."""
    for _, model_args in model_runs(argv):
        for part in (model_args or "").split(","):
            key, equals, _ = part.strip().partition("=")
            if part.strip() and not (equals and key.strip()):
                return (
                    f"lmms_eval: --model_args {model_args!r}: {part.strip()!r} is not KEY=VALUE; give "
                    "comma-separated KEY=VALUE pairs, e.g. --model_args pretrained=llava-hf/llava-1.5-7b-hf,"
                    "device=cuda"
                )
    return None


_CPU_FIX = "--model_args ...,device=cpu,device_map=cpu (and no --device)"


def _absent_device(value: str) -> str | None:
    """Why device ``value`` (``cuda``, ``cuda:1``, ``mps``; others pass) cannot be used here, else None."""
    kind = value.strip().lower().partition(":")[0]
    if kind not in ("cuda", "mps"):
        return None
    import torch

    if kind == "cuda" and not torch.cuda.is_available():
        return f"this machine has no CUDA device (torch {torch.__version__} sees none)"
    if kind == "mps" and not torch.backends.mps.is_available():
        return "this machine has no Apple MPS device"
    return None


def model_settings_problem(arguments: Sequence[str], runs: Sequence[tuple[str, str | None]]) -> str | None:
    """One line refusing, before the model loads, a device absent here, a dtype torch does not have, or a
    batch size above 1 for the host's ``llava_hf`` (it asserts 1), naming what works; else None."""
    import os

    from lmms_eval_tasks.documentation import doc
    from lmms_eval_tasks.host.server_checks import SERVER_MODELS

    device_flag = flag_value(arguments, "--device")
    batch = flag_value(arguments, "--batch_size") or flag_value(arguments, "-b")
    several = int(os.environ.get("WORLD_SIZE", "1") or 1) > 1  # accelerate: llava_hf picks cuda:<rank>
    for model, model_args in runs:
        given = parse_model_args(model_args)
        places_weights = model not in SERVER_MODELS and model != "random_guess"  # else any device runs
        devices = [("--device", device_flag), *((key, given.get(key)) for key in ("device", "device_map"))]
        devices = devices if places_weights else []
        if model == "llava_hf":
            size = given.get("batch_size") or batch
            if size is not None and str(size).strip() != "1":
                return (
                    f"lmms_eval: --batch_size {size}: the host's llava_hf wrapper generates one request "
                    "at a time (lmms-eval 0.7.3 asserts batch size 1); give --batch_size 1; for throughput "
                    "serve the model (vLLM, SGLang) and run --model openai_compatible or the pack's "
                    f"openai_pipelined with --batch_size N ({doc('models.md')}, 'Model servers')"
                )
            if "device_map" not in given and not several:
                return (
                    "lmms_eval: llava_hf needs device_map in --model_args (the wrapper passes an empty one, "
                    f"which transformers refuses): device_map=cuda:0 or auto on a GPU; on a CPU: {_CPU_FIX}"
                )
            if device_flag is None and "device" not in given:
                devices.append(("llava_hf's default device", "cuda"))
            if several and "device_map" not in given:
                devices.append(("llava_hf's device for each process", "cuda"))
            dtype = given.get("dtype")
            if dtype and dtype != "auto":
                import torch

                if not isinstance(getattr(torch, dtype, None), torch.dtype):
                    return (
                        f"lmms_eval: --model_args dtype={dtype}: not a torch dtype; give auto, float32, "
                        "bfloat16 or float16 (float32 on a CPU)"
                    )
        for where, value in devices:
            why = _absent_device(value) if value else None
            if why:
                return f"lmms_eval: {where} {value}: {why}; on the CPU: {_CPU_FIX}, or run where it is"
        if device_flag is not None and "device" in given:  # the host passes both: 'multiple values'
            return (
                f"lmms_eval: --device {device_flag} and device={given['device']} in --model_args: the host "
                "passes both to the model, which fails; give one of them"
            )
    return None
