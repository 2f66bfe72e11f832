"""`lmms-eval-tasks doctor`: what works on this machine and what does not, each failing line with its fix.

Required checks (a failure makes the command exit 1): the host lmms-eval version is in the supported range,
every host patch applies, torch and transformers import, WordNet loads through nltk, the tiny random LLaVA
is built, and the pack's own model wrappers import. Informational checks (never change the exit code): the
judge endpoint is configured and reachable, which benchmarks' datasets are in the local Hugging Face cache,
and which host model wrappers can run here (the ``--model`` values worth starting a long job with).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lmms_eval_tasks.host import patches as host

JUDGE_PROBE_TIMEOUT = 3.0  # seconds: a reachability probe, not a judging request
LOCAL_DATASET_BUILDERS = {"parquet", "json", "csv", "arrow", "text", "imagefolder", "audiofolder"}


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


def pack_cache_root() -> Path:
    """``$LMMS_EVAL_TASKS_CACHE``, else ``~/.cache/lmms_eval_tasks`` (where `make setup` builds things)."""
    root = os.environ.get("LMMS_EVAL_TASKS_CACHE")
    return Path(root).expanduser() if root else Path.home() / ".cache" / "lmms_eval_tasks"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


# --- host ---------------------------------------------------------------------------------------------------


def check_host() -> list[Check]:
    """The host version against the supported range, and every host patch's probe."""
    version = host.host_version()
    supported = host.SUPPORTED_HOST_VERSIONS
    checks = [
        Check(
            "host",
            "lmms-eval version",
            host.host_supported(),
            True,
            f"lmms-eval {version or 'is not installed'} (supported: {supported})",
            "" if host.host_supported() else f"pip install 'lmms-eval{supported}'",
        )
    ]
    for name, patch in host.PATCHES.items():
        if patch.models and not all(host.wrapper_status(model).ok for model in patch.models):
            checks.append(
                Check(
                    "host",
                    f"patch {name}",
                    True,
                    False,
                    f"not checked: only --model {', '.join(patch.models)} needs it; it does not import here",
                )
            )
            continue
        status = host.check_patch(name)
        fix = ""
        if not status.ok:
            fix = (
                f"without it {status.without}; the patch was written for lmms-eval {patch.written_for}: "
                + (f"pip install 'lmms-eval{patch.written_for}'")
            )
        checks.append(
            Check("host", f"patch {name}", status.ok, True, f"{status.state}: {status.detail}", fix)
        )
    return checks


# --- runtime ------------------------------------------------------------------------------------------------


def _check_import(module_name: str, fix: str) -> Check:
    import importlib

    try:
        module = importlib.import_module(module_name)
    except BaseException as error:  # noqa: BLE001 - any failure to import is the answer
        return Check("runtime", module_name, False, True, f"does not import: {_first_line(error)}", fix)
    return Check("runtime", module_name, True, True, f"{module_name} {getattr(module, '__version__', '?')}")


def check_wordnet() -> Check:
    """WordNet through nltk, from the pack's nltk data folder: ``wordnet.synsets("dog")``."""
    from lmms_eval_tasks.wordnet import default_nltk_data_dir, ensure_wordnet_on_path

    folder = default_nltk_data_dir()
    fix = (
        "run `make wordnet` (or `lmms-eval-tasks setup-wordnet --target "
        f"{folder}` after `apt-get install wordnet-base`), with NLTK_DATA pointing at that folder"
    )
    try:
        ensure_wordnet_on_path()
        from nltk.corpus import wordnet

        synsets = wordnet.synsets("dog")
    except BaseException as error:  # noqa: BLE001 - LookupError, OSError, or a damaged file
        return Check(
            "runtime", "wordnet", False, True, f"nltk cannot load WordNet: {_first_line(error)}", fix
        )
    if not synsets:
        return Check("runtime", "wordnet", False, True, "WordNet loads but has no synsets for 'dog'", fix)
    return Check("runtime", "wordnet", True, True, f"WordNet loads ({len(synsets)} synsets for 'dog')")


def check_tiny_llava(directory: Path | None = None) -> Check:
    """The tiny random LLaVA the demo and tests run (``<cache>/tiny-llava``), completely built."""
    from lmms_eval_tasks.models.tiny_llava import is_complete_build

    directory = directory or pack_cache_root() / "tiny-llava"
    if is_complete_build(directory, seed=0):
        return Check("runtime", "tiny llava", True, True, f"built at {directory}")
    return Check(
        "runtime",
        "tiny llava",
        False,
        True,
        f"not built (or incomplete) at {directory}",
        f"make tiny-llava (or `lmms-eval-tasks build-tiny-llava --output {directory}`)",
    )


# --- judge --------------------------------------------------------------------------------------------------


def _probe_request(endpoint: Any) -> urllib.request.Request:
    if endpoint.api_type == "azure":
        url = f"{endpoint.base_url}/openai/models?api-version={endpoint.api_version}"
        headers = {"api-key": endpoint.api_key}
    else:
        url = f"{endpoint.base_url}/models"
        headers = {"Authorization": f"Bearer {endpoint.api_key}"}
    return urllib.request.Request(url, headers=headers, method="GET")


def check_judge(timeout: float = JUDGE_PROBE_TIMEOUT) -> Check:
    """Judge endpoint configured (judges/config.py) and answering a cheap ``GET /models``; hides keys."""
    from lmms_eval_tasks.judges.config import resolve_endpoint

    fix_configure = (
        "set OPENAI_API_KEY (and OPENAI_BASE_URL for a local server) or the Azure variables; "
        "see docs/judges.md"
    )
    try:
        endpoint = resolve_endpoint()
    except ValueError as error:
        return Check("judge", "judge endpoint", False, False, f"misconfigured: {error}", fix_configure)
    if endpoint is None:
        return Check(
            "judge",
            "judge endpoint",
            False,
            False,
            "not configured: judged tasks fall back to the rule judge",
            fix_configure,
        )
    where = f"{endpoint.api_type} endpoint {endpoint.base_url} (from {endpoint.source or 'arguments'})"
    try:
        with urllib.request.urlopen(_probe_request(endpoint), timeout=timeout) as response:  # noqa: S310
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return Check(
            "judge",
            "judge endpoint",
            False,
            False,
            f"{where} is not reachable: {reason}",
            "start the server or fix the URL; check network access",
        )
    if status in (401, 403):
        return Check(
            "judge",
            "judge endpoint",
            False,
            False,
            f"{where} rejects the key (HTTP {status})",
            "check the API key",
        )
    return Check("judge", "judge endpoint", True, False, f"{where} answers (HTTP {status})")


# --- datasets -----------------------------------------------------------------------------------------------


def benchmark_datasets() -> dict[str, list[tuple[str, str | None, list[str]]]]:
    """Benchmark -> its hub datasets as (dataset_path, dataset_name, tasks), read from the task YAML.

    Tasks on bundled files (``dataset_path: parquet`` etc.) run offline and are left out.
    """
    from lmms_eval_tasks.framework.registry import benchmark_for_task, benchmarks
    from lmms_eval_tasks.host.task_index import pack_tasks, task_config

    found: dict[str, dict[tuple[str, str | None], list[str]]] = {name: {} for name in benchmarks()}
    for entry in pack_tasks():
        if entry.kind != "task":
            continue
        benchmark = benchmark_for_task(entry.name)
        config = task_config(entry)
        path = config.get("dataset_path")
        if benchmark is None or not isinstance(path, str) or path in LOCAL_DATASET_BUILDERS:
            continue
        name = config.get("dataset_name")
        key = (path, str(name) if name is not None else None)
        found.setdefault(benchmark.name, {}).setdefault(key, []).append(entry.name)
    return {
        benchmark: [(path, name, tasks) for (path, name), tasks in sorted(datasets.items(), key=str)]
        for benchmark, datasets in found.items()
    }


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


def dataset_cached(path: str, name: str | None) -> str | None:
    """Where a hub dataset is cached locally ("datasets cache" / "hub cache"), or None; reads folders only.

    ``datasets`` keeps prepared data under ``<cache>/<org>___<name>/<config>/``; huggingface_hub keeps
    downloads under ``<hub cache>/datasets--<org>--<name>/snapshots/``. Either lets an offline run load it.
    """
    prepared = datasets_cache_dir() / path.replace("/", "___")
    if name is not None and (prepared / name).is_dir():
        return "datasets cache"
    if name is None and prepared.is_dir() and any(prepared.iterdir()):
        return "datasets cache"
    snapshots = hub_cache_dir() / f"datasets--{path.replace('/', '--')}" / "snapshots"
    if snapshots.is_dir() and any(snapshots.iterdir()):
        return "hub cache"
    return None


def check_datasets() -> list[Check]:
    """For each benchmark, whether its real (hub) datasets are in the local cache, so it can run offline."""
    checks = []
    for benchmark, datasets in benchmark_datasets().items():
        if not datasets:
            checks.append(
                Check(
                    "datasets", benchmark, True, False, "no hub dataset in its task YAML (local files only)"
                )
            )
            continue
        cached, missing = [], []
        for path, name, _tasks in datasets:
            label = f"{path}" + (f" [{name}]" if name else "")
            where = dataset_cached(path, name)
            (cached if where else missing).append(f"{label} ({where})" if where else label)
        if missing:
            summary = f"not cached: {', '.join(missing)}" + (
                f"; cached: {', '.join(cached)}" if cached else ""
            )
            fix = (
                "its real tasks download the data on first run (needs network and, for gated sets, "
                "`huggingface-cli login`); its *_sample tasks run offline"
            )
            checks.append(Check("datasets", benchmark, False, False, summary, fix))
        else:
            checks.append(Check("datasets", benchmark, True, False, f"cached: {', '.join(cached)}"))
    return checks


# --- models -------------------------------------------------------------------------------------------------


def check_pack_models() -> Check:
    """The pack's own models (``random_guess``) resolve through the host registry and import: required."""
    from lmms_eval_tasks.models import SIMPLE_MODELS

    broken = [status for status in map(host.wrapper_status, SIMPLE_MODELS) if not status.ok]
    if broken:
        reasons = "; ".join(f"{status.model}: {status.reason}" for status in broken)
        return Check("runtime", "pack models", False, True, reasons, "reinstall the pack: pip install -e .")
    return Check("runtime", "pack models", True, True, f"{', '.join(SIMPLE_MODELS)} import through the host")


def check_models(all_models: bool = False) -> list[Check]:
    """Which host model wrappers can run here (informational), one line each with the reason when not."""
    from lmms_eval_tasks.models import SIMPLE_MODELS

    if all_models:
        names = host.host_model_names()
    else:
        names = list(dict.fromkeys([*host.DEFAULT_DOCTOR_MODELS, *SIMPLE_MODELS]))
    checks = []
    for model in names:
        status = host.wrapper_status(model)
        if status.ok:
            checks.append(Check("models", model, True, False, f"imports ({status.class_path})"))
            continue
        if model == "llava":
            fix = "use --model llava_hf --model_args pretrained=llava-hf/llava-1.5-7b-hf (docs/models.md)"
        else:
            fix = host.install_hint(status)
        checks.append(Check("models", model, False, False, status.reason, fix))
    return checks


# --- report -------------------------------------------------------------------------------------------------


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


def run_checks(
    all_models: bool = False, tiny_llava: Path | None = None, verbose: bool = False
) -> list[Check]:
    """Every check, in report order."""
    steps: list[Callable[[], Check | list[Check]]] = [
        check_host,
        lambda: _check_import("torch", "make setup (installs the CPU wheel of torch)"),
        lambda: _check_import("transformers", "make setup (or pip install -e .)"),
        check_wordnet,
        lambda: check_tiny_llava(tiny_llava),
        check_pack_models,
        lambda: check_models(all_models),
        check_judge,
        check_datasets,
    ]
    checks: list[Check] = []
    with _quiet_host(verbose):
        for step in steps:
            try:
                result = step()
            except Exception as error:  # noqa: BLE001 - one broken check must not hide the others
                result = Check("doctor", getattr(step, "__name__", "check"), False, True, _first_line(error))
            checks.extend(result if isinstance(result, list) else [result])
    return checks


def _redact(text: str) -> str:
    """Remove any configured secret from ``text`` (defence in depth: no check prints one on purpose)."""
    for name in ("OPENAI_API_KEY", "AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "LMMS_EVAL_TASKS_JUDGE_API_KEY"):
        secret = os.environ.get(name)
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


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
    lines.append(
        f"{len(failed)} required check(s) failed: {', '.join(failed)}"
        if failed
        else "all required checks pass"
    )
    return _redact("\n".join(lines))


def report(checks: Sequence[Check], as_json: bool = False) -> int:
    """Print ``checks`` (text or JSON); return the exit code."""
    ok = all(check.ok for check in checks if check.required)
    if as_json:
        payload = {"ok": ok, "checks": [check.as_dict() for check in checks]}
        print(_redact(json.dumps(payload, indent=2)))
    else:
        encoding = (getattr(sys.stdout, "encoding", None) or "ascii").lower()
        print(render(checks, ascii_only="utf" not in encoding))
    return 0 if ok else 1
