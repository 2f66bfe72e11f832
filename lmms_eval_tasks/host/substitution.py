"""`--model llava` without the original LLaVA code: served by the pack's LLaVA on transformers, said in one
line and recorded in every report (docs/models.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lmms_eval_tasks.host.argv import parse_model_args
from lmms_eval_tasks.host.llava_checkpoints import DEFAULT_ORIGINAL_LLAVA, ORIGINAL_TO_HF_CHECKPOINTS
from lmms_eval_tasks.reporting import model_substitution
from lmms_eval_tasks.reporting.model_substitution import (  # noqa: F401  (the record lives in reporting)
    USED_CLASS,
    active,
    deviation,
    record_checkpoint,
)

NO_SUBSTITUTION_ENV = "LMMS_EVAL_TASKS_NO_SUBSTITUTION"
ASKED_MODEL = "llava"
USED_MODEL = "llava_transformers"

_ORIGINAL_ORGANISATION = "liuhaotian/"

# The host llava wrapper's keyword arguments and what the pack's model does with each (docs/models.md).
HONOURED_ARGS = (
    "pretrained",
    "device",
    "device_map",
    "attn_implementation",
    "use_cache",
    "tie_weights",
    "conv_template",
)
ACCEPTED_WITHOUT_EFFECT = (
    "truncation",
    "truncate_context",
    "model_name",
)  # the host stores them, never reads
REFUSED_ARGS = {
    "customized_config": "it overrides the original code's model config, which the transformers "
    "conversion does not use",
}
# conv_template values the pack renders exactly as the original code's conversation templates do.
CONVERSATION_SYSTEMS: dict[str, str] = {
    "vicuna_v1": "A chat between a curious user and an artificial intelligence assistant. "
    "The assistant gives helpful, detailed, and polite answers to the user's questions.",
    "llava_v1": "A chat between a curious human and an artificial intelligence assistant. "
    "The assistant gives helpful, detailed, and polite answers to the human's questions.",
}
DEFAULT_CONV_TEMPLATE = "vicuna_v1"


class SubstitutionError(ValueError):
    """A ``--model llava`` argument the pack's LLaVA cannot honour (one line, with the fix)."""


def disabled() -> bool:
    """True when ``LMMS_EVAL_TASKS_NO_SUBSTITUTION`` asks for the original LLaVA code only."""
    from lmms_eval_tasks import environment

    return environment.flag(NO_SUBSTITUTION_ENV)


def resolve_checkpoint(pretrained: str | None) -> str:
    """The transformers checkpoint for the host llava's ``pretrained`` (its default when None): an original
    name's conversion, else a local folder or Hub name as given; other original or bare names raise."""
    name = DEFAULT_ORIGINAL_LLAVA if pretrained is None else str(pretrained).strip()
    if not name:  # e.g. pretrained=$CHECKPOINT with the variable unset: never fall back to the default
        raise SubstitutionError(
            "--model llava: pretrained= is empty; give an original name "
            f"(e.g. pretrained={DEFAULT_ORIGINAL_LLAVA}), a local folder or a Hub name, or drop the key "
            "for the host's default"
        )
    stripped = name.rstrip("/")
    if stripped in ORIGINAL_TO_HF_CHECKPOINTS:
        return ORIGINAL_TO_HF_CHECKPOINTS[stripped]
    if Path(name).expanduser().exists():
        return str(Path(name).expanduser())
    if name.startswith(("/", ".", "~")) or "\\" in name or stripped.count("/") > 1:
        raise SubstitutionError(
            f"--model llava: pretrained={name} is no folder on this machine and not a Hub name "
            "(organisation/name); fix the path, or give a Hub name such as llava-hf/llava-1.5-7b-hf"
        )
    if stripped.startswith(_ORIGINAL_ORGANISATION) or "/" not in stripped:
        raise SubstitutionError(
            f"--model llava: no transformers conversion is known for pretrained={name}; known original "
            f"names: {', '.join(ORIGINAL_TO_HF_CHECKPOINTS)}; or give a local folder or Hub name of a "
            "transformers-format LLaVA (e.g. pretrained=llava-hf/llava-1.5-7b-hf)"
        )
    return stripped


def check_model_args(arguments: Mapping[str, Any]) -> None:
    """Raise ``SubstitutionError`` for a ``--model_args`` key or value the pack's LLaVA cannot honour."""
    for key in arguments:
        if key == "batch_size":  # the host passes --batch_size to every model as well
            raise SubstitutionError(
                "--model llava: batch_size in --model_args fails on this host (it also passes --batch_size "
                "to the model: 'got multiple values for keyword argument'); drop it (the pack's LLaVA "
                "answers one request at a time, --batch_size 1)"
            )
        if key in REFUSED_ARGS:
            raise SubstitutionError(
                f"--model llava: model_args {key} is refused by the pack's LLaVA on transformers: "
                f"{REFUSED_ARGS[key]}; drop it, or run the original code ({NO_SUBSTITUTION_ENV}=1)"
            )
        if key not in HONOURED_ARGS and key not in ACCEPTED_WITHOUT_EFFECT:
            known = ", ".join((*HONOURED_ARGS, *ACCEPTED_WITHOUT_EFFECT))
            raise SubstitutionError(
                f"--model llava: unknown model_args key {key!r} (the host's llava wrapper refuses it too); "
                f"accepted keys: {known}"
            )
    template = arguments.get("conv_template")
    if template is not None and str(template) not in CONVERSATION_SYSTEMS:
        raise SubstitutionError(
            f"--model llava: conv_template={template} is not rendered by the pack's LLaVA on transformers "
            f"(supported: {', '.join(CONVERSATION_SYSTEMS)}); use --model llava_hf with the checkpoint's "
            f"own chat template, or run the original code ({NO_SUBSTITUTION_ENV}=1)"
        )
    resolve_checkpoint(None if arguments.get("pretrained") is None else str(arguments["pretrained"]))


def register(checkpoint: str | None, asked_checkpoint: str | None) -> None:
    """Point the host registry's ``llava`` at the pack's model and remember the substitution."""
    from lmms_eval.models import MODEL_REGISTRY_V2
    from lmms_eval.models.registry_v2 import ModelManifest

    manifest = ModelManifest(model_id=ASKED_MODEL, simple_class_path=USED_CLASS)
    MODEL_REGISTRY_V2.register_manifest(manifest, overwrite=True)
    substitution = {"asked": ASKED_MODEL, "used": USED_MODEL, "checkpoint": checkpoint}
    model_substitution.set_active({**substitution, "asked_checkpoint": asked_checkpoint})


def prepare(
    requested_models: Sequence[str], model_args: str | None | Sequence[str | None]
) -> tuple[str | None, str | None]:
    """Substitute ``--model llava`` when its original code does not import: (one-line notice, error), both
    None otherwise; ``model_args``: each ``llava`` run's, each checked."""
    if ASKED_MODEL not in requested_models or disabled():
        return None, None
    from lmms_eval_tasks.host.model_availability import wrapper_status

    if wrapper_status(ASKED_MODEL).ok:
        return None, None
    runs = [model_args] if model_args is None or isinstance(model_args, str) else list(model_args)
    mappings: list[str] = []
    for text in runs or [None]:
        arguments = parse_model_args(text)
        try:
            check_model_args(arguments)
        except SubstitutionError as error:
            return None, f"lmms_eval: {error}"
        asked = DEFAULT_ORIGINAL_LLAVA if "pretrained" not in arguments else arguments["pretrained"]
        mapping = f"pretrained={asked} -> {resolve_checkpoint(asked)}"
        if mapping not in mappings:
            mappings.append(mapping)
    first = parse_model_args(runs[0] if runs else None).get("pretrained", DEFAULT_ORIGINAL_LLAVA)
    register(resolve_checkpoint(first), first)  # each model build records its own (record_checkpoint)
    from lmms_eval_tasks.documentation import doc

    notice = (
        f"lmms_eval: --model llava is served by the pack's LLaVA on transformers ({USED_MODEL}), because the "
        f"original LLaVA code does not import here: {'; '.join(mappings)} "
        f"({doc('models.md')}; {NO_SUBSTITUTION_ENV}=1 refuses instead)"
    )
    return notice, None
