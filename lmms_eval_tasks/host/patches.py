"""Every change the pack makes to its host, lmms-eval, in one place, each tied to the host versions it
was written for.

A ``HostPatch`` names the versions it was written for (``written_for``, a PEP 440 specifier) and a probe
that checks, without changing anything, that the code it patches is still what it expects (signatures,
and for bug fixes whether the bug is still there). ``apply_patch`` installs a patch only when both hold;
otherwise it logs a loguru warning saying what is lost and how to get it back, and leaves the host alone.
``lmms-eval-tasks doctor`` shows the same statuses.

The host version comes from ``host/version.py`` (``version.host_version()``, the single seam tests replace
to simulate another host).
The module also answers "can this ``--model`` run here?" (``wrapper_status``), from the host's own model
registry, for the launcher's pre-flight check and ``doctor``.

Import is cheap: lmms-eval, torch and transformers are imported only by the functions that need them.
"""

from __future__ import annotations

import ast
import builtins
import dis
import functools
import importlib
import inspect
import numbers
import os
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.host import version
from lmms_eval_tasks.host.llava_checkpoints import DEFAULT_ORIGINAL_LLAVA, ORIGINAL_TO_HF_CHECKPOINTS
from lmms_eval_tasks.host.task_index import load_host_index
from lmms_eval_tasks.host.version import TESTED_HOST_VERSIONS

_lock = threading.RLock()
_FIX_MARK = "_lmms_eval_tasks_fix"


# ---------------------------------------------------------------------------------------------------------
# Patches
# ---------------------------------------------------------------------------------------------------------

APPLIES, NOT_NEEDED, MISMATCH = "applies", "not needed", "mismatch"


@dataclass(frozen=True)
class HostPatch:
    """One change to lmms-eval: what it does, the host versions it was written for, and how to check it.

    ``probe()`` returns ``(APPLIES | NOT_NEEDED | MISMATCH, detail)`` without changing anything;
    ``install()`` is idempotent. ``models`` lists the ``--model`` values that need the patch (empty: every
    run). ``without`` says what a run loses when the patch is skipped, and the way around it.
    """

    name: str
    summary: str
    probe: Callable[[], tuple[str, str]]
    install: Callable[[], None]
    without: str
    written_for: str = TESTED_HOST_VERSIONS
    models: tuple[str, ...] = ()


@dataclass(frozen=True)
class PatchStatus:
    """What happened (or would happen) to one patch on this host."""

    name: str
    state: str  # "applied", "applies", "not needed", "skipped"
    detail: str
    summary: str = ""
    without: str = ""

    @property
    def ok(self) -> bool:
        return self.state != "skipped"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def _parameters(function: Any) -> list[str]:
    """Parameter names of ``function`` (unwrapping the pack's own wrappers first)."""
    while getattr(function, _FIX_MARK, False) and hasattr(function, "__wrapped__"):
        function = function.__wrapped__
    return list(inspect.signature(function).parameters)


def _expect_parameters(owner: str, function: Any, expected: Sequence[str]) -> str | None:
    """None when ``function`` takes exactly ``expected``; else a one-line description of the difference."""
    if not callable(function):
        return f"{owner} is not callable"
    found = _parameters(function)
    if found != list(expected):
        return f"{owner} takes ({', '.join(found)}), expected ({', '.join(expected)})"
    return None


def _mark(wrapper: Any, wrapped: Any) -> Any:
    setattr(wrapper, _FIX_MARK, True)
    wrapper.__wrapped__ = wrapped
    return wrapper


# --- 1. the pack's tasks in every host task index ---------------------------------------------------------

_PACK_TASKS_DIR = str(TASKS_DIR)


def with_pack_dir(include_path: str | Sequence[str] | None) -> list[str]:
    """The user's include path(s) with the pack's task folder appended once."""
    if include_path is None:
        paths: list[str] = []
    elif isinstance(include_path, str):
        paths = [include_path]
    else:
        paths = list(include_path)
    normalised = {os.path.realpath(path) for path in paths}
    if os.path.realpath(_PACK_TASKS_DIR) not in normalised:
        paths.append(_PACK_TASKS_DIR)
    return paths


def _probe_task_index() -> tuple[str, str]:
    from lmms_eval.tasks import TaskManager

    indexer = getattr(TaskManager, "_get_task_and_group", None)
    problem = _expect_parameters(
        "TaskManager.initialize_tasks",
        TaskManager.initialize_tasks,
        ["self", "include_path", "include_defaults"],
    ) or _expect_parameters("TaskManager._get_task_and_group", indexer, ["self", "task_dir"])
    if problem:
        return MISMATCH, problem
    if "self.initialize_tasks(" not in inspect.getsource(TaskManager.__init__):
        return MISMATCH, "TaskManager.__init__ no longer builds its index with initialize_tasks"
    return APPLIES, "TaskManager.initialize_tasks wrapped to index the pack's task folder last"


def _install_task_index() -> None:
    from lmms_eval.tasks import TaskManager

    original = TaskManager.initialize_tasks
    if getattr(original, _FIX_MARK, False):
        return

    def initialize_tasks(self: Any, include_path: Any = None, include_defaults: bool = True) -> Any:
        include_path = with_pack_dir(include_path)
        self.include_path = include_path
        pack_entries = load_host_index()
        if pack_entries is None:
            return original(self, include_path=include_path, include_defaults=include_defaults)
        pack_dir = os.path.realpath(_PACK_TASKS_DIR)
        others = [path for path in include_path if os.path.realpath(path) != pack_dir]
        index = original(self, include_path=others or None, include_defaults=include_defaults)
        return {**pack_entries, **index}  # built-ins and the user's paths win on a name clash

    initialize_tasks.__doc__ = original.__doc__
    TaskManager.initialize_tasks = _mark(initialize_tasks, original)


# --- 2. failures the host logs and swallows ---------------------------------------------------------------

FAILURES: list[BaseException] = []  # filled by the failure_recorder patch; the launcher reads and clears it


def _probe_failure_recorder() -> tuple[str, str]:
    import lmms_eval.__main__ as host_main

    problem = _expect_parameters(
        "lmms_eval.__main__.cli_evaluate_single", getattr(host_main, "cli_evaluate_single", None), ["args"]
    )
    if problem:
        return MISMATCH, problem
    if "cli_evaluate_single(" not in inspect.getsource(host_main.cli_evaluate):
        return MISMATCH, "lmms_eval.__main__.cli_evaluate no longer calls cli_evaluate_single"
    return APPLIES, "cli_evaluate_single wrapped to record the exceptions the host logs and swallows"


def _install_failure_recorder() -> None:
    import lmms_eval.__main__ as host_main

    original = host_main.cli_evaluate_single
    if getattr(original, _FIX_MARK, False):
        return

    def cli_evaluate_single(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        except BaseException as error:  # noqa: BLE001 - recorded, then re-raised for the host to log
            if not isinstance(error, SystemExit) or error.code not in (None, 0):
                FAILURES.append(error)
            raise

    host_main.cli_evaluate_single = _mark(cli_evaluate_single, original)


# --- the pack's standard errors in the host's Stderr column ------------------------------------------------

STDERR_ATTRIBUTE = "pack_stderr"  # an aggregation carrying this: items -> its metric's standard error


def _probe_pack_stderr() -> tuple[str, str]:
    import lmms_eval.evaluator_utils as evaluator_utils

    problem = _expect_parameters(
        "lmms_eval.evaluator_utils.stderr_for_metric",
        getattr(evaluator_utils, "stderr_for_metric", None),
        ["metric", "bootstrap_iters"],
    )
    if problem:
        return MISMATCH, problem
    source = inspect.getsource(evaluator_utils.TaskOutput.calculate_aggregate_metric)
    if "stderr_for_metric(" not in source or '_stderr,{filter_key}"] = stderr_fn(items)' not in source:
        return MISMATCH, "calculate_aggregate_metric no longer fills _stderr from stderr_for_metric"
    return APPLIES, "stderr_for_metric wrapped: pack aggregations give their bootstrap standard error"


def _install_pack_stderr() -> None:
    import lmms_eval.evaluator_utils as evaluator_utils

    original = evaluator_utils.stderr_for_metric
    if getattr(original, _FIX_MARK, False):
        return

    def stderr_for_metric(metric: Any, bootstrap_iters: int) -> Any:
        provider = getattr(metric, STDERR_ATTRIBUTE, None)
        if provider is not None and isinstance(bootstrap_iters, int) and bootstrap_iters > 0:
            return provider
        return original(metric=metric, bootstrap_iters=bootstrap_iters)

    evaluator_utils.stderr_for_metric = _mark(stderr_for_metric, original)
# --- 2b. results and samples files the host fails to write, silently -----------------------------------

# Filled by the host_outputs patch: every results/samples file the host set out to write in this process,
# as (kind, path or None when the host could not even name it, bytes before the write, samples expected).
HOST_OUTPUTS: list[tuple[str, Path | None, int, int | None]] = []


def _probe_host_outputs() -> tuple[str, str]:
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    for name, expected in (
        ("save_results_aggregated", ["self", "results", "samples", "datetime_str"]),
        ("save_results_samples", ["self", "task_name", "samples"]),
    ):
        method = getattr(EvaluationTracker, name, None)
        problem = _expect_parameters(f"EvaluationTracker.{name}", method, expected)
        if problem:
            return MISMATCH, problem
    return APPLIES, "EvaluationTracker's save methods wrapped to record the files they were to write"


def _host_output_folder(tracker: Any) -> Path | None:
    output = getattr(tracker, "output_path", None)
    if not output:
        return None
    return Path(output) / str(getattr(tracker.general_config_tracker, "model_name_sanitized", "") or "")


def _size(path: Path | None) -> int:
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


def _install_host_outputs() -> None:
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    aggregated = EvaluationTracker.save_results_aggregated
    samples_method = EvaluationTracker.save_results_samples
    if getattr(aggregated, _FIX_MARK, False):
        return

    def save_results_aggregated(self: Any, results: dict, samples: dict, datetime_str: str) -> None:
        folder = _host_output_folder(self)
        if folder is not None:
            path = folder / f"{str(datetime_str).replace(':', '-')}_results.json"
            HOST_OUTPUTS.append(("results file", path, 0, None))
        return aggregated(self, results, samples, datetime_str)

    def save_results_samples(self: Any, task_name: str, samples: Any) -> None:
        folder = _host_output_folder(self)
        if folder is not None:
            date_id = getattr(self, "date_id", None)
            path = folder / f"{date_id}_samples_{task_name}.jsonl" if date_id else None
            HOST_OUTPUTS.append((f"samples file of {task_name}", path, _size(path), len(samples)))
        return samples_method(self, task_name, samples)

    EvaluationTracker.save_results_aggregated = _mark(save_results_aggregated, aggregated)
    EvaluationTracker.save_results_samples = _mark(save_results_samples, samples_method)


def host_output_problems() -> list[str]:
    """One line per results/samples file the host set out to write and did not write completely
    (missing, not JSON, fewer lines than samples), naming the file; [] when all are whole."""
    import json

    problems = []
    for kind, path, offset, expected in HOST_OUTPUTS:
        if path is None:
            problems.append(f"the host's {kind} was not written (its results file failed first)")
            continue
        try:
            with open(path, "rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except OSError as error:
            problems.append(f"{path}: the host's {kind} was not written ({error.strerror or error})")
            continue
        try:
            if expected is None:
                json.loads(data.decode("utf-8"))
            else:
                lines = [line for line in data.decode("utf-8").splitlines() if line.strip()]
                for line in lines:
                    json.loads(line)
                if len(lines) != expected:
                    raise ValueError(f"{len(lines)} of {expected} samples")
        except (UnicodeDecodeError, ValueError) as error:
            reason = str(error).splitlines()[0][:120]
            problems.append(
                f"{path}: the host's {kind} is incomplete ({len(data)} bytes, {reason}): disk full?"
            )
    return problems


# --- cross-task metrics shown on groups only ---------------------------------------------------------------


def drop_undefined_group_metrics(results: dict[str, Any], groups: set[str]) -> list[tuple[str, str]]:
    """Remove from every task (not group) entry of the host's ``results`` the benchmark's group-only metrics
    (``Benchmark.group_metrics``) whose value there is not a finite number, with their ``_stderr`` twins;
    a defined value is never removed. Returns the (task, metric) pairs removed."""
    import math

    from lmms_eval_tasks.framework.registry import benchmark_for_task

    removed: list[tuple[str, str]] = []
    for name, values in results.items():
        if name in groups or not isinstance(values, dict):
            continue
        benchmark = benchmark_for_task(str(name))
        for metric in getattr(benchmark, "group_metrics", ()) or ():
            keys = [key for key in values if isinstance(key, str) and key.partition(",")[0] == metric]
            for key in keys:
                value = values[key]
                if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                    continue
                filter_name = key.partition(",")[2]
                del values[key]
                # its standard errors too: _stderr (ours), _stderr_clt / _stderr_clustered (the host's)
                for twin in [k for k in values if isinstance(k, str) and k.startswith(f"{metric}_stderr")]:
                    if twin.partition(",")[2] == filter_name:
                        del values[twin]
                removed.append((str(name), metric))
    return removed


def pack_group_stderrs(results: dict[str, Any], groups: set[str], host_stderrs: bool = True) -> list[str]:
    """Set every pack group's ``<metric>_stderr,<filter>`` in the host's ``results`` to the pack's bootstrap
    standard error of the group (scored on the union of its members' records), replacing the host's pooled
    member stderr, which is wrong for cross-task metrics (mean and std over prompts, accuracy curves). With
    ``host_stderrs`` False (the host computed none: ``--bootstrap_iters 0``) nothing changes. Returns the
    groups changed."""
    from lmms_eval_tasks.framework.run_state import current_run

    state = current_run()  # the evaluation whose groups the host is consolidating
    changed: list[str] = []
    if not host_stderrs:
        return changed
    for name in groups:
        values = results.get(name)
        if not isinstance(values, dict):
            continue
        for key in list(values):
            metric, _, filter_name = str(key).partition(",")
            if not filter_name or "_stderr" in metric:
                continue
            value = state.group_stderr(str(name), metric)
            if value is not None:
                values[f"{metric}_stderr,{filter_name}"] = value
                if str(name) not in changed:
                    changed.append(str(name))
    return changed


def _host_computed_stderrs(results: dict[str, Any], groups: set[str]) -> bool:
    """Whether the host computed standard errors at all (``--bootstrap_iters`` > 0): some task row holds a
    numeric ``_stderr`` value (with 0 every one is "N/A")."""
    return any(
        isinstance(value, int | float) and not isinstance(value, bool)
        for name, values in results.items()
        if name not in groups and isinstance(values, dict)
        for key, value in values.items()
        if "_stderr" in str(key)
    )


def _probe_group_only_metrics() -> tuple[str, str]:
    import lmms_eval.evaluator as evaluator
    import lmms_eval.evaluator_utils as evaluator_utils

    problem = _expect_parameters(
        "lmms_eval.evaluator.consolidate_group_results",
        getattr(evaluator, "consolidate_group_results", None),
        ["results", "versions", "task_dict", "task_root", "show_group_table", "task_aggregation_list"],
    )
    if problem:
        return MISMATCH, problem
    if not callable(getattr(evaluator_utils, "get_subtask_list", None)):
        return MISMATCH, "lmms_eval.evaluator_utils.get_subtask_list is gone"
    source = inspect.getsource(evaluator.evaluate)
    if "consolidate_group_results(results, versions, task_dict)" not in source:
        return MISMATCH, "lmms_eval.evaluator.evaluate no longer calls consolidate_group_results"
    return APPLIES, (
        "consolidate_group_results wrapped: group-only metrics leave the member tasks' rows; a pack group's "
        "Stderr is the pack's bootstrap of the group"
    )


def _install_group_only_metrics() -> None:
    import lmms_eval.evaluator as evaluator
    import lmms_eval.evaluator_utils as evaluator_utils

    original = evaluator.consolidate_group_results
    if getattr(original, _FIX_MARK, False):
        return

    def consolidate_group_results(
        results: Any, versions: Any, task_dict: Any, *args: Any, **kwargs: Any
    ) -> Any:
        # the top-level call only (the host recurses through evaluator_utils): groups are computed first,
        # from member rows that still carry every key, then the members' undefined copies go
        output = original(results, versions, task_dict, *args, **kwargs)
        groups = {name for name, members in evaluator_utils.get_subtask_list(task_dict).items() if members}
        pack_group_stderrs(output[0], groups, _host_computed_stderrs(output[0], groups))
        removed = drop_undefined_group_metrics(output[0], groups)
        if removed:
            logger.debug(f"group-only metrics left out of {len({task for task, _ in removed})} task rows")
        return output

    evaluator.consolidate_group_results = _mark(consolidate_group_results, original)


# --- an undefined pack metric reads N/A in the host's table, not NaN ----------------------------------------


def table_view(result_dict: dict[str, Any]) -> dict[str, Any]:
    """A copy of the host's results for printing: a pack task's non-finite metric value becomes None (the
    host prints N/A); the results JSON keeps what the host wrote. The reason is in the pack report."""
    import math

    from lmms_eval_tasks.framework.registry import benchmark_for_task

    view = dict(result_dict)
    for column in ("results", "groups"):
        rows = result_dict.get(column)
        if not isinstance(rows, dict):
            continue
        view[column] = {
            name: {
                key: None if isinstance(value, float) and not math.isfinite(value) else value
                for key, value in values.items()
            }
            if isinstance(values, dict) and benchmark_for_task(str(name)) is not None
            else values
            for name, values in rows.items()
        }
    return cut_labels(view)  # a task whose --limit the pack rounded to whole units says so in its row


def cut_labels(view: dict[str, Any]) -> dict[str, Any]:
    """``view`` with each rounded task's row named with its cut (``framework.cuts.table_label``)."""
    from lmms_eval_tasks.framework.cuts import cut_note, table_label

    rows = view.get("results")
    if isinstance(rows, dict):
        view["results"] = {
            name: {**values, "alias": table_label(str(name), str(values.get("alias", name)))}
            if isinstance(values, dict) and cut_note(str(name)) is not None
            else values
            for name, values in rows.items()
        }
    return view


def _probe_table_na() -> tuple[str, str]:
    import lmms_eval.__main__ as host_main
    import lmms_eval.utils as host_utils

    problem = _expect_parameters(
        "lmms_eval.utils.make_table",
        getattr(host_utils, "make_table", None),
        ["result_dict", "column", "sort_results"],
    )
    if problem:
        return MISMATCH, problem
    if getattr(host_main, "make_table", None) is None:
        return MISMATCH, "lmms_eval.__main__ no longer imports make_table"
    if 'if v == "" or v is None:' not in inspect.getsource(host_utils.make_table):
        return MISMATCH, "make_table no longer prints None as N/A"
    return APPLIES, "make_table wrapped: a pack metric's NaN prints as N/A"


def _install_table_na() -> None:
    import lmms_eval.__main__ as host_main
    import lmms_eval.evaluator as evaluator
    import lmms_eval.utils as host_utils

    original = host_utils.make_table
    if getattr(original, _FIX_MARK, False):
        return

    def make_table(result_dict: Any, column: str = "results", sort_results: bool = False) -> Any:
        return original(table_view(result_dict), column, sort_results)

    wrapped = _mark(make_table, original)
    for module in (host_utils, host_main, evaluator):
        if getattr(module, "make_table", None) is original:
            module.make_table = wrapped


# --- each run's context, recorded where the host makes it ------------------------------------------------


def _probe_run_context() -> tuple[str, str]:
    import lmms_eval.__main__ as host_main
    import lmms_eval.evaluator as evaluator

    current = getattr(evaluator, "simple_evaluate", None)
    if not callable(current):
        return MISMATCH, "lmms_eval.evaluator.simple_evaluate is gone"
    found = _parameters(current)
    missing = [name for name in ("cli_args", "datetime_str") if name not in found]
    if missing:
        return MISMATCH, f"lmms_eval.evaluator.simple_evaluate takes no {', '.join(missing)}"
    source = inspect.getsource(host_main.cli_evaluate_single)
    for needle in ("evaluator.simple_evaluate(", "cli_args=args", "datetime_str=datetime_str"):
        if needle not in source:
            return MISMATCH, f"lmms_eval.__main__.cli_evaluate_single no longer passes {needle!r}"
    return APPLIES, "simple_evaluate wrapped to open the run's state (CLI args, run id) for the pack's hooks"


def _install_run_context() -> None:
    import lmms_eval.evaluator as evaluator

    from lmms_eval_tasks.framework.run_state import host_run

    original = evaluator.simple_evaluate
    if getattr(original, _FIX_MARK, False):
        return

    @functools.wraps(original)
    def simple_evaluate(*args: Any, **kwargs: Any) -> Any:
        with host_run(kwargs.get("cli_args"), kwargs.get("datetime_str")):
            return original(*args, **kwargs)

    evaluator.simple_evaluate = _mark(simple_evaluate, original)


# --- 3. loglikelihood results stringified by the evaluator -------------------------------------------------


def is_loglikelihood_result(output: Any) -> bool:
    """True for a ``(log_prob, is_greedy)`` pair as ``lmms.loglikelihood`` returns it."""
    return (
        isinstance(output, tuple | list)
        and len(output) == 2
        and isinstance(output[0], numbers.Real)
        and not isinstance(output[0], bool)
        and isinstance(output[1], bool | numbers.Integral)
    )


def _probe_loglikelihood_result() -> tuple[str, str]:
    import lmms_eval.evaluator as evaluator

    current = getattr(evaluator, "unwrap_generation_output", None)
    problem = _expect_parameters("lmms_eval.evaluator.unwrap_generation_output", current, ["output"])
    if problem:
        return MISMATCH, problem
    if getattr(current, _FIX_MARK, False):
        return APPLIES, "applied"
    try:
        kept, _ = current((-1.5, False))
    except Exception as error:  # noqa: BLE001 - an unexpected host behaviour is a mismatch, not a crash
        return MISMATCH, f"unwrap_generation_output((-1.5, False)) raised {type(error).__name__}: {error}"
    if isinstance(kept, tuple):
        return NOT_NEEDED, "the host keeps (log_prob, is_greedy) pairs already"
    if not isinstance(kept, str):
        return MISMATCH, f"unwrap_generation_output turns a pair into {type(kept).__name__}, expected str"
    return APPLIES, "the host stringifies (log_prob, is_greedy) pairs; they are kept intact"


def _install_loglikelihood_result() -> None:
    import lmms_eval.evaluator as evaluator

    current = evaluator.unwrap_generation_output
    if getattr(current, _FIX_MARK, False):
        return

    def unwrap_generation_output(output: Any) -> tuple[Any, Any]:
        if is_loglikelihood_result(output):
            return (float(output[0]), bool(output[1])), None
        return current(output)

    unwrap_generation_output.__doc__ = current.__doc__
    evaluator.unwrap_generation_output = _mark(unwrap_generation_output, current)


# --- 4. llava_hf loglikelihood on transformers 5 ------------------------------------------------------------


def _llava_hf_loglikelihood(self: Any, requests: list[Any]) -> list[tuple[float, bool]]:
    """llava_hf's loglikelihood, fixed for transformers 5: (mean loss over the continuation, is_greedy).

    Keeps the host's conventions (the value is the mean cross-entropy of the continuation tokens, lower is
    better, which is what the host's multiple_choice argmin expects; same chat template and ``<image>``
    placeholders) and fixes three things: the context is tokenized with its images, so it is accepted by
    transformers 5 and the loss mask lines up with the expanded image tokens; text-only requests pass no
    images instead of an empty list; ``is_greedy`` compares each continuation token with the prediction
    made one position earlier.
    """
    import torch
    from lmms_eval.models.simple.llava_hf import VICUNA_CHAT_TEMPLATE
    from tqdm import tqdm

    template = self.chat_template or self.tokenizer.chat_template or VICUNA_CHAT_TEMPLATE
    image_token = getattr(self._image_processor, "image_token", None) or "<image>"
    results: list[tuple[float, bool]] = []
    for context, doc_to_target, doc_to_visual, doc_id, task, split in tqdm(
        [request.args for request in requests], disable=self.rank != 0, desc="Model Responding"
    ):
        doc = self.task_dict[task][split][doc_id]
        continuation = doc_to_target if isinstance(doc_to_target, str) else doc_to_target(doc)
        visuals = self.flatten([doc_to_visual(doc)])
        user_text = " ".join([image_token] * len(visuals)) + "\n" + context if visuals else context
        messages = [{"role": "user", "content": user_text}, {"role": "assistant", "content": continuation}]
        prompt = self.tokenizer.apply_chat_template(
            messages[:1], chat_template=template, tokenize=False, add_generation_prompt=True
        )
        full_text = self.tokenizer.apply_chat_template(
            messages, chat_template=template, tokenize=False, add_generation_prompt=False
        )
        images = visuals or None
        inputs = self._image_processor(text=[full_text], images=images, return_tensors="pt")
        inputs = inputs.to(self._device, self.model.dtype)
        prompt_length = self._image_processor(text=[prompt], images=images, return_tensors="pt")[
            "input_ids"
        ].shape[1]
        input_ids = inputs["input_ids"]
        labels = input_ids.clone()
        labels[:, :prompt_length] = -100
        with torch.inference_mode():
            outputs = self.model(**inputs, labels=labels)
        predicted = outputs.logits[:, prompt_length - 1 : input_ids.shape[1] - 1].argmax(dim=-1)
        is_greedy = bool((predicted == input_ids[:, prompt_length:]).all())
        results.append((float(outputs.loss.item()), is_greedy))
    return results


def _probe_llava_hf_loglikelihood() -> tuple[str, str]:
    llava_hf = importlib.import_module("lmms_eval.models.simple.llava_hf")
    problem = _expect_parameters(
        "simple LlavaHf.loglikelihood", llava_hf.LlavaHf.loglikelihood, ["self", "requests"]
    )
    if problem:
        return MISMATCH, problem
    if not isinstance(getattr(llava_hf, "VICUNA_CHAT_TEMPLATE", None), str):
        return MISMATCH, "lmms_eval.models.simple.llava_hf.VICUNA_CHAT_TEMPLATE is gone"
    return APPLIES, "simple LlavaHf.loglikelihood replaced (tokenizes the context with its images)"


def _install_llava_hf_loglikelihood() -> None:
    from lmms_eval.models.simple.llava_hf import LlavaHf

    original = LlavaHf.loglikelihood
    if getattr(original, _FIX_MARK, False):
        return

    def loglikelihood(self: Any, requests: list[Any]) -> list[tuple[float, bool]]:
        return _llava_hf_loglikelihood(self, requests)

    loglikelihood.__doc__ = _llava_hf_loglikelihood.__doc__
    LlavaHf.loglikelihood = _mark(loglikelihood, original)


# --- 5. llava_hf answers "" to requests without an image ----------------------------------------------------


class _NoEmptyImagesProcessor:
    """Delegates to a processor, passing ``images=None`` instead of an empty image list.

    A LLaVA processor given ``images=[]`` yields empty ``pixel_values`` that the vision tower cannot
    unpack, so the host's llava_hf returns "" for every text-only request (e.g. HallusionBench's 178
    no-image questions, which a judge then reads as "unclear" - counted as right for those questions).
    """

    def __init__(self, processor: Any) -> None:
        self._processor = processor

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "images" in kwargs and kwargs["images"] is not None and len(kwargs["images"]) == 0:
            kwargs["images"] = None
        return self._processor(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._processor, name)


def _text_only_safe(generate_until: Any) -> Any:
    def generate_until_with_text_only_requests(self: Any, requests: list[Any]) -> Any:
        processor = self.__dict__.get("_image_processor")
        if processor is None or isinstance(processor, _NoEmptyImagesProcessor):
            return generate_until(self, requests)
        self._image_processor = _NoEmptyImagesProcessor(processor)
        try:
            return generate_until(self, requests)
        finally:
            self._image_processor = processor

    return _mark(generate_until_with_text_only_requests, generate_until)


def _llava_hf_classes() -> tuple[type, type]:
    from lmms_eval.models.chat.llava_hf import LlavaHf as ChatLlavaHf
    from lmms_eval.models.simple.llava_hf import LlavaHf as SimpleLlavaHf

    return SimpleLlavaHf, ChatLlavaHf


def _probe_llava_hf_text_only() -> tuple[str, str]:
    for cls in _llava_hf_classes():
        label = f"{cls.__module__}.{cls.__name__}.generate_until"
        method = cls.__dict__.get("generate_until")
        problem = _expect_parameters(label, method, ["self", "requests"])
        if problem:
            return MISMATCH, problem
        while getattr(method, _FIX_MARK, False):
            method = method.__wrapped__
        if "self._image_processor(" not in inspect.getsource(method):
            return MISMATCH, f"{label} no longer calls self._image_processor"
    return APPLIES, "llava_hf (simple and chat) passes images=None for requests without an image"


def _install_llava_hf_text_only() -> None:
    for cls in _llava_hf_classes():
        method = cls.__dict__.get("generate_until")
        if method is not None and not getattr(method, _FIX_MARK, False):
            cls.generate_until = _text_only_safe(method)


# --- 6. chat llava_hf refuses loglikelihood / multiple_choice tasks ----------------------------------------

_GENERATION_ONLY = "Currently messages is used for generation only"


def _probe_chat_loglikelihood() -> tuple[str, str]:
    from lmms_eval.api.task import ConfigurableMessagesTask

    method = ConfigurableMessagesTask.__dict__.get("construct_requests")
    problem = _expect_parameters(
        "ConfigurableMessagesTask.construct_requests", method, ["self", "doc_id", "ctx", "kwargs"]
    )
    if problem:
        return MISMATCH, problem
    while getattr(method, _FIX_MARK, False):
        method = method.__wrapped__
    if _GENERATION_ONLY not in inspect.getsource(method):
        return NOT_NEEDED, "chat tasks no longer refuse loglikelihood requests"
    return APPLIES, "chat-mode loglikelihood / multiple_choice tasks send the simple request shape"


def _install_chat_loglikelihood() -> None:
    from lmms_eval.api.task import ConfigurableMessagesTask, ConfigurableTask

    original = ConfigurableMessagesTask.construct_requests
    if getattr(original, _FIX_MARK, False):
        return

    def construct_requests(self: Any, doc_id: int, ctx: str, **kwargs: Any) -> Any:
        if str(self.OUTPUT_TYPE).startswith("generate_until"):
            return original(self, doc_id, ctx, **kwargs)
        return ConfigurableTask.construct_requests(self, doc_id, ctx, **kwargs)

    ConfigurableMessagesTask.construct_requests = _mark(construct_requests, original)


# --- 7. the task whose dataset is loading, for process_docs that need a sibling split ---------------------

_LOADING_TASK = threading.local()


def loading_task() -> Any | None:
    """The host task whose ``download`` (dataset load and ``process_docs``) is running, or None."""
    stack = getattr(_LOADING_TASK, "stack", None)
    return stack[-1] if stack else None


def loading_task_dataset() -> Any | None:
    """The DatasetDict the host just loaded for the task whose ``process_docs`` is running, or None.

    Set by the ``task_dataset_context`` patch around ``ConfigurableTask.download``: the splits come from the
    task's own ``dataset_path``/``dataset_kwargs``, so a hook reading a sibling split (HallusionBench's
    ``non_image``) follows a mirror or a local copy the user configured.
    """
    return getattr(loading_task(), "dataset", None)


def _probe_task_dataset_context() -> tuple[str, str]:
    from lmms_eval.api.task import ConfigurableTask

    problem = _expect_parameters(
        "ConfigurableTask.download", ConfigurableTask.download, ["self", "dataset_kwargs"]
    )
    if problem:
        return MISMATCH, problem
    source = inspect.getsource(ConfigurableTask.download)
    if "self.config.process_docs(self.dataset[split])" not in source:
        return MISMATCH, "ConfigurableTask.download no longer calls process_docs on self.dataset[split]"
    return APPLIES, "ConfigurableTask.download wrapped so process_docs can read the task's other splits"


def _install_task_dataset_context() -> None:
    from lmms_eval.api.task import ConfigurableTask

    original = ConfigurableTask.download
    if getattr(original, _FIX_MARK, False):
        return

    def download(self: Any, dataset_kwargs: Any = None) -> Any:
        stack = _LOADING_TASK.__dict__.setdefault("stack", [])
        stack.append(self)
        try:
            return original(self, dataset_kwargs)
        finally:
            stack.pop()

    download.__doc__ = original.__doc__
    ConfigurableTask.download = _mark(download, original)


PATCHES: dict[str, HostPatch] = {
    patch.name: patch
    for patch in (
        HostPatch(
            "pack_task_index",
            "the pack's tasks in every host task index (after built-ins and the user's --include_path)",
            _probe_task_index,
            _install_task_index,
            "the pack's tasks are unknown to the host; run the host with "
            "`--include_path $(lmms-eval-tasks tasks-dir)` instead",
        ),
        HostPatch(
            "task_dataset_context",
            "process_docs can read the task's other splits (HallusionBench's non_image from the same source)",
            _probe_task_dataset_context,
            _install_task_dataset_context,
            "hallusionbench reads its non_image split from lmms-lab-encoder/HallusionBench, not from an "
            "overridden dataset_path",
        ),
        HostPatch(
            "failure_recorder",
            "a failed evaluation exits non-zero (the host logs the error and exits 0)",
            _probe_failure_recorder,
            _install_failure_recorder,
            "a failed evaluation may exit 0: read the log for 'Error during evaluation'",
        ),
        HostPatch(
            "pack_stderr",
            "the host's Stderr column shows the pack's bootstrap standard errors (value ± stderr)",
            _probe_pack_stderr,
            _install_pack_stderr,
            "the host's table prints N/A for pack metrics; the standard errors and intervals are in the "
            "pack report (<metric>_stderr and details.uncertainty)",
        ),
        HostPatch(
            "group_only_metrics",
            "a metric defined only across tasks (VRB sub-metrics, DARE std over prompts) is shown on the "
            "groups, not as NaN on every member task",
            _probe_group_only_metrics,
            _install_group_only_metrics,
            "member tasks list those metrics as NaN in the host's table and results; read them on the groups",
        ),
        HostPatch(
            "table_na",
            "an undefined pack metric prints N/A in the host's table, not NaN (the pack report says why)",
            _probe_table_na,
            _install_table_na,
            "undefined pack metrics print NaN in the host's table; the pack report has null and the reason",
        ),
        HostPatch(
            "host_outputs",
            "a results or samples file the host fails to write (full disk) fails the run, naming the file",
            _probe_host_outputs,
            _install_host_outputs,
            "a full disk while the host saves may leave a cut results file and exit 0: check the files",
        ),
        HostPatch(
            "run_context",
            "pack reports pair with the host's results (same run id); groups see their own run's records",
            _probe_run_context,
            _install_run_context,
            "pack reports are filed under the current UTC time instead of the host's run id, and groups "
            "are scored from every record of the process; run through the `lmms_eval` launcher",
        ),
        HostPatch(
            "loglikelihood_result",
            "loglikelihood / multiple_choice results reach process_results as (log_prob, is_greedy) pairs",
            _probe_loglikelihood_result,
            _install_loglikelihood_result,
            "loglikelihood and multiple_choice tasks crash in process_results ('too many values to unpack')",
        ),
        HostPatch(
            "llava_hf_loglikelihood",
            "llava_hf's loglikelihood works on transformers 5",
            _probe_llava_hf_loglikelihood,
            _install_llava_hf_loglikelihood,
            "loglikelihood / multiple_choice tasks may fail on llava_hf",
            models=("llava_hf",),
        ),
        HostPatch(
            "llava_hf_text_only",
            "llava_hf answers requests that carry no image (it returned '')",
            _probe_llava_hf_text_only,
            _install_llava_hf_text_only,
            "llava_hf may answer '' to every text-only question",
            models=("llava_hf",),
        ),
        HostPatch(
            "chat_loglikelihood",
            "--model llava_hf runs loglikelihood / multiple_choice tasks without --force_simple",
            _probe_chat_loglikelihood,
            _install_chat_loglikelihood,
            "loglikelihood / multiple_choice tasks need `--force_simple` on llava_hf",
            models=("llava_hf",),
        ),
    )
}


def check_patch(name: str) -> PatchStatus:
    """What ``apply_patch(name)`` would do on this host, without changing anything."""
    patch = PATCHES[name]
    installed = version.host_version()
    if not version.version_in(installed, patch.written_for):
        detail = f"written for lmms-eval {patch.written_for}, this host is {installed or 'not installed'}"
        return PatchStatus(name, "skipped", detail, patch.summary, patch.without)
    try:
        state, detail = patch.probe()
    except Exception as error:  # noqa: BLE001 - a probe that cannot run means the patch does not apply
        state, detail = MISMATCH, f"probe failed: {type(error).__name__}: {str(error).splitlines()[0]}"
    if state == MISMATCH:
        return PatchStatus(name, "skipped", detail, patch.summary, patch.without)
    return PatchStatus(name, state, detail, patch.summary, patch.without)


_warned: set[str] = set()


def apply_patch(name: str) -> PatchStatus:
    """Install one patch when it fits this host (idempotent); otherwise warn once and leave the host alone."""
    patch = PATCHES[name]
    with _lock:
        status = check_patch(name)
        if status.state == APPLIES:
            patch.install()
            status = PatchStatus(name, "applied", status.detail, patch.summary, patch.without)
        elif status.state == "skipped" and name not in _warned:
            _warned.add(name)
            logger.warning(
                f"lmms-eval-tasks: host patch {name!r} not applied ({status.detail}); "
                f"consequence: {patch.without}"
            )
        return status


def patches_for(model_names: Sequence[str] = ()) -> list[str]:
    """Names of the patches a run with these ``--model`` values needs, in install order."""
    return [
        name for name, patch in PATCHES.items() if not patch.models or set(patch.models) & set(model_names)
    ]


def apply_patches(model_names: Sequence[str] = (), names: Sequence[str] | None = None) -> list[PatchStatus]:
    """Apply the patches a run needs (all model-independent ones, plus those of the named models)."""
    return [apply_patch(name) for name in (patches_for(model_names) if names is None else names)]


def check_patches() -> list[PatchStatus]:
    """The status of every patch on this host (imports the llava_hf wrapper to probe its patches)."""
    return [check_patch(name) for name in PATCHES]


# ---------------------------------------------------------------------------------------------------------
# Model wrappers: can this --model run here?
# ---------------------------------------------------------------------------------------------------------

INSTALL_HINTS: dict[str, str] = {
    "llava": (
        "install the original LLaVA code (python package `llava`, "
        "`pip install git+https://github.com/haotian-liu/LLaVA.git`); but no release of it can be installed "
        "next to this host: every release pins transformers<=4.37.2 (the last, 1.2.2.post1, pins "
        "transformers==4.37.2 and torch==2.1.2) while lmms-eval 0.7.3 requires transformers>=4.39.2 and this "
        "environment has transformers {transformers}; `pip install --no-deps` ignores those pins and is "
        "untested"
    ),
}


def _transformers_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("transformers")
    except PackageNotFoundError:
        return "(not installed)"


# Models `doctor` checks by default (importing all ~120 host wrappers takes several seconds and floods the
# log with their import warnings; `doctor --all-models` checks every one).
DEFAULT_DOCTOR_MODELS: tuple[str, ...] = (
    "llava_hf",
    "llava",
    "random_guess",
    "llava_onevision",
    "qwen2_5_vl",
    "qwen2_vl",
    "internvl2",
    "idefics2",
    "instructblip",
    "openai",
)


@dataclass(frozen=True)
class WrapperStatus:
    """Whether one host model wrapper can run on this machine, and if not, why (one line)."""

    model: str
    ok: bool
    class_path: str = ""
    reason: str = ""
    missing: tuple[str, ...] = ()  # top-level modules the wrapper needs and cannot import

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _model_registry() -> Any:
    from lmms_eval.models import MODEL_REGISTRY_V2

    return MODEL_REGISTRY_V2


def host_model_names() -> list[str]:
    """Every canonical ``--model`` value of the host registry (built-ins and entry points, e.g. ours)."""
    return list(_model_registry().list_canonical_model_ids())


def _guarded_imports(source: str) -> dict[str, str]:
    """Names bound by imports inside module-level ``try`` blocks -> the module each is imported from."""
    bound: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Try):
            continue
        for statement in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if isinstance(statement, ast.ImportFrom) and statement.module and statement.level == 0:
                for alias in statement.names:
                    bound[alias.asname or alias.name] = statement.module
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    bound[alias.asname or alias.name.split(".")[0]] = alias.name
    return bound


def _global_names(code: types.CodeType) -> set[str]:
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _global_names(constant)
    return names


def unbound_guarded_names(cls: type) -> dict[str, str]:
    """Names the class's own methods use that its module tried to import in a ``try`` block and could not.

    Many host wrappers (``llava`` among them) import their model code inside ``try: ... except: log``, so
    they import fine and fail only later, after the tasks were built (``NameError``). Returns
    {name: module it should come from}.
    """
    module = inspect.getmodule(cls)
    try:
        source = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        return {}
    guarded = _guarded_imports(source)
    used: set[str] = set()
    for member in vars(cls).values():
        function = getattr(member, "__func__", member)
        function = getattr(function, "fget", function)
        code = getattr(function, "__code__", None)
        if code is not None:
            used |= _global_names(code)
    namespace = vars(module) if module is not None else {}
    return {
        name: guarded[name]
        for name in sorted(used)
        if name in guarded and name not in namespace and not hasattr(builtins, name)
    }


def _import_error(module_name: str) -> str | None:
    """The one-line error importing ``module_name`` raises, or None when it imports."""
    try:
        importlib.import_module(module_name)
    except BaseException as error:  # noqa: BLE001 - any failure to import is the answer
        return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}".rstrip(": ")
    return None


def wrapper_status(model: str, force_simple: bool = False) -> WrapperStatus:
    """Can ``--model <model>`` run here? Resolves it like the host, imports its class, and checks that the
    model code the class uses was importable (see ``unbound_guarded_names``)."""
    registry = _model_registry()
    try:
        resolved = registry.resolve(model, force_simple=force_simple)
    except ValueError:
        reason = f"unknown model {model!r}: not in the host's model registry"
        return WrapperStatus(model, False, reason=reason)
    try:
        cls = registry.get_model_class(model, force_simple=force_simple)
    except BaseException as error:  # noqa: BLE001 - any failure to import is the answer
        missing = (error.name.split(".")[0],) if isinstance(error, ModuleNotFoundError) and error.name else ()
        first_line = str(error).splitlines()[0] if str(error) else ""
        return WrapperStatus(
            model, False, resolved.class_path, f"{type(error).__name__}: {first_line}".rstrip(": "), missing
        )
    unbound = unbound_guarded_names(cls)
    if not unbound:
        return WrapperStatus(model, True, resolved.class_path)
    # The try block stopped at its first failing import: report the modules that fail now, with the names
    # the wrapper's methods use that are therefore undefined.
    errors: dict[str, str] = {}
    for module_name in dict.fromkeys(unbound.values()):
        error = _import_error(module_name)
        if error is not None:
            errors[module_name] = error
    by_error: dict[str, list[str]] = {}
    for name, module_name in unbound.items():
        if module_name in errors:
            by_error.setdefault(errors[module_name], []).append(name)
    if not by_error:  # every module imports now (installed after the wrapper was imported)
        by_error = {"its try-guarded imports failed when the wrapper was imported": sorted(unbound)}
    reason = "imports, but its model code does not: " + "; ".join(
        f"{error} (undefined: {', '.join(names)})" for error, names in by_error.items()
    )
    missing = tuple(dict.fromkeys(module_name.split(".")[0] for module_name in errors))
    return WrapperStatus(model, False, resolved.class_path, reason, missing)


# Modules whose install needs more than `pip install <module>` on this setup.
MODULE_HINTS: dict[str, str] = {
    "torchvision": (
        "torchvision: `make setup` removes it on purpose (the PyPI build fails to import next to the CPU "
        "torch wheel); install the torchvision build that matches torch, from the same index as torch"
    ),
    "llava": "llava: the original LLaVA code, which cannot share this environment (docs/models.md)",
    "decord": "decord: `pip install 'lmms-eval-tasks[llava-hf]'` (or `pip install decord`)",
}


def install_hint(status: WrapperStatus) -> str:
    """How to make a wrapper importable, from the modules it misses (one line)."""
    if not status.missing:
        return "see the host's documentation of this model"
    return "install " + "; ".join(MODULE_HINTS.get(module, module) for module in status.missing)


def _pretrained(model_args: str | None) -> str | None:
    for part in (model_args or "").split(","):
        key, _, value = part.partition("=")
        if key.strip() == "pretrained":
            return value.strip()
    return None


def unavailable_model_message(status: WrapperStatus, model_args: str | None = None) -> str:
    """The launcher's message for a ``--model`` that cannot run here: what is missing and the ways out."""
    needs = f" needs the module(s) {', '.join(status.missing)}" if status.missing else ""
    lines = [
        f"lmms_eval: --model {status.model} cannot run on this machine: the host's wrapper "
        f"({status.class_path or 'not found'}){needs}, which cannot be imported.",
        f"  why: {status.reason}",
    ]
    if status.model == "llava":
        original = _pretrained(model_args) or DEFAULT_ORIGINAL_LLAVA
        hf_name = ORIGINAL_TO_HF_CHECKPOINTS.get(original.rstrip("/"), "llava-hf/llava-1.5-7b-hf")
        lines += [
            "  way out 1 (recommended): use the HF-native wrapper with the converted checkpoint:",
            f"    --model llava_hf --model_args pretrained={hf_name}",
            "    (original -> HF checkpoint names: docs/models.md)",
            f"  way out 2: {INSTALL_HINTS['llava'].format(transformers=_transformers_version())}.",
            "  way out 3: unset LMMS_EVAL_TASKS_NO_SUBSTITUTION: the launcher then serves --model llava with "
            "the pack's LLaVA on transformers (docs/models.md)",
        ]
    else:
        lines += [
            f"  way out 1: {INSTALL_HINTS.get(status.model) or install_hint(status)}.",
            "  way out 2: pick a --model that runs here: `lmms-eval-tasks doctor --all-models` lists them.",
        ]
    lines.append("  (set LMMS_EVAL_TASKS_SKIP_MODEL_CHECK=1 to skip this check)")
    return "\n".join(lines)
