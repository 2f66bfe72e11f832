"""The `lmms_eval` command: the host's own CLI with the pack's tasks, its patches, a one-line refusal (exit 2)
of what cannot run here, and a non-zero exit naming the root cause when an evaluation failed.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from lmms_eval_tasks.framework.failed_generations import clear_failures, cut_lines, failure_lines
from lmms_eval_tasks.host import host_bug_fixes as fixes
from lmms_eval_tasks.host import model_availability, resume
from lmms_eval_tasks.host import patches as host
from lmms_eval_tasks.host.argument_checks import check_model_args, model_runs, requested_models
from lmms_eval_tasks.host.argv import flag_value, parse_model_args, task_names
from lmms_eval_tasks.host.server_checks import (
    check_judge_endpoint,
    check_loglikelihood_on_server,
    check_model_server,
)
from lmms_eval_tasks.judges.redact import scrub

SKIP_MODEL_CHECK_ENV = "LMMS_EVAL_TASKS_SKIP_MODEL_CHECK"


def check_models(argv: Sequence[str]) -> str | None:
    """None when every requested ``--model`` wrapper can run here (checked before any task is built; off with
    ``LMMS_EVAL_TASKS_SKIP_MODEL_CHECK=1``); else the message naming what is missing."""
    from lmms_eval_tasks import environment

    if environment.flag(SKIP_MODEL_CHECK_ENV):
        return None
    force_simple = "--force_simple" in argv
    messages = []
    for model in dict.fromkeys(requested_models(argv)):
        status = model_availability.wrapper_status(model, force_simple=force_simple)
        if not status.ok:
            messages.append(
                model_availability.unavailable_model_message(status, flag_value(argv, "--model_args"))
            )
    return "\n".join(messages) or None


_PACK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_DATASET_FIX = (
    "fix: an offline run (HF_HUB_OFFLINE=1 / HF_DATASETS_OFFLINE=1) reads only what the `datasets` cache "
    "holds; run once with network, or point the task's dataset_path at a local copy; "
    "`lmms-eval-tasks doctor` lists what is cached"
)


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and what it wraps, outermost first: tenacity ``RetryError``s, then ``__cause__``/context."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and all(current is not other for other in seen):
        seen.append(current)
        attempt = getattr(current, "last_attempt", None)  # tenacity.RetryError, without importing tenacity
        inner = None
        if attempt is not None and callable(getattr(attempt, "exception", None)):
            with contextlib.suppress(BaseException):  # a cancelled future: nothing more to unwrap
                inner = attempt.exception()
        if inner is None:
            inner = current.__cause__
        if inner is None and not current.__suppress_context__:
            inner = current.__context__
        current = inner
    return seen


def _raised_in_pack(error: BaseException) -> bool:
    """True when the innermost frame of ``error``'s traceback is the pack's own code."""
    frames = [frame for frame, _ in traceback.walk_tb(error.__traceback__)]
    return bool(frames) and os.path.abspath(frames[-1].f_code.co_filename).startswith(_PACK_DIR + os.sep)


def root_cause(error: BaseException) -> BaseException:
    """The exception a user should read: the innermost one the pack raised, else the innermost of all."""
    chain = _chain(error)
    own = [item for item in chain if _raised_in_pack(item)]
    return (own or chain)[-1]


def failure_line(error: BaseException) -> str:
    """One line naming the root cause of a failed evaluation (and the fix, for a dataset not cached)."""
    cause = root_cause(error)
    named = f"{type(cause).__name__}: "
    if not str(cause).strip():  # TimeoutError(), KeyboardInterrupt: the nearest wrapper says what failed
        chain = _chain(error)
        outer = [item for item in chain[: chain.index(cause)] if str(item).strip()]
        if outer:
            named = f"{type(outer[-1]).__name__} (from {type(cause).__name__}): "
            cause = outer[-1]
    message = scrub(" ".join((str(cause) or type(cause).__name__).split()))  # a URL's token, an API key
    unknown = unknown_tasks_line(message) if isinstance(cause, ValueError) else None
    if unknown:
        return f"lmms_eval: {unknown}"
    line = f"lmms_eval: evaluation failed: {named}{message}"
    module = type(cause).__module__.split(".")[0]
    from lmms_eval_tasks.host.datasets_cache import NOT_CACHED_WORDS

    dataset_problem = module in ("datasets", "huggingface_hub", "requests", "httpx") or (
        isinstance(cause, (ConnectionError, FileNotFoundError, ValueError))
        and any(word in message for word in ("Hugging Face Hub", "on the Hub", *NOT_CACHED_WORDS))
    )
    if dataset_problem and not _raised_in_pack(cause) and "fix:" not in message:
        line += f"; {_DATASET_FIX}"
    return line


def check_benchmarks(argv: Sequence[str]) -> str | None:
    """The first one-line fix of the pre-flight checks (``Behaviour.launch_check``, e.g. TDIUC's WordNet) of
    the benchmarks whose tasks ``--tasks`` names (groups expanded); None when every one is ready."""
    from lmms_eval_tasks.framework.registry import benchmark_for_task
    from lmms_eval_tasks.framework.task_index import leaf_tasks

    names = task_names(argv)
    owners = [benchmark_for_task(task) for task in [*leaf_tasks(names), *names]]  # user tasks: by name
    for check in dict.fromkeys(owner.loaded.launch_check for owner in owners if owner):
        problem = check() if check is not None else None
        if problem:
            return problem
    return None


def check_tasks(argv: Sequence[str]) -> str | None:
    """None when the requested pack tasks can run; else one line: a judged task with no judge configured, or
    a hub dataset an offline run (or one with no network) cannot read. Runs before any model loads."""
    from lmms_eval_tasks.framework.judge_requirement import missing_judge_line
    from lmms_eval_tasks.framework.task_index import leaf_tasks
    from lmms_eval_tasks.host.datasets_cache import missing_dataset_line
    from lmms_eval_tasks.host.predict_only import PREDICT_ONLY_FLAGS

    tasks = leaf_tasks(task_names(argv))  # groups and tags expanded; the host's and unknown names left out
    judged_later = any(flag in argv for flag in PREDICT_ONLY_FLAGS)  # --predict_only: `score` judges
    include_paths = [path for path in (flag_value(argv, "--include_path") or "").split(",") if path]
    return (None if judged_later else missing_judge_line(tasks)) or missing_dataset_line(
        tasks, include_paths=include_paths
    )


# The default checkpoint of the host's llava_hf wrapper (lmms-eval 0.7.3), when --model_args names none.
LLAVA_HF_DEFAULT_CHECKPOINT = "llava-hf/llava-1.5-7b-hf"


def check_checkpoints(argv: Sequence[str]) -> str | None:
    """None when every LLaVA checkpoint the runs load is a local folder, cached, or downloadable; else one
    line naming it (``--model llava`` offline used to end with a bare ``ConnectError``)."""
    from lmms_eval_tasks.host import substitution
    from lmms_eval_tasks.host.datasets_cache import missing_checkpoint_line

    for model, model_args in model_runs(argv):
        asked = parse_model_args(model_args).get("pretrained")
        if model == substitution.ASKED_MODEL and substitution.active() is not None:
            checkpoint = substitution.resolve_checkpoint(asked)
        elif model == "llava_hf":
            checkpoint = asked or LLAVA_HF_DEFAULT_CHECKPOINT
        else:
            continue
        problem = missing_checkpoint_line(model, checkpoint)
        if problem:
            return problem
    return None


def unknown_tasks_line(message: str) -> str | None:
    """For the host's "Tasks not found: a, b." error: the closest known names (the pack's and the host's)
    and where the full list is; None for any other message."""
    import difflib
    import re

    found = re.match(r"Tasks not found: (.+?)\. Try", message)
    if not found:
        return None
    from lmms_eval.tasks import TaskManager

    known = sorted(TaskManager().all_tasks)
    parts = []
    for name in (part.strip() for part in found.group(1).split(",")):
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        parts.append(f"{name!r}" + (f" (did you mean {' or '.join(close)}?)" if close else ""))
    return (
        f"unknown task {', '.join(parts)}; `lmms_eval --tasks list` lists every task (the host's and the "
        "pack's), `lmms-eval-tasks tasks` the pack's with one line each"
    )


def _is_evaluation(argv: Sequence[str]) -> bool:
    """True for an evaluation: the host's flat form (`--model X --tasks Y`) or `eval` with arguments, not
    a help request."""
    if not argv or any(flag in argv for flag in ("-h", "--help")):
        return False
    return argv[0].startswith("-") or (argv[0] == "eval" and len(argv) > 1)


def _parent_command() -> list[str]:
    """The command line of the process that started this one (``accelerate launch ...``), or []."""
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as handle:
            return [part.decode(errors="replace") for part in handle.read().split(b"\0") if part]
    except OSError:
        return []


def one_process_warning(parent: Sequence[str]) -> str | None:
    """The warning for ``accelerate launch --cpu --num_processes N`` (N > 1) without ``--multi_gpu``, which
    accelerate 1.x runs as one process, silently; None otherwise."""
    if "launch" not in parent or "--cpu" not in parent or "--multi_gpu" in parent:
        return None
    processes = flag_value(parent, "--num_processes") or flag_value(parent, "--num-processes") or "1"
    if not processes.isdigit() or int(processes) < 2:
        return None
    return (
        f"lmms_eval: warning: `accelerate launch --cpu --num_processes {processes}` runs ONE process "
        f"(accelerate starts {processes} only with --multi_gpu, on CPU too): add --multi_gpu"
    )


def _notice(text: str | None) -> None:
    """A one-line notice on stderr, from the first process only (under accelerate each rank runs this)."""
    if text and os.environ.get("LOCAL_RANK", "0") == "0":
        print(text, file=sys.stderr)


def _refusal(arguments: Sequence[str]) -> str | None:
    """The first one-line refusal of the pre-flight checks (after the ``--model llava`` substitution), or
    None when the run can start."""
    from lmms_eval_tasks.host import substitution
    from lmms_eval_tasks.host.argument_checks import model_settings_problem
    from lmms_eval_tasks.host.output_paths import model_folder_problem

    runs = model_runs(arguments)
    notice, problem = substitution.prepare(
        [model for model, _ in runs], [text for model, text in runs if model == substitution.ASKED_MODEL]
    )
    _notice(notice)
    return (
        problem
        or check_model_args(arguments)
        or model_settings_problem(arguments, runs)  # an absent cuda/mps, a dtype, llava_hf batch > 1
        or check_models(arguments)
        or check_tasks(arguments)
        or check_checkpoints(arguments)
        or check_benchmarks(arguments)
        or model_folder_problem(runs)  # pretrained=.. would write outside --output_path
        or check_loglikelihood_on_server(arguments)
        or check_judge_endpoint(arguments)
        or check_model_server(arguments)  # last: the only check that waits on the network
    )


def _run_host(arguments: Sequence[str]) -> tuple[int, str | None]:
    """The host's CLI on ``arguments`` (its console scrubbed of secrets): its exit code, and the message of
    a run stopped with one (the model server's circuit breaker), which the launcher prints last."""
    from lmms_eval.cli.dispatch import main as host_dispatch

    from lmms_eval_tasks.host.scrubbing import scrubbed_console

    saved_argv = sys.argv
    sys.argv = ["lmms_eval", *arguments]
    try:
        with scrubbed_console():  # the host prints its arguments and trackers' settings: no secret shown
            host_dispatch()
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0, None
        return 1, str(stop.code)
    except KeyboardInterrupt:
        return 130, None
    finally:
        sys.argv = saved_argv
    return 0, None


def end_process_group(exit_code: int) -> None:
    """Destroy torch's process group (accelerate, torchrun) after a run that ended well. The host never does:
    left to interpreter exit, gloo's worker threads can outlive Python and abort the rank with SIGABRT
    ("terminate called without an active exception"). Exit 0 includes the failures the host logs and
    swallows (a task's error, a peer gone: the launcher names them): gloo's destroy is local, a peer still
    in a collective fails at once. A run the host ended with a code (stopped, SIGTERM, Ctrl-C) keeps it."""
    distributed = sys.modules.get("torch.distributed")
    if (
        exit_code == 0
        and distributed is not None
        and distributed.is_available()
        and distributed.is_initialized()
    ):
        distributed.destroy_process_group()


def _closing_lines(arguments: Sequence[str]) -> list[str]:
    """What the run left undone, one line each (the root cause of a failed evaluation, a host file not written
    whole, failed requests, records saved for scoring), in the order printed; [] for a complete run."""
    from lmms_eval_tasks.framework.saved_records import SAVED_FOR_SCORING
    from lmms_eval_tasks.host.scrubbing import scrub_files

    scrub_files(path for _kind, path, *_ in fixes.HOST_OUTPUTS if path is not None)  # --model_args URLs
    lines = [failure_line(failure) for failure in fixes.FAILURES]
    lines += _output_problem_lines(fixes.host_output_problems())
    lines += failure_lines(uses_cache=flag_value(arguments, "--use_cache") is not None)  # failed requests
    return lines + saved_records_lines(list(dict.fromkeys(SAVED_FOR_SCORING)))  # last: the way on


def main(argv: Sequence[str] | None = None) -> int:
    """Run the host CLI with the pack's tasks; returns the process exit code (non-zero on failure)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in ("--version",):
        from lmms_eval_tasks import __version__

        print(f"lmms-eval-tasks {__version__}")
        return 0
    evaluation = _is_evaluation(arguments)
    if evaluation:
        from lmms_eval_tasks.host.argument_checks import run_argument_problem
        from lmms_eval_tasks.host.output_paths import check_output_path

        problem = check_output_path(arguments)  # before any heavy import: an unwritable path fails at once
        problem = problem or run_argument_problem(arguments)  # --limit 0, --num_fewshot 2 on pack tasks
        if problem:
            print(scrub(f"lmms_eval: {problem}"), file=sys.stderr)
            return 2
        from lmms_eval_tasks.host.termination import end_on_sigterm_with_cleanup

        try:
            end_on_sigterm_with_cleanup()  # SIGTERM as an exception: no .tmp left, the marker: interrupted
        except ValueError as error:  # its grace variable is not an integer >= 0
            print(f"lmms_eval: {error}", file=sys.stderr)
            return 2
    from lmms_eval_tasks.host.model_availability import vision_problem

    problem = vision_problem()  # a torchvision built for another torch breaks every import of transformers
    if problem:
        print(f"lmms_eval: {problem}", file=sys.stderr)
        return 2
    host.apply_patch("pack_task_index")  # every host TaskManager indexes the pack's tasks
    from lmms_eval_tasks.framework.saved_records import SAVED_FOR_SCORING

    for record in (fixes.FAILURES, fixes.HOST_OUTPUTS, SAVED_FOR_SCORING):
        record.clear()
    clear_failures()
    if evaluation:
        problem = _refusal(arguments)
        if problem:  # every refusal through the one redaction: an endpoint's user info or ?token=
            print(scrub(problem), file=sys.stderr)
            return 2
        host.apply_patches(requested_models(arguments))
        _notice(resume.prepare_cache(arguments))
        problem = resume.claim_cache(arguments)
        if problem:
            print(problem, file=sys.stderr)
            return 2
        _notice(one_process_warning(_parent_command()))
    exit_code, stopped = _run_host(arguments)
    end_process_group(exit_code)
    for line in cut_lines():  # answers all the same, but the reader must know: the token limit cut them
        print(line, file=sys.stderr)
    lines = _closing_lines(arguments) + ([stopped] if stopped else [])
    for line in lines:
        print(line, file=sys.stderr)
    return exit_code or (1 if lines else 0)


def saved_records_lines(saved_tasks: Sequence[Any]) -> list[str]:
    """The launcher's last lines for tasks whose scoring or report write failed after their records were
    saved: each cause naming the failed step, then where the outputs are and the command that finishes."""
    lines = [
        f"lmms_eval: evaluation failed: {saved.task}: {saved.step} failed: {saved.error}"
        for saved in saved_tasks
    ]
    lines += [
        f"lmms_eval: {saved.task}: {saved.step} failed after generation; the model's outputs are saved in "
        f"{saved.path}: once the cause above is fixed, score them and complete the run's report with: "
        f"{saved.command()}"
        for saved in saved_tasks
    ]
    return lines


def _output_problem_lines(problems: list[str]) -> list[str]:
    """Every host file that was not written whole, then where the pack's complete copies are."""
    from lmms_eval_tasks.reporting.schema import claimed_run_dirs

    if not problems:
        return []
    kept = [folder for folder in claimed_run_dirs() if any(folder.glob("*_report.json"))]
    copy = f"; the pack's own reports and records of this run are complete in {', '.join(map(str, kept))}"
    return [f"lmms_eval: {problem}" for problem in problems[:-1]] + [
        f"lmms_eval: {problems[-1]}{copy if kept else ''}; free space (or fix the output folder) and rerun"
    ]


def run() -> None:
    """Console-script entry point."""
    from lmms_eval_tasks.closed_pipe import end_quietly_on_closed_pipe

    raise SystemExit(end_quietly_on_closed_pipe(main))
