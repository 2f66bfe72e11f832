"""VRB's config: the one reader of its ``LMMS_EVAL_TASKS_VRB_*`` variables (profile, seed, images, protocol,
prompt; docs/configuration.md), and its scoring options."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks import environment

PROFILE_ENV = "LMMS_EVAL_TASKS_VRB_PROFILE"
SEED_ENV = "LMMS_EVAL_TASKS_VRB_SEED"
IMAGES_ENV = "LMMS_EVAL_TASKS_VRB_IMAGES"
PROTOCOL_ENV = "LMMS_EVAL_TASKS_VRB_PROTOCOL"
PROMPT_ENV = "LMMS_EVAL_TASKS_VRB_PROMPT"
DEFAULT_IMAGES = 3000  # the paper's subset: 3,000 val2014 images with all their questions (~16,000)
PROMPTS = ("vrb_llava", "vqav2")


def run_parameters() -> dict[str, Any]:
    """Profile, seed, subset size, protocol and prompt override of this run (validated): read once per host
    run (the hooks ask for them for every document), kept in the run's state."""
    from lmms_eval_tasks.framework.run_state import current_run

    return dict(current_run().config("vrb", read_run_parameters))


def read_run_parameters() -> dict[str, Any]:
    """``run_parameters`` read from the environment now."""
    from lmms_eval_tasks.corruptions import PROFILES
    from lmms_eval_tasks.tasks.vrb.scoring import PROTOCOLS

    profile = environment.text(PROFILE_ENV) or "vrb"
    if profile not in PROFILES:
        raise ValueError(f"{PROFILE_ENV}={profile!r}: expected one of {list(PROFILES)}")
    protocol = environment.text(PROTOCOL_ENV) or "paper"
    if protocol not in PROTOCOLS:
        raise ValueError(f"{PROTOCOL_ENV}={protocol!r}: expected one of {list(PROTOCOLS)}")
    prompt = environment.text(PROMPT_ENV) or None
    if prompt is not None and prompt not in PROMPTS:
        raise ValueError(f"{PROMPT_ENV}={prompt!r}: expected one of {list(PROMPTS)}")
    return {
        "profile": profile,
        "seed": environment.integer(SEED_ENV, 0, 0),
        "subset_images": environment.integer(IMAGES_ENV, DEFAULT_IMAGES, 1),
        "protocol": protocol,
        "prompt_override": prompt,
    }


def score_options(task: str = "vrb") -> dict[str, Any]:
    """The ``score`` options of a VRB task or group: ``{"protocol": ...}`` (every level the same)."""
    return {"protocol": run_parameters()["protocol"]}
