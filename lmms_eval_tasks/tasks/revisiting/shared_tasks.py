"""The hooks of TDIUC, TallyQA and DVQA, one set told which dataset (``datasets.RevisitingDataset``); VQDv1
shares the image and prepared-data helpers. Prompt and protocol variables: docs/revisiting.md."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lmms_eval_tasks import environment
from lmms_eval_tasks.framework.hook_factory import TaskHooks
from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.framework.registry import Behaviour, Scorer
from lmms_eval_tasks.tasks.revisiting import prompt_env, resolve_template
from lmms_eval_tasks.tasks.revisiting.datasets import RevisitingDataset


def visual_hook(dataset: str):
    """The ``doc_to_visual`` of ``dataset`` (tdiuc, tallyqa, dvqa, vqdv1): the document's image as RGB, by
    the pack's one loader; a missing or undecodable image raises an error naming the question."""
    from lmms_eval_tasks.framework.dataset_contract import image_of

    def doc_to_visual(doc: Mapping[str, Any]) -> list[Any]:
        return [image_of(dataset, doc, "image", doc.get("question_id", "?"))]

    doc_to_visual.__doc__ = f"The {dataset} question's image as RGB; errors name the question."
    return doc_to_visual


def protocol_option(dataset: str) -> dict[str, str]:
    """``{"protocol": ...}`` from ``LMMS_EVAL_TASKS_<DATASET>_PROTOCOL`` ("default" or "official"), or {}."""
    variable = f"LMMS_EVAL_TASKS_{dataset.upper()}_PROTOCOL"
    value = environment.text(variable)
    if not value:
        return {}
    if value not in ("default", "official"):
        raise ValueError(f"{variable}={value!r}: expected default or official")
    return {"protocol": value}


def prepare_docs_for(dataset: str, columns: tuple[str, ...] | None = None):
    """A ``prepare_docs(dataset, task)``: the prepared folder's data (the bundled parquet for the sample), a
    missing column (of ``columns``, default the row schema's) an error naming the task and the column."""

    def prepare_docs(loaded: Any, task: str) -> Any:
        if task == dataset:
            from lmms_eval_tasks.framework.preparing import load_prepared

            loaded = load_prepared(dataset)
        from lmms_eval_tasks.framework.registry import get_benchmark

        needed = columns or tuple(field.name for field in get_benchmark(dataset).row_schema.fields)
        missing = [column for column in needed if column not in loaded.column_names]
        if missing:
            raise ValueError(
                f"{task}: the dataset has no {', '.join(map(repr, missing))} field(s) "
                f"(columns: {sorted(loaded.column_names)})"
            )
        return loaded

    return prepare_docs


def copy_fields(doc: Mapping[str, Any], fields: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    """The record's dataset fields: ``required`` ones must be present (RecordError), the rest when set."""
    record: dict[str, Any] = {}
    for name in fields:
        value = doc.get(name)
        if value is None:
            if name in required:
                raise RecordError(doc.get("question_id", "?"), name, "missing from the document")
            continue
        record[name] = value
    return record


def prediction_of(results: list[Any]) -> str:
    """The model's text (first result; non-strings are stringified)."""
    prediction = results[0] if results else ""
    return prediction if isinstance(prediction, str) else str(prediction)


def deviations(dataset: RevisitingDataset, task: str) -> list[str]:
    """What makes this run's numbers differ from the paper's protocol, for the pack report."""
    items: list[str] = []
    if task.endswith("_sample"):
        items.append(f"bundled generated sample data, not the {dataset.name} slim subset")
    if protocol_option(dataset.name).get("protocol") == "official":
        items.append("protocol=official: the authors' evaluation script's numbers, its bugs included")
    else:
        items.extend(dataset.deviations)
    if environment.text(prompt_env(dataset.name)):
        items.append(f"prompt overridden by {prompt_env(dataset.name)}")
    items.append(
        "generation without the authors' repetition_penalty=1.2 (the host's wrappers do not take it)"
    )
    return items


class DatasetHooks:
    """A dataset's hooks: the paper's prompt, the target, one ``score`` record per question, the settings
    and deviations in the report, its ``TaskHooks`` (``hooks``)."""

    def __init__(self, dataset: RevisitingDataset) -> None:
        self.dataset = dataset
        self.doc_to_visual = visual_hook(dataset.name)
        self.hooks = TaskHooks(
            dataset.name,
            self.make_record,
            task_settings=self.task_settings,
            prepare_docs=prepare_docs_for(dataset.name),
            report_details=self.report_details,
        )

    def doc_to_text(
        self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
    ) -> str:
        """The question in the paper's prompt for the model (``prompt`` kwarg: hf, llava15 or gpt; only
        ``{question}`` is substituted)."""
        template = resolve_template(self.dataset.name, self.dataset.prompts, lmms_eval_specific_kwargs)
        return template.replace("{question}", str(doc["question"]))

    def doc_to_target(self, doc: Mapping[str, Any]) -> str:
        """The expected answer (shown in the host's samples log)."""
        return str(doc[self.dataset.target_field])

    def make_record(self, doc: Mapping[str, Any], results: list[Any], task: str) -> dict[str, Any]:
        """One ``score`` record: the dataset's fields plus the raw model text."""
        fields = self.dataset.record_fields
        record = copy_fields(doc, fields, fields[:3])
        record["prediction"] = prediction_of(results)
        return record

    def task_settings(self, task: str) -> dict[str, Any]:
        """Scoring options and the prompt in force, recorded in the task's report."""
        return {
            "prompt_override": environment.text(prompt_env(self.dataset.name)) or None,
            **self.dataset.report_settings,
        }

    def report_details(
        self, records: list[dict[str, Any]], metrics: dict[str, Any], task: str, args: Any = None
    ) -> dict[str, Any]:
        """What only a run knows: its deviations, and what the dataset adds (``report_details``)."""
        details = {"deviations": deviations(self.dataset, task)}
        if self.dataset.report_details is not None:
            details.update(self.dataset.report_details(records, metrics, task, args))
        return details

    def behaviour(self, score: Scorer, per_question: Scorer, report_section: Callable[..., Any]) -> Behaviour:
        """The dataset's ``Behaviour``: its scorer, per-question correctness and report section; the rest
        (hooks, options, parsers, random answers, generated files, launch check) the family's."""
        from lmms_eval_tasks.tasks.revisiting.generate import dataset_files

        name = self.dataset.name

        def generated_files() -> dict[str, str | bytes]:  # a function of this package: taskgen finds its root
            return dataset_files(name)

        return Behaviour(
            score=score,
            task_options=lambda task: protocol_option(name),
            per_question=per_question,
            random_answer=self.dataset.random_answer,
            generated_files=generated_files,
            parsers=self.dataset.parsers,
            screening=self.dataset.screening,
            report_section=report_section,
            launch_check=self.dataset.launch_check,
            hooks=self.hooks,
        )
