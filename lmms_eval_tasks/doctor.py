"""`lmms-eval-tasks doctor`: what works here and what does not, each failing line with its fix. Required
(exit 1): the host's version and patches, torch, transformers, torchvision/timm, the pack's models; WordNet,
the judge, datasets, host model wrappers and (unless ``--dev``) the tiny LLaVA are informational."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lmms_eval_tasks.documentation import doc
from lmms_eval_tasks.host import model_availability
from lmms_eval_tasks.host import patches as host
from lmms_eval_tasks.host import version as host_versions
from lmms_eval_tasks.host.datasets_cache import (
    datasets_cache_dir,
    hub_snapshot,
    hub_sources,
    offline_cache_entry,
)
from lmms_eval_tasks.host.model_availability import error_line
from lmms_eval_tasks.judges.redact import scrub

JUDGE_PROBE_TIMEOUT = 3.0  # seconds: a reachability probe, not a judging request


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    section: str  # "host", "runtime", "judge", "datasets", "models"
    name: str
    ok: bool
    required: bool
    summary: str
    fix: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _line(section: str, name: str, required: bool = False) -> Callable[..., Check]:
    """The maker of one line's check: ``line(ok, summary, fix="")``."""
    return lambda ok, summary, fix="": Check(section, name, ok, required, summary, fix)


CHECKOUT = Path(__file__).resolve().parent.parent  # a clone's root; a pip install has no Makefile there


def in_checkout() -> bool:
    """Whether the pack runs from a clone with its Makefile (fixes may name make targets) or a pip install."""
    return (CHECKOUT / "Makefile").is_file()


def check_host() -> list[Check]:
    """The host version against the supported range, and every host patch's probe."""
    installed, supported = host_versions.host_version(), host_versions.SUPPORTED_HOST_VERSIONS
    summary = f"lmms-eval {installed or 'is not installed'} (supported: {supported})"
    fix = "" if host_versions.host_supported() else f"pip install 'lmms-eval{supported}'"
    checks = [_line("host", "lmms-eval version", required=True)(host_versions.host_supported(), summary, fix)]
    for name, patch in host.PATCHES.items():
        if patch.models and not all(model_availability.wrapper_status(model).ok for model in patch.models):
            only = f"only --model {', '.join(patch.models)} needs it; it does not import here"
            checks.append(_line("host", f"patch {name}")(True, f"not checked: {only}"))
            continue
        status = host.check_patch(name)
        fix = ""
        if not status.ok:
            fix = f"without it {status.without}"
            if not host_versions.host_tested():
                tested = host_versions.TESTED_HOST_VERSIONS[-1]
                fix += (
                    f"; the patches were {host_versions.TESTED_HOST_TEXT}: pip install 'lmms-eval=={tested}'"
                )
        checks.append(
            _line("host", f"patch {name}", required=True)(status.ok, f"{status.state}: {status.detail}", fix)
        )
    return checks


def _check_import(module_name: str, fix: str) -> Check:
    import importlib

    try:
        module = importlib.import_module(module_name)
    except BaseException as error:  # noqa: BLE001 - any failure to import is the answer
        return Check("runtime", module_name, False, True, f"does not import: {error_line(error)}", fix)
    return Check("runtime", module_name, True, True, f"{module_name} {getattr(module, '__version__', '?')}")


def check_wordnet() -> Check:
    """WordNet for TDIUC: loads through nltk, or a run installs it on first use (Debian files); looks only."""
    from lmms_eval_tasks import wordnet

    folder, line = wordnet.default_nltk_data_dir(), _line("benchmarks", "wordnet (tdiuc)")
    problem, source = wordnet.load_problem(), wordnet.wordnet_source()
    if problem is None:
        return line(True, "WordNet loads (nltk finds synsets for 'dog')")
    if problem.startswith(wordnet.DAMAGED):  # nltk would load it and miss the synsets the cut-off files lost
        return line(False, problem, f"run `{wordnet.FIX_COMMAND}`")
    if all((source / file).is_file() for file in wordnet.REQUIRED_FILES):
        return line(True, f"not in {folder} yet; the first TDIUC run copies it from {source}")
    return line(
        False,
        f"nltk cannot load WordNet ({problem}); TDIUC runs try nltk's downloader into {folder}",
        f"run `{wordnet.FIX_COMMAND}` (with network, or after "
        "`apt-get install --no-install-recommends wordnet-base`)",
    )


def check_tiny_llava(directory: Path | None = None, required: bool = False) -> Check:
    """The tiny random LLaVA of `make setup` (``<cache>/tiny-llava``): the demo's and the tests' fixture."""
    from lmms_eval_tasks import cache_root
    from lmms_eval_tasks.models.tiny_llava import is_complete_build

    directory, line = directory or cache_root() / "tiny-llava", _line("development", "tiny llava", required)
    if is_complete_build(directory, seed=0):
        return line(True, f"built at {directory}")
    build = f"`lmms-eval-tasks build-tiny-llava --output {directory}`"
    fix = f"make tiny-llava (or {build})" if in_checkout() else build
    return line(False, f"not built (or incomplete) at {directory}", fix)


def _probe_status(endpoint: Any, timeout: float) -> int:
    """The HTTP status of ``GET <base>/models`` sent by httpx, the judge's client's transport, as that client
    sends it: the base URL's query kept, its user info as Basic credentials (httpx's own rule)."""
    import httpx

    url = httpx.URL(endpoint.base_url)
    base = url.path.rstrip("/")
    if endpoint.api_type == "azure":
        url = url.copy_with(path=f"{base}/openai/models", params={"api-version": endpoint.api_version})
        headers = {"api-key": endpoint.api_key}
    else:
        url, headers = url.copy_with(path=f"{base}/models"), {"Authorization": f"Bearer {endpoint.api_key}"}
    return httpx.get(url, headers=headers, timeout=timeout).status_code


JUDGE_CHECK = "judge (judged tasks)"
_judge_line = _line("benchmarks", JUDGE_CHECK)


def check_judge(timeout: float = JUDGE_PROBE_TIMEOUT) -> Check:
    """Judge endpoint configured (judges/config.py) and answering a cheap ``GET /models``; hides keys."""
    from lmms_eval_tasks.judges.config import resolve_endpoint

    fix_configure = (
        "set OPENAI_API_KEY (and OPENAI_BASE_URL for a local server) or the Azure variables; "
        f"see {doc('judges.md')}"
    )
    try:
        endpoint = resolve_endpoint()
    except ValueError as error:
        return _judge_line(False, f"misconfigured: {error}", fix_configure)
    if endpoint is None:
        from lmms_eval_tasks.judges.factory import llm_judge_unavailable

        if not llm_judge_unavailable():  # LMMS_EVAL_TASKS_JUDGE=rule: asked for by name
            return _judge_line(
                True,
                "LMMS_EVAL_TASKS_JUDGE=rule: judged tasks use the offline rule judge (an approximation, not "
                "comparable with GPT-judged numbers; reports say so)",
            )
        return _judge_line(
            False,
            "not configured: judged tasks (hallusionbench, hallusionbench_vlmevalkit, contextual) stop "
            "before the model loads; the *_offline and *_sample tasks use the offline rule judge",
            f"{fix_configure}; or run hallusionbench_offline / contextual_offline, or set "
            "LMMS_EVAL_TASKS_JUDGE=rule for the offline rule judge (not comparable with GPT-judged numbers)",
        )
    import httpx

    where = f"{endpoint.api_type} endpoint {endpoint.base_url} (from {endpoint.source or 'arguments'})"
    try:
        status = _probe_status(endpoint, timeout)
    except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as error:
        fix = "start the server or fix the URL; check network access"
        return _judge_line(False, f"{where} is not reachable: {error_line(error)}", fix)
    if status in (401, 403):
        return _judge_line(False, f"{where} rejects the key (HTTP {status})", "check the API key")
    return _judge_line(True, f"{where} answers (HTTP {status})")


def benchmark_sources(
    include_paths: Sequence[str] = (),
) -> dict[str, list[tuple[tuple[str, str | None, str | None], list[str]]]]:
    """Benchmark -> ((dataset_path, dataset_name, data_files as JSON or None), tasks): the hub datasets of its
    tasks as the host will configure them (a task of the ``include_paths`` folders wins over the pack's)."""
    from lmms_eval_tasks.framework.registry import benchmark_for_task, benchmarks
    from lmms_eval_tasks.framework.task_index import pack_tasks

    found: dict[str, dict[tuple[str, str | None, str | None], list[str]]] = {
        name: {} for name in benchmarks()
    }
    tasks = [entry.name for entry in pack_tasks() if entry.kind == "task"]
    for task, path, name, files in hub_sources(tasks, include_paths):
        if (benchmark := benchmark_for_task(task)) is not None:
            key = (
                path,
                None if name is None else str(name),
                json.dumps(files, sort_keys=True) if files else None,
            )
            found.setdefault(benchmark.name, {}).setdefault(key, []).append(task)
    return {benchmark: sorted(sources.items(), key=str) for benchmark, sources in found.items()}


def check_datasets(include_paths: Sequence[str] = ()) -> list[Check]:
    """For each benchmark, whether an offline run finds its real (hub) datasets in the `datasets` cache."""
    checks = []
    for benchmark, sources in benchmark_sources(include_paths).items():
        line = _line("datasets", benchmark)
        if not sources:
            checks.append(line(True, "no hub dataset in its task YAML (local files only)"))
            continue
        cached, missing, snapshots = [], [], []
        for (path, name, files), _tasks in sources:
            label = f"{path}" + (f" [{name}]" if name else "") + (f" data_files={files}" if files else "")
            entry = offline_cache_entry(path, name, json.loads(files) if files else None)
            if entry is not None:
                cached.append(f"{label} (datasets cache {entry})")
                continue
            missing.append(label)
            snapshot = hub_snapshot(path)
            if snapshot is not None:
                snapshots.append(f"{path} has a hub snapshot at {snapshot}")
        if missing:
            summary = f"not in the datasets cache at {datasets_cache_dir()}: {', '.join(missing)}" + (
                f"; cached: {', '.join(cached)}" if cached else ""
            )
            fix = (
                "its real tasks download the data on first run (needs network and, for gated sets, "
                "`huggingface-cli login`); its *_sample tasks run offline"
            )
            if snapshots:
                fix = (
                    f"{'; '.join(snapshots)}, which `datasets` offline does not load: run once with network "
                    "(it prepares the cache from the snapshot's files), or set the task's dataset_path to "
                    "that folder; " + fix
                )
            checks.append(line(False, summary, fix))
        else:
            checks.append(line(True, f"cached: {', '.join(cached)}"))
    return checks


def check_pack_models() -> Check:
    """The pack's own models (``random_guess``) resolve through the host registry and import: required."""
    from lmms_eval_tasks.models import SIMPLE_MODELS

    broken = [status for status in map(model_availability.wrapper_status, SIMPLE_MODELS) if not status.ok]
    if broken:
        reasons = "; ".join(f"{status.model}: {status.reason}" for status in broken)
        fix = "pip install -e ." if in_checkout() else "the README's pip line"
        fix = f"reinstall the pack: {fix}"
        return Check("runtime", "pack models", False, True, reasons, fix)
    return Check("runtime", "pack models", True, True, f"{', '.join(SIMPLE_MODELS)} import through the host")


def check_models(all_models: bool = False) -> list[Check]:
    """Which host model wrappers can run here (informational), one line each with the reason when not."""
    from lmms_eval_tasks.models import SIMPLE_MODELS

    if all_models:
        names = model_availability.host_model_names()
    else:
        names = list(dict.fromkeys([*model_availability.DEFAULT_DOCTOR_MODELS, *SIMPLE_MODELS]))
    return [_model_check(model) for model in names]


def _model_check(model: str) -> Check:
    """One host model wrapper's line; ``--model llava`` as the launcher serves it here."""
    status, line = model_availability.wrapper_status(model), _line("models", model)
    if status.ok:
        return line(True, f"imports ({status.class_path})")
    if model != "llava":
        return line(False, status.reason, model_availability.install_hint(status))
    from lmms_eval_tasks.host import substitution

    used = model_availability.wrapper_status(substitution.USED_MODEL)
    if substitution.disabled():
        fix = (
            f"unset {substitution.NO_SUBSTITUTION_ENV} (the launcher then serves --model llava with the "
            "pack's LLaVA on transformers), or use --model llava_hf --model_args "
            f"pretrained=llava-hf/llava-1.5-7b-hf ({doc('models.md')})"
        )
        return line(False, status.reason, fix)
    if not used.ok:  # ✓ only when what runs imports: the substitute fails too
        summary = f"neither the original code nor {substitution.USED_MODEL} imports ({used.reason})"
        return line(False, summary, model_availability.install_hint(used))
    summary = (
        f"runs as the pack's LLaVA on transformers ({substitution.USED_MODEL}, "
        f"{substitution.DEFAULT_ORIGINAL_LLAVA} -> "
        f"{substitution.resolve_checkpoint(None)}): the original LLaVA code does not import "
        f"({status.reason})"
    )
    return line(True, summary)


_stderr_sink: int | None = None


@contextlib.contextmanager
def _quiet_host(verbose: bool) -> Iterator[None]:
    """Keep the host's and its wrappers' import-time logging and prints out of the report."""
    if verbose:
        yield
        return
    from loguru import logger

    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        import lmms_eval.models  # noqa: F401 - its import resets loguru to a stdout sink; undo that below

        logger.remove()
        try:
            yield
        finally:
            logger.remove()
    global _stderr_sink
    if _stderr_sink is None:
        _stderr_sink = logger.add(sys.stderr, level="WARNING")


def check_judge_self_test() -> list[Check]:
    """The judge self-test (docs/judges.md) on the bundled ConTextual and HallusionBench samples: the
    configured judge's false-accept and false-reject rates. Spends judge calls (about 19 per benchmark)."""
    import pandas as pd

    from lmms_eval_tasks.judges.pipeline import LazyJudge
    from lmms_eval_tasks.tasks.contextual import scoring as contextual
    from lmms_eval_tasks.tasks.hallusionbench import scoring as hallusionbench

    samples = Path(__file__).parent / "tasks"
    columns = ["image_url", "instruction", "response", "category"]
    rows = pd.read_parquet(samples / "contextual/sample/contextual_sample.parquet", columns=columns)
    records = [{**row, "prediction": ""} for row in rows.to_dict("records")]
    questions = pd.read_parquet(samples / "hallusionbench/sample/image.parquet").drop(columns="image")
    options = {"judge_prompt": "official", "model_text_limit": None}
    with LazyJudge(task="contextual") as lazy:
        judge = lazy.get()
        if judge.kind == "rule":
            return [_line("benchmarks", "judge self-test")(False, "no LLM judge configured", "above")]
        items = contextual.parse_items(records)
        reports = {
            "ConTextual": contextual._self_test(records, items, judge, contextual.Options()),
            "HallusionBench": hallusionbench._self_test(questions.to_dict("records"), judge, "final",
                                                        "official", options),
        }  # fmt: skip
    return [_self_test_check(name, report) for name, report in reports.items()]


def _self_test_check(name: str, report: dict[str, Any] | None) -> Check:
    line = _line("benchmarks", f"judge self-test ({name})")
    if report is None:
        return line(True, "switched off by name")
    rates = [report[key] for key in ("judge_false_accept_rate", "judge_false_reject_rate")]
    accept, reject = ("n/a" if rate is None else f"{rate:.1f} %" for rate in rates)
    taken = ", ".join(repr(answer) for answer in report["accepted_probes"])
    summary = f"false-accept {accept}, false-reject {reject} ({len(report['probes'])} probes)"
    if taken:
        fix = "use a stronger judge, or cite its false-accept rate with its numbers"
        return line(False, f"{summary}; accepted: {taken}", fix)
    return line(True, summary)


VISION_CHECK = "torchvision, timm"


def check_vision_packages() -> Check:
    """torchvision and timm absent or importing (transformers needs neither); installed but not importing
    (built for another torch) breaks every run, so it is required."""
    from lmms_eval_tasks.host.model_availability import VISION_FIX, vision_problem

    problem = vision_problem()
    if problem:
        return Check("runtime", VISION_CHECK, False, True, problem.partition("; fix: ")[0], VISION_FIX)
    return Check("runtime", VISION_CHECK, True, True, "absent or importing (transformers needs neither)")


def run_checks(
    all_models: bool = False,
    tiny_llava: Path | None = None,
    verbose: bool = False,
    dev: bool = False,
    judge: bool = False,
    include_paths: Sequence[str] = (),
) -> list[Check]:
    """Every check, in report order (``dev``: the development checks are required too; ``judge``: the
    judge self-test, which spends judge calls)."""
    steps: list[Callable[[], Check | list[Check]]] = [
        check_host,
        lambda: _check_import(
            "torch",
            "make setup (installs the CPU wheel of torch)"
            if in_checkout()
            else "pip install torch (the README's install lines: a CPU or CUDA wheel)",
        ),
        lambda: _check_import(
            "transformers",
            "make setup (or pip install -e .)"
            if in_checkout()
            else "reinstall the pack with the README's pip line",
        ),
        lambda: vision,
        check_pack_models,
        check_wordnet,
        check_judge,
        lambda: check_datasets(include_paths),
        lambda: check_models(all_models),
        lambda: check_tiny_llava(tiny_llava, required=dev),
        *([check_judge_self_test] if judge else []),
    ]
    vision = check_vision_packages()  # first: a broken torchvision fails the host's import below
    checks: list[Check] = []
    with _quiet_host(verbose):
        for step in steps:
            try:
                result = step()
            except Exception as error:  # noqa: BLE001 - one broken check must not hide the others
                result = Check("doctor", getattr(step, "__name__", "check"), False, True, error_line(error))
            checks.extend(result if isinstance(result, list) else [result])
    return checks


def render(checks: Sequence[Check], ascii_only: bool = False) -> str:
    """Human-readable report: one line per check, its fix on the next line when it fails."""
    good, bad = ("OK  ", "FAIL") if ascii_only else ("✓", "✗")
    width = max((len(check.name) for check in checks), default=10)
    lines: list[str] = []
    section = None
    for check in checks:
        if check.section != section:
            section = check.section
            informational = not any(other.required for other in checks if other.section == section)
            lines.append(f"{section}{' (informational)' if informational else ''}:")
        lines.append(f"  {good if check.ok else bad} {check.name:<{width}} {check.summary}")
        if not check.ok and check.fix:
            lines.append(f"    {' ' * len(good)}fix: {check.fix}")
    failed = [check.name for check in checks if check.required and not check.ok]
    vision = next((check for check in checks if check.name == VISION_CHECK and not check.ok), None)
    first = f"; fix first: {vision.fix}" if vision is not None else ""  # the cause of the other failures
    lines.append(
        f"{len(failed)} required check(s) failed: {', '.join(failed)}{first}"
        if failed
        else "all required checks pass"
    )
    return scrub("\n".join(lines))  # keys, URL user info, credential query parameters


def report(checks: Sequence[Check], as_json: bool = False) -> int:
    """Print ``checks`` (text or JSON); return the exit code."""
    ok = all(check.ok for check in checks if check.required)
    if as_json:
        payload = {"ok": ok, "checks": [check.as_dict() for check in checks]}
        print(scrub(json.dumps(payload, indent=2)))
    else:
        encoding = (getattr(sys.stdout, "encoding", None) or "ascii").lower()
        print(render(checks, ascii_only="utf" not in encoding))
    return 0 if ok else 1
