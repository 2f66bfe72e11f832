"""Every change the pack makes to lmms-eval, as data: a ``HostPatch`` per change, applied when its probe finds
the host behaving as it expects (the version gates nothing); docs/models.md ("Host patches")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from loguru import logger

from lmms_eval_tasks.host import host_bug_fixes as fixes
from lmms_eval_tasks.host import integration as pack
from lmms_eval_tasks.host import predict_only, version
from lmms_eval_tasks.host.model_availability import error_line
from lmms_eval_tasks.host.patch_kit import APPLIES, MISMATCH, NOT_NEEDED, Mismatch, probe_lock
from lmms_eval_tasks.host.server_checks import SERVER_MODELS
from lmms_eval_tasks.host.speedups import task_index as speedups
from lmms_eval_tasks.reporting import patch_record


@dataclass(frozen=True)
class HostPatch:
    """One change: ``probe()`` gives ``(APPLIES | NOT_NEEDED | MISMATCH, detail)``, changing nothing;
    ``without``: what a run loses when it is skipped; ``models``: the ``--model`` values needing it (all)."""

    name: str
    probe: Callable[[], tuple[str, str]]
    install: Callable[[], None]
    without: str
    models: tuple[str, ...] = ()


@dataclass(frozen=True)
class PatchStatus:
    """What happened (or would happen) to one patch on this host."""

    name: str
    state: str  # "applied", "applies", "not needed", "skipped"
    detail: str
    without: str = ""

    @property
    def ok(self) -> bool:
        return self.state != "skipped"


PATCHES: dict[str, HostPatch] = {
    patch.name: patch
    for patch in (
        HostPatch(
            "pack_task_index",
            pack.probe_task_index,
            pack.install_task_index,
            "the pack's tasks are unknown to the host; run the host with "
            "`--include_path $(lmms-eval-tasks tasks-dir)` instead",
        ),
        HostPatch(
            "libyaml_task_index",
            speedups.probe_libyaml_index,
            speedups.install_libyaml_index,
            "each start parses the host's task YAML in pure Python (about 10 s of CPU); nothing else changes",
        ),
        HostPatch(
            "task_index_cache",
            speedups.probe_task_index_cache,
            speedups.install_task_index_cache,
            "each start indexes the host's ~1,900 task YAML files again (about 1.4 s of CPU); nothing else "
            "changes",
        ),
        HostPatch(
            "task_dataset_context",
            pack.probe_task_dataset_context,
            pack.install_task_dataset_context,
            "hallusionbench reads its non_image split from lmms-lab-encoder/HallusionBench, not from an "
            "overridden dataset_path; each VRB level maps the dataset files again (RSS grows with levels)",
        ),
        HostPatch(
            "failure_recorder",
            fixes.probe_failure_recorder,
            fixes.install_failure_recorder,
            "a failed evaluation may exit 0: read the log for 'Error during evaluation'",
        ),
        HostPatch(
            "pack_stderr",
            pack.probe_pack_stderr,
            pack.install_pack_stderr,
            "the host's table prints N/A for pack metrics; the standard errors and intervals are in the "
            "pack report (<metric>_stderr and details.uncertainty)",
        ),
        HostPatch(
            "group_only_metrics",
            pack.probe_group_only_metrics,
            pack.install_group_only_metrics,
            "member tasks list the group-only metrics (VRB sub-metrics, DARE std over prompts) as NaN in the "
            "host's table and results; read them on the groups",
        ),
        HostPatch(
            "table_na",
            pack.probe_table_na,
            pack.install_table_na,
            "undefined pack metrics print NaN in the host's table; the pack report has null and the reason",
        ),
        HostPatch(
            "predict_only_records",
            predict_only.probe,
            predict_only.install,
            "--predict_only leaves no pack records: run without it, or score from a normal run's records",
        ),
        HostPatch(
            "host_outputs",
            fixes.probe_host_outputs,
            fixes.install_host_outputs,
            "a full disk while the host saves may leave a cut results file and exit 0: check the files",
        ),
        HostPatch(
            "run_context",
            pack.probe_run_context,
            pack.install_run_context,
            "pack reports are filed under the current UTC time instead of the host's run id, and groups "
            "are scored from every record of the process; run through the `lmms_eval` launcher",
        ),
        HostPatch(
            "loglikelihood_result",
            fixes.probe_loglikelihood_result,
            fixes.install_loglikelihood_result,
            "loglikelihood and multiple_choice tasks crash in process_results ('too many values to unpack')",
        ),
        HostPatch(
            "no_text_result",
            fixes.probe_no_text_result,
            fixes.install_no_text_result,
            'a server reply with no text is scored as an empty (wrong) answer: check the samples for ""',
        ),
        HostPatch(
            "cache_no_failures",
            fixes.probe_cache_no_failures,
            fixes.install_cache_no_failures,
            "with --use_cache a failed request is cached as the model's answer and a rerun does not ask "
            "again: delete the cache folder after a run with failed generations",
        ),
        HostPatch(
            "cache_checkpoints",
            fixes.probe_cache_checkpoints,
            fixes.install_cache_checkpoints,
            "with --use_cache a run killed during generation has cached nothing: its rerun asks for all",
        ),
        HostPatch(
            "cache_no_secrets",
            fixes.probe_cache_no_secrets,
            fixes.install_cache_no_secrets,
            "with --use_cache the cache databases hold --model_args verbatim, api_key included: keep the "
            "key in OPENAI_API_KEY, not in --model_args",
        ),
        HostPatch(
            "cache_pack_version",
            fixes.probe_cache_pack_version,
            fixes.install_cache_pack_version,
            "with --use_cache a pack upgrade that changes a task's images reuses the answers to the old "
            "images: use a new cache folder after upgrading the pack",
        ),
        HostPatch(
            "cache_request_settings",
            fixes.probe_cache_request_settings,
            fixes.install_cache_request_settings,
            "with --use_cache a rerun that changes presence_penalty, frequency_penalty, seed or "
            "LMMS_IMAGE_ENCODE_FORMAT reuses the answers to the other requests: use a new cache folder",
        ),
        HostPatch(
            "cut_replies",
            pack.probe_cut_replies,
            pack.install_cut_replies,
            "answers cut at the token limit are not counted, warned about or listed as a deviation",
        ),
        HostPatch(
            "server_timeouts",
            fixes.probe_server_timeouts,
            fixes.install_server_timeouts,
            "each attempt may wait 600 s and is retried by the SDK too (a hung server blocks the run for "
            "hours); no circuit breaker, no Retry-After pacing, cut replies not counted",
            models=tuple(sorted(SERVER_MODELS)),
        ),
        HostPatch(
            "cache_version",
            fixes.probe_cache_version,
            fixes.install_cache_version,
            "with --use_cache every commit to the repository holding the virtual environment changes every "
            "cache key: a rerun asks the server for everything again",
        ),
        HostPatch(
            "llava_hf_loglikelihood",
            fixes.probe_llava_hf_loglikelihood,
            fixes.install_llava_hf_loglikelihood,
            "loglikelihood / multiple_choice tasks may fail on llava_hf",
            models=("llava_hf",),
        ),
        HostPatch(
            "llava_hf_text_only",
            fixes.probe_llava_hf_text_only,
            fixes.install_llava_hf_text_only,
            "llava_hf may answer '' to every text-only question",
            models=("llava_hf",),
        ),
        HostPatch(
            "llava_hf_simple_text_only",
            fixes.probe_llava_hf_simple_text_only,
            fixes.install_llava_hf_simple_text_only,
            "with --force_simple, llava_hf answers a request without an image with the previous request's "
            "inputs, silently: run without --force_simple",
            models=("llava_hf",),
        ),
        HostPatch(
            "chat_loglikelihood",
            fixes.probe_chat_loglikelihood,
            fixes.install_chat_loglikelihood,
            "loglikelihood / multiple_choice tasks need `--force_simple` on llava_hf",
            models=("llava_hf",),
        ),
    )
}


def check_patch(name: str) -> PatchStatus:
    """What ``apply_patch(name)`` would do on this host, from the patch's probe, without changing anything."""
    patch = PATCHES[name]
    try:
        state, detail = patch.probe()
    except Mismatch as error:
        state, detail = MISMATCH, str(error)
    except Exception as error:  # noqa: BLE001 - a probe that cannot run means the patch does not apply
        state, detail = MISMATCH, f"probe failed: {error_line(error)}"
    return PatchStatus(name, "skipped" if state == MISMATCH else state, detail, patch.without)


# What happened to each patch in this process (read into every pack report's provenance).
_APPLIED: dict[str, PatchStatus] = {}
_warned: set[str] = set()


def skipped_line(statuses: Sequence[PatchStatus]) -> str | None:
    """One line naming every skipped patch with its reason (and whether this host version is untested);
    None when none was skipped."""
    skipped = [status for status in statuses if not status.ok]
    if not skipped:
        return None
    installed = version.host_version()
    tested = version.host_tested()
    host = f"lmms-eval {installed or '(not installed)'}" + (
        "" if tested else f", a version the pack's patches were not tested on ({version.TESTED_HOST_TEXT})"
    )
    reasons = "; ".join(f"{status.name} ({status.detail}; without it {status.without})" for status in skipped)
    return f"lmms-eval-tasks: on {host}, {len(skipped)} host patch(es) did not apply: {reasons}"


def apply_patch(name: str) -> PatchStatus:
    """Install one patch when its probe passes (idempotent); otherwise warn once and leave the host alone."""
    return apply_patches(names=[name])[0]


def patches_for(model_names: Sequence[str] = ()) -> list[str]:
    """Names of the patches a run with these ``--model`` values needs, in install order."""
    return [
        name for name, patch in PATCHES.items() if not patch.models or set(patch.models) & set(model_names)
    ]


def apply_patches(model_names: Sequence[str] = (), names: Sequence[str] | None = None) -> list[PatchStatus]:
    """Apply the patches a run needs (all model-independent ones, plus those of the named models) whose
    probes pass; one warning line names those that did not, each with its reason."""
    statuses = []
    for name in patches_for(model_names) if names is None else names:
        with probe_lock:
            status = check_patch(name)
            if status.state == APPLIES:
                PATCHES[name].install()
                status = PatchStatus(name, "applied", status.detail, status.without)
            _APPLIED[name] = status
            patch_record.set_patches(patches_of_this_run())  # read into every report's provenance
        statuses.append(status)
    fresh = [status for status in statuses if not status.ok and status.name not in _warned]
    line = skipped_line(fresh)
    if line:
        _warned.update(status.name for status in fresh)
        logger.warning(line)
    return statuses


def check_patches() -> list[PatchStatus]:
    """The status of every patch on this host (imports the llava_hf wrapper to probe its patches)."""
    return [check_patch(name) for name in PATCHES]


def patches_of_this_run() -> dict[str, Any] | None:
    """For a report's provenance: the host patches this process applied, found not needed, or skipped
    (with the reason); None when none was tried (the pack used as a library without the launcher)."""
    if not _APPLIED:
        return None
    statuses = list(_APPLIED.values())
    return {
        "applied": [status.name for status in statuses if status.state == "applied"],
        "not_needed": [status.name for status in statuses if status.state == NOT_NEEDED],
        "skipped": {status.name: status.detail for status in statuses if not status.ok},
        "host_tested": version.host_tested(),
    }
