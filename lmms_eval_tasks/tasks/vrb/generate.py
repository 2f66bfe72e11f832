"""Every generated file of VRB: the level tasks, the groups (docs/vrb.md), ``task_docs.py`` and the bundled
sample; ``make generate`` writes them, a test fails on drift."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.corruptions import CATEGORIES, VRB_PAPER_CORRUPTIONS
from lmms_eval_tasks.framework.taskgen import (
    Function,
    GroupYaml,
    TaskYaml,
    hook_fields,
    render_group,
    task_docs_module,
    templated_files,
)
from lmms_eval_tasks.tasks.vrb import BENCHMARK, make_sample
from lmms_eval_tasks.tasks.vrb.scoring import SUB_METRICS

FOLDER = "lmms_eval_tasks/tasks/vrb"
HOOKS = "lmms_eval_tasks.tasks.vrb.hooks"
DOCS_MODULE = "lmms_eval_tasks.tasks.vrb.task_docs"
SOURCE = "lmms_eval_tasks/tasks/vrb/generate.py"
LOWER_IS_BETTER = {"relative_accuracy_drop", *SUB_METRICS}
CLASSES = ("noise", "blur", "weather", "attribute", "physical", "digital")
VQAV2_PROMPT = {
    "prompt": "vqav2",
    "pre_prompt": "",
    "post_prompt": "\nAnswer the question using a single word or phrase.",
}
# Models known to the host's vqav2 task, and every spelling of a server client (the host looks kwargs up by
# the --model string given): they get its VQAv2 prompt; every other model the official LLaVA prompt.
VQAV2_MODELS = (
    "qwen2_vl qwen2_5_vl internvl2 idefics2 phi3v gpt4v openai openai_compatible openai_compatible_chat "
    "async_openai async_openai_compatible async_openai_compatible_chat openai_pipelined claude gemini_api"
).split()
SPECIFIC_KWARGS: dict[str, Any] = {
    "default": {"prompt": "vrb_llava"},
    "llava_hf": {"prompt": "vrb_llava"},
    "llava": {"prompt": "vrb_llava"},
    "llava_onevision": {"prompt": "vrb_llava"},
    **dict.fromkeys(VQAV2_MODELS, VQAV2_PROMPT),
    "plm": {"prompt": "vqav2", "pre_prompt": "", "post_prompt": ""},  # as the host's vqav2 task
}


# The id the host 0.7.3 reads (moved from lmms-lab/), so one cache serves the host and the pack; only the
# validation parquet shards (the repo's `data/validation-*` files), not the testdev/test shards (unused).
VQAV2_DATASET = "lmms-lab-encoder/VQAv2"
VQAV2_VALIDATION_FILES = {"validation": "data/validation-*"}


def level_tasks(prefix: str, corruptions: tuple[str, ...]) -> list[str]:
    """``<prefix>_clean`` then ``<prefix>_<corruption>_s<k>`` for every corruption and severity 1..5."""
    return [f"{prefix}_clean"] + [f"{prefix}_{name}_s{k}" for name in corruptions for k in range(1, 6)]


TASKS = level_tasks("vrb", VRB_PAPER_CORRUPTIONS)
SAMPLE_TASKS = level_tasks("vrb_sample", make_sample.SAMPLE_CORRUPTIONS)


def _describe(task: str) -> str:
    from lmms_eval_tasks.tasks.vrb.hooks import task_level

    corruption, severity = task_level(task)
    where = "bundled sample" if task.startswith("vrb_sample") else "VQAv2 val subset"
    if severity == 0:
        return f"VRB clean level (severity 0), {where}"
    return f"VRB {corruption} severity {severity} (applied when the image loads), {where}"


def _fields(task: str) -> dict[str, Any]:
    if task.startswith("vrb_sample"):
        data: dict[str, Any] = {
            "dataset_path": "parquet",
            "dataset_kwargs": {"data_files": {"validation": f"sample/{make_sample.SAMPLE_FILE}"}},
        }
    else:
        data = {"dataset_path": VQAV2_DATASET, "dataset_kwargs": {"data_files": VQAV2_VALIDATION_FILES}}
    return {
        **data,
        "test_split": "validation",
        **hook_fields(
            HOOKS,
            doc_to_target=Function(f"{HOOKS}.doc_to_target"),
            lmms_eval_specific_kwargs=SPECIFIC_KWARGS,
            generation_kwargs={"max_new_tokens": 16, "temperature": 0, "do_sample": False},
        ),
    }


def _metrics() -> list[tuple[str, bool]]:
    return [(key, key not in LOWER_IS_BETTER) for key in BENCHMARK.headline_metrics]


def task_specs() -> list[TaskYaml]:
    """One TaskYaml per level task (real and sample)."""
    return [
        TaskYaml(
            task=task,
            hooks=HOOKS,
            metrics=_metrics(),
            fields=_fields(task),
            docs_module=DOCS_MODULE,
            description=_describe(task),
        )
        for task in TASKS + SAMPLE_TASKS
    ]


def group_specs() -> list[GroupYaml]:
    """Every VRB group: its members are level tasks (never other groups), so group scoring sees them all."""

    def group(name: str, members: list[str], description: str) -> GroupYaml:
        return GroupYaml(name, members, HOOKS, _metrics(), description=description, docs_module=DOCS_MODULE)

    groups = [
        group("vrb", TASKS, "VRB: clean + 14 corruptions x 5 severities; accuracy per level, sub-metrics")
    ]
    for name in VRB_PAPER_CORRUPTIONS:
        groups.append(
            group(f"vrb_{name}", level_tasks("vrb", (name,)), f"VRB {name}: clean + severities 1..5")
        )
    for severity in range(1, 6):
        members = [f"vrb_{name}_s{severity}" for name in VRB_PAPER_CORRUPTIONS]
        groups.append(group(f"vrb_s{severity}", members, f"VRB: the 14 corruptions at severity {severity}"))
    for corruption_class in CLASSES:
        names = tuple(name for name in VRB_PAPER_CORRUPTIONS if CATEGORIES[name] == corruption_class)
        groups.append(
            group(
                f"vrb_{corruption_class}",
                level_tasks("vrb", names),
                f"VRB {corruption_class} corruptions ({', '.join(names)}): clean + severities 1..5",
            )
        )
    groups.append(
        group("vrb_sample", SAMPLE_TASKS, "VRB bundled sample: clean + 3 corruptions x 5 severities")
    )
    return groups


def _task_path(task: str) -> str:
    where = "sample" if task.startswith("vrb_sample") else "levels"
    return f"{FOLDER}/yaml/{where}/{task}.yaml"


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated VRB file: one template per setting (VQAv2 levels,
    sample levels) and a stub per level task, the groups, ``task_docs.py`` and the sample."""
    specs = task_specs()
    files: dict[str, str | bytes] = {}
    for setting, chosen in (
        ("levels", [spec for spec in specs if not spec.task.startswith("vrb_sample")]),
        ("sample", [spec for spec in specs if spec.task.startswith("vrb_sample")]),
    ):
        files.update(
            templated_files(FOLDER, SOURCE, chosen, f"yaml/_vrb_{setting}_template_yaml", _task_path)
        )
    for spec in group_specs():
        files[f"{FOLDER}/yaml/groups/{spec.group}.yaml"] = render_group(spec, SOURCE)
    files[f"{FOLDER}/task_docs.py"] = task_docs_module(HOOKS, SOURCE)
    for name, content in make_sample.sample_files().items():
        files[f"{FOLDER}/sample/{name}"] = content
    return files
