"""The DARE task grid: every task (``dare[_sample|_test]_<setup>_<format>_p<prompt>`` and the multi variants)
and group, their metric keys, and the files ``make generate`` writes from them (docs/dare.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lmms_eval_tasks.framework.taskgen import (
    Function,
    GroupYaml,
    TaskYaml,
    render_group,
    templated_files,
)
from lmms_eval_tasks.tasks.dare.scoring import GOLD_COUNTS, PROMPTS, TABLE_COLUMNS, multi_variant

TASK_DIR = Path(__file__).resolve().parent
FOLDER = "lmms_eval_tasks/tasks/dare"
HOOKS = "lmms_eval_tasks.tasks.dare.hooks"
DOCS_MODULE = "lmms_eval_tasks.tasks.dare.task_docs"
SOURCE = "lmms_eval_tasks/tasks/dare/grid.py"
CONFIG_OF_SETUP = {"single": "1_correct", "single_var": "1_correct_var", "multi": "n_correct"}
SOURCES = ("validation", "test", "sample")
# Categories present in each source's scorable split (culture exists only in test; VCR has no
# variations and no multi-correct setup); per-category metric keys exist for these only.
CATEGORIES = {
    ("validation", "single"): ("count", "order", "vcr", "trick"),
    ("validation", "single_var"): ("count", "order", "trick"),
    ("validation", "multi"): ("count", "order", "trick"),
    ("sample", "single"): ("count", "order"),
    ("sample", "single_var"): ("count", "order"),
    ("sample", "multi"): ("count", "order"),
}
# Metrics whose value is better when lower.
LOWER_IS_BETTER_PREFIXES = (
    "single_accuracy_std",
    "single_format_range",
    "single_var_drop",
    "multi_f1_std",
    "unparsed",
    "single_multiple_letters",
    "multi_contradictory",
)


@dataclass(frozen=True)
class TaskSpec:
    """One lmms-eval task: a setup, an output format, a prompt number, a multi variant, a data source."""

    setup: str
    answer_format: str
    prompt: int
    source: str = "validation"
    extra_options: str | None = None

    @property
    def variant(self) -> str:
        return multi_variant({"format": self.answer_format, "extra_options": self.extra_options})

    @property
    def name(self) -> str:
        prefix = {"validation": "dare", "test": "dare_test", "sample": "dare_sample"}[self.source]
        if self.variant != "standard":
            return f"{prefix}_multi_{self.variant}_p{self.prompt}"
        return f"{prefix}_{self.setup}_{self.answer_format}_p{self.prompt}"

    @property
    def config(self) -> str:
        return CONFIG_OF_SETUP[self.setup]

    @property
    def split(self) -> str:
        return "test" if self.source == "test" else "validation"

    @property
    def scored(self) -> bool:
        """Test answers are withheld: test tasks only generate and export predictions."""
        return self.source != "test"

    def metric_keys(self) -> list[str]:
        """The metric keys this task reports (the same keys its groups aggregate over all members)."""
        if not self.scored:
            return ["exported", "unparsed"]
        categories = CATEGORIES[(self.source, self.setup)]
        if self.setup == "single":
            headline = ["single_accuracy", "single_accuracy_std_over_prompts", "single_format_range"]
            return _with_categories(headline, categories) + ["unparsed", "single_multiple_letters"]
        if self.setup == "single_var":
            return _with_categories(["single_var_accuracy", "single_var_drop"], categories) + ["unparsed"]
        if self.variant == "standard":
            headline = [*(f"multi_exact_k{count}" for count in GOLD_COUNTS), "multi_f1"]
            return _with_categories(headline, categories) + ["multi_f1_std_over_prompts", "unparsed"]
        keys = [
            *(f"multi_{self.variant}_exact_k{count}" for count in GOLD_COUNTS),
            f"multi_{self.variant}_f1",
            "unparsed",
        ]
        return keys + (["multi_contradictory"] if self.extra_options else [])

    def result_keys(self) -> list[str]:
        """The keys the task's YAML lists (its headline numbers, at most eight); per-category and every
        other number are in the pack's report and in `score`."""
        return [key for key in self.metric_keys() if "__" not in key]


def _with_categories(keys: list[str], categories: tuple[str, ...]) -> list[str]:
    assert all(key in TABLE_COLUMNS for key in keys)
    return keys + [f"{key}__{category}" for key in keys for category in categories]


def main_grid(source: str) -> list[TaskSpec]:
    """The paper's main grid: single (Gen/Log/JSON x 3 prompts, Inv/CSV/Word), single+var and multi."""
    tasks = [
        TaskSpec("single", answer_format, prompt, source)
        for answer_format in ("gen", "log", "json")
        for prompt in PROMPTS
    ]
    tasks += [TaskSpec("single", answer_format, 1, source) for answer_format in ("inv", "csv", "word")]
    for setup in ("single_var", "multi"):
        tasks += [
            TaskSpec(setup, answer_format, prompt, source)
            for answer_format in ("gen", "log", "json")
            for prompt in PROMPTS
        ]
    return tasks


def multi_variants(source: str) -> list[TaskSpec]:
    """The paper's multi-correct variants: binary per-option decisions, +all / +none / +all+none options."""
    return [TaskSpec("multi", "binary", 1, source)] + [
        TaskSpec("multi", "gen", 1, source, extra) for extra in ("all", "none", "all_none")
    ]


def all_tasks() -> list[TaskSpec]:
    return [task for source in SOURCES for task in main_grid(source) + multi_variants(source)]


TASKS_BY_NAME: dict[str, TaskSpec] = {task.name: task for task in all_tasks()}


def reads_answer(task: str) -> bool:
    """True when ``task``'s hooks read the ``answer`` column (scored tasks; the test split's are withheld)."""
    return TASKS_BY_NAME[task].scored


def asks_each_option(task: str) -> bool:
    """True for binary tasks: one document per option of a question (its scoring unit is the question)."""
    return TASKS_BY_NAME[task].answer_format == "binary"


def reads_instance_id(task: str) -> bool:
    """True when ``task``'s hooks read ``instance_id`` (single_var groups a question's variants by it)."""
    return TASKS_BY_NAME[task].setup == "single_var"


def groups() -> dict[str, list[str]]:
    """Group name -> member task names (groups hold tasks only, so each group scores its own union); the
    groups are listed in docs/dare.md."""
    validation = main_grid("validation")
    generation = [task.name for task in validation if task.answer_format != "log"]
    log = [task.name for task in validation if task.answer_format == "log"]
    variants = [task.name for task in multi_variants("validation")]
    result = {
        "dare": generation,
        "dare_log": log,
        "dare_multi_variants": variants,
        "dare_full": generation + log + variants,
        "dare_single": [task.name for task in validation if task.setup == "single"],
        "dare_single_var": [task.name for task in validation if task.setup == "single_var"],
        "dare_multi": [task.name for task in validation if task.setup == "multi"] + variants,
        "dare_single_formats": [
            task.name for task in validation if task.setup == "single" and task.prompt == 1
        ],
    }
    for answer_format in ("gen", "json"):
        result[f"dare_{answer_format}"] = [
            task.name for task in validation if task.answer_format == answer_format
        ]
    for prompt in PROMPTS:
        result[f"dare_p{prompt}"] = [task.name for task in validation if task.prompt == prompt]
    result["dare_test"] = [task.name for task in main_grid("test") + multi_variants("test")]
    sample = main_grid("sample")
    sample_variants = [task.name for task in multi_variants("sample")]
    result["dare_sample"] = [task.name for task in sample if task.answer_format != "log"] + sample_variants
    result["dare_sample_log"] = [task.name for task in sample if task.answer_format == "log"]
    result["dare_sample_full"] = [task.name for task in sample] + sample_variants
    return result


def higher_is_better(key: str) -> bool:
    return key != "exported" and not key.startswith(LOWER_IS_BETTER_PREFIXES)


_SETUP_WORDS = {
    "single": "single-correct",
    "single_var": "single-correct with option variations (worst case)",
    "multi": "multi-correct (0-4 correct)",
}
_FORMAT_WORDS = {
    "gen": "Out-Gen",
    "log": "Out-Log (option scores)",
    "json": "Out-JSON",
    "inv": "Out-Inv",
    "csv": "Out-CSV",
    "word": "Out-Word",
    "binary": "binary per-option yes/no",
}
_SOURCE_WORDS = {"validation": "validation", "test": "test (export only)", "sample": "bundled sample"}
_GROUP_WORDS = {
    "dare": "DARE main grid (generation formats, all prompts and setups)",
    "dare_log": "DARE Out-Log tasks (loglikelihood; chat models need --force_simple)",
    "dare_multi_variants": "DARE multi-correct variants: binary decisions, +all/+none options",
    "dare_full": "every DARE validation task (main grid, Out-Log, variants)",
    "dare_single": "DARE single-correct setup, all formats and prompts",
    "dare_single_var": "DARE single-correct with option variations",
    "dare_multi": "DARE multi-correct setup and its variants",
    "dare_single_formats": "DARE single-correct, prompt 1, every output format",
    "dare_gen": "DARE Out-Gen tasks",
    "dare_json": "DARE Out-JSON tasks",
    "dare_test": "DARE test split: prediction export only (answers withheld)",
    "dare_sample": "DARE main grid on the bundled sample data",
    "dare_sample_log": "DARE Out-Log tasks on the bundled sample data",
    "dare_sample_full": "every DARE task on the bundled sample data",
}


def task_description(task: TaskSpec) -> str:
    """One line for `lmms-eval-tasks tasks`."""
    extra = f", +{task.extra_options.replace('_', '+')} option" if task.extra_options else ""
    return (
        f"DARE {_SETUP_WORDS[task.setup]}, {_FORMAT_WORDS[task.answer_format]}{extra}, prompt {task.prompt}, "
        f"{_SOURCE_WORDS[task.source]}"
    )


def group_description(group: str) -> str:
    """One line for `lmms-eval-tasks tasks`."""
    if group in _GROUP_WORDS:
        return _GROUP_WORDS[group]
    if group.startswith("dare_p"):
        return f"DARE tasks with prompt {group.removeprefix('dare_p')}"
    return f"DARE group {group}"


# What every generating DARE task shares, and what the Out-Log tasks change (TEMPLATES says why).
GENERATE_SETTINGS = {
    "output_type": "generate_until",
    "doc_to_visual": Function(f"{HOOKS}.doc_to_visual"),
    "doc_to_text": Function(f"{HOOKS}.doc_to_text"),
    "doc_to_target": Function(f"{HOOKS}.doc_to_target"),
    "process_results": Function(f"{HOOKS}.process_results"),
    "generation_kwargs": {"max_new_tokens": 64, "temperature": 0, "do_sample": False},
}
LOG_SETTINGS = {
    **GENERATE_SETTINGS,
    "output_type": "multiple_choice",
    "doc_to_choice": Function(f"{HOOKS}.doc_to_choice"),
    "target_delimiter": "",
}
TEMPLATES = {
    "_dare_template_yaml": "Shared by every generating DARE task; each task file holds only what differs. "
    "See dare.md in the pack's documentation.",
    "_dare_log_template_yaml": "Shared by the Out-Log DARE tasks: one loglikelihood request per candidate "
    "answer (the\nletters A-D, or the 16 answer sets of the multi-correct setup); the lowest loss is the "
    "model's choice.\nThe wrappers put the continuation in the assistant turn, so no leading space "
    "(target_delimiter).",
}


def task_spec(task: TaskSpec) -> TaskYaml:
    """The task's YAML description (hooks are shared; the task's identity reaches them via process_docs)."""
    if task.source == "sample":
        data = {
            "dataset_path": "parquet",
            "dataset_kwargs": {"data_files": {"validation": f"sample/{task.config}_validation.parquet"}},
        }
    else:
        data = {"dataset_path": "cambridgeltl/DARE", "dataset_name": task.config}
    shared = LOG_SETTINGS if task.answer_format == "log" else GENERATE_SETTINGS
    return TaskYaml(
        task=task.name,
        hooks=HOOKS,
        metrics=[(key, higher_is_better(key)) for key in task.result_keys()],
        fields={**data, **shared, f"{task.split}_split": task.split},
        docs_module=DOCS_MODULE,
        description=task_description(task),
        version=0.1,
    )


def task_files() -> dict[str, str]:
    """{repository path: text} of the two templates and every task's stub (``yaml/<source>/<task>.yaml``)."""
    files: dict[str, str] = {}
    for template, comment in TEMPLATES.items():
        log = template == "_dare_log_template_yaml"
        specs = [task_spec(task) for task in all_tasks() if (task.answer_format == "log") == log]
        files.update(
            templated_files(
                FOLDER,
                SOURCE,
                specs,
                f"yaml/{template}",
                lambda name: f"{FOLDER}/yaml/{TASKS_BY_NAME[name].source}/{name}.yaml",
                comment=comment,
            )
        )
    return files


def group_spec(group: str) -> GroupYaml:
    """A group scored on the union of its members' records; it lists the headline metrics its members report
    (every other number is in the group's pack report)."""
    from lmms_eval_tasks.tasks.dare import BENCHMARK

    member_keys = {key for name in groups()[group] for key in TASKS_BY_NAME[name].metric_keys()}
    keys = [key for key in BENCHMARK.headline_metrics if key in member_keys] or ["exported", "unparsed"]
    return GroupYaml(
        group=group,
        members=groups()[group],
        hooks=HOOKS,
        metrics=[(key, higher_is_better(key)) for key in keys],
        description=group_description(group),
        version=0.1,
        docs_module=DOCS_MODULE,
    )


def expected_files() -> dict[Path, str]:
    """Every generated YAML path (relative to the task folder) and its content."""
    files = {Path(path).relative_to(FOLDER): text for path, text in task_files().items()}
    files.update(
        {Path("yaml/groups") / f"{group}.yaml": render_group(group_spec(group), SOURCE) for group in groups()}
    )
    return files


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} of every generated DARE file: YAML, task_docs.py, the sample."""
    from lmms_eval_tasks.framework.taskgen import task_docs_module
    from lmms_eval_tasks.tasks.dare import make_sample

    files: dict[str, str | bytes] = {
        f"{FOLDER}/{relative.as_posix()}": content for relative, content in expected_files().items()
    }
    files[f"{FOLDER}/task_docs.py"] = task_docs_module(HOOKS, SOURCE)
    for path, content in make_sample.sample_files().items():
        files[f"{FOLDER}/sample/{path}"] = content
    return files
