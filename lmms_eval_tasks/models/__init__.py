"""The pack's models, registered with lmms-eval through the ``lmms_eval.models`` entry point (cheap to
import: the classes load when a run asks for them; ``tiny_llava`` is a builder, not a model class)."""

from __future__ import annotations

from typing import Any

# model name -> "module.Class" (simple models: the harness passes text prompts and visual callables)
SIMPLE_MODELS: dict[str, str] = {
    "random_guess": "lmms_eval_tasks.models.random_guess.RandomGuess",
    # LLaVA-1.5/1.6 on transformers with the host llava wrapper's arguments; serves `--model llava` when the
    # original LLaVA code cannot import (lmms_eval_tasks/host/substitution.py)
    "llava_transformers": "lmms_eval_tasks.models.llava_transformers.LlavaTransformers",
}

# model name -> "module.Class" (chat models: the harness passes doc_to_messages)
CHAT_MODELS: dict[str, str] = {
    # the host's `openai` client with payloads built in parallel and each image encoded once (docs/models.md)
    "openai_pipelined": "lmms_eval_tasks.models.openai_pipelined.OpenAIPipelined",
}

# The host's legacy `LMMS_EVAL_PLUGINS=lmms_eval_tasks` switch reads {name: "Class"} and imports
# `lmms_eval_tasks.models.<name>.<Class>`: derived from SIMPLE_MODELS (whose modules carry the model's name).
AVAILABLE_MODELS: dict[str, str] = {name: path.rsplit(".", 1)[1] for name, path in SIMPLE_MODELS.items()}

PLUGIN_TASKS_NOTE = (
    "lmms-eval-tasks: LMMS_EVAL_PLUGINS loads the pack's models only; the pack's tasks need the "
    "`lmms_eval` launcher (or `lmms-eval --include_path $(lmms-eval-tasks tasks-dir)`)"
)


def _note_plugin_switch() -> None:
    """Say once, on stderr, that the plugin switch brings no pack tasks (unless the launcher is running)."""
    import os
    import sys

    plugins = [name.strip() for name in os.environ.get("LMMS_EVAL_PLUGINS", "").split(",")]
    if __package__.split(".")[0] in plugins and "lmms_eval_tasks.host.launcher" not in sys.modules:
        print(PLUGIN_TASKS_NOTE, file=sys.stderr)


_note_plugin_switch()


def model_manifests() -> list[Any]:
    """The ``ModelManifest``s the host's registry loads from our entry point."""
    from lmms_eval.models.registry_v2 import ModelManifest

    simple = [ModelManifest(model_id=name, simple_class_path=path) for name, path in SIMPLE_MODELS.items()]
    return simple + [ModelManifest(model_id=name, chat_class_path=path) for name, path in CHAT_MODELS.items()]


__all__ = ["AVAILABLE_MODELS", "CHAT_MODELS", "SIMPLE_MODELS", "model_manifests"]
