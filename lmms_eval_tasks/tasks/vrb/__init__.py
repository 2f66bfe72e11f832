"""VRB: VQA accuracy under 14 image corruptions x 5 severities, the robustness sub-metrics and VRE."""

from lmms_eval_tasks.framework.dataset_contract import RowField, RowSchema
from lmms_eval_tasks.framework.records import RecordField, RecordSchema
from lmms_eval_tasks.framework.registry import DEFAULT_COUNT_KEYS, Benchmark

RECORD_SCHEMA = RecordSchema(
    fields=(
        RecordField("question_id", "id"),
        RecordField("answers", "list", doc="the ten human answers (strings)"),
        RecordField("multiple_choice_answer", "str"),
        RecordField("question_type", "str"),
        RecordField("answer_type", "str"),
        RecordField(
            "corruption",
            "str",
            choices="lmms_eval_tasks.tasks.vrb.scoring:known_corruptions",
            doc="'clean' or a corruption name of the engine (a misspelt name would drop cells silently)",
        ),
        RecordField("severity", "int", choices=(0, 1, 2, 3, 4, 5), doc="0 = clean"),
        RecordField("prediction", "str", nullable=True, doc="the model's raw output (null = no output)"),
    ),
    identity=("question_id", "corruption", "severity"),
    identity_key="lmms_eval_tasks.tasks.vrb.scoring:record_identity",
    example=tuple(
        {
            "question_id": 1,
            "answers": ["two"] * 10,
            "multiple_choice_answer": "two",
            "question_type": "how many",
            "answer_type": "number",
            "corruption": corruption,
            "severity": severity,
            "prediction": prediction,
        }
        for corruption, severity, prediction in (
            ("clean", 0, "two"),
            ("brightness", 1, "2"),
            ("brightness", 2, "three"),
        )
    ),
)

# The dataset contract: the columns the hooks read from a row (docs/vrb.md).
ROW_SCHEMA = RowSchema(
    fields=(
        RowField("question_id", "id"),
        RowField("question", "text"),
        RowField("image", "image"),
        RowField("image_id", "id", doc="the corruption seed is derived from it"),
        RowField("multiple_choice_answer", "str"),
        RowField("question_type", "str"),
        RowField("answer_type", "str"),
        RowField("answers", "list", doc="the ten human answers"),
    ),
    identity=("question_id",),
    image_note="no EXIF orientation: the authors' loaders open files with PIL.Image.open(...).convert('RGB') "
    "and the annotations (boxes, sizes) are in the stored pixel layout",
)

HEADLINE_METRICS = tuple(
    "accuracy accuracy_clean relative_accuracy_drop first_drop range_of_error error_rate average_error "
    "average_difference".split()
)
BENCHMARK = Benchmark(
    name="vrb",
    title="Visual Robustness Benchmark, VRB (WACV 2025, arXiv 2407.03386)",
    description="VQAv2 under 14 corruptions x 5 severities: accuracy per level, First-Drop, Range of Error, "
    "Error Rate, Average Error, Average Difference, VRE",
    record_schema=RECORD_SCHEMA,
    behaviour="lmms_eval_tasks.tasks.vrb.behaviour",
    row_schema=ROW_SCHEMA,
    headline_metrics=HEADLINE_METRICS,
    # a null prediction scores as a wrong answer (docs/vrb.md): every one is a report warning
    count_keys=(*DEFAULT_COUNT_KEYS, "missing_predictions"),
    sample_tasks=("vrb_sample",),
    # across levels only: a level task has its accuracy (the clean level also accuracy_clean)
    group_metrics=(*HEADLINE_METRICS[1:], "accuracy_average", "vre"),
    docs="docs/vrb.md",
)
