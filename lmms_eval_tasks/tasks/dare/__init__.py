"""DARE: multiple-choice VQA along four robustness axes (prompts, output formats, option sets, #correct)."""

from lmms_eval_tasks.framework.dataset_contract import RowField, RowSchema, ScoringUnit
from lmms_eval_tasks.framework.records import RecordField, RecordSchema
from lmms_eval_tasks.framework.registry import Benchmark

_OPTION_TEXT = "the text of option {}"
_EXAMPLE = {
    "id": "q1",
    "instance_id": 1,
    "category": "count",
    "setup": "single",
    "answer": ["B"],
    "A": "1",
    "B": "2",
    "C": "3",
    "D": "4",
    "format": "gen",
    "prompt": 1,
    "prediction": "B",
}
RECORD_SCHEMA = RecordSchema(
    fields=(
        RecordField("id", "id"),
        RecordField("setup", "str", choices=("single", "single_var", "multi")),
        RecordField("format", "str", choices=("gen", "log", "json", "inv", "csv", "word", "binary")),
        RecordField("prompt", "id", doc="prompt number 1, 2 or 3 ('p1' accepted)"),
        RecordField("category", "str", doc="a DARE category (aliases accepted; checked by the scorer)"),
        *(RecordField(letter, "str", nullable=True, doc=_OPTION_TEXT.format(letter)) for letter in "ABCD"),
        RecordField("answer", "strings", doc="the correct letters or option texts"),
        RecordField("instance_id", "id", required=False, nullable=True, doc="single_var needs it"),
        RecordField("extra_options", "str", required=False, nullable=True, doc="multi: all, none, all_none"),
        RecordField("option", "str", required=False, nullable=True, doc="binary: the option asked"),
        RecordField("prediction", "str", nullable=True, doc="the model's raw output (null = no output)"),
    ),
    identity=("setup", "format", "prompt", "extra_options", "category", "id", "option"),
    identity_key="lmms_eval_tasks.tasks.dare.scoring:record_identity",
    example=(_EXAMPLE, {**_EXAMPLE, "id": "q2", "instance_id": 2, "answer": ["A"], "prediction": "C"}),
)

# The dataset contract: the columns the hooks read from a row (docs/dare.md).
ROW_SCHEMA = RowSchema(
    fields=(
        RowField("id", "id"),
        RowField("question", "text"),
        *(RowField(letter, "str", nullable=True, doc=_OPTION_TEXT.format(letter)) for letter in "ABCD"),
        RowField("category", "text"),
        RowField("img", "image"),
        RowField("answer", "strings", needed_by="lmms_eval_tasks.tasks.dare.grid:reads_answer"),
        RowField("instance_id", "id", needed_by="lmms_eval_tasks.tasks.dare.grid:reads_instance_id"),
    ),
    identity=("id",),
    units=(
        ScoringUnit(
            "question",
            key=("id",),
            needed_by="lmms_eval_tasks.tasks.dare.grid:asks_each_option",
            why="a binary task asks each of a question's four options; its exact match needs all four",
        ),
        ScoringUnit(
            "instance",
            key=("instance_id",),
            needed_by="lmms_eval_tasks.tasks.dare.grid:reads_instance_id",
            why="the worst case over option sets needs every variant of an instance",
        ),
    ),
    exif_transpose=True,
    image_note="EXIF orientation applied: the Hub data as the datasets library decodes it (host loader)",
)

BENCHMARK = Benchmark(
    name="dare",
    title="DARE (arXiv 2409.18023)",
    description="multiple-choice VQA along four robustness axes: prompts, output formats, option sets, "
    "number of correct answers",
    record_schema=RECORD_SCHEMA,
    behaviour="lmms_eval_tasks.tasks.dare.behaviour",
    row_schema=ROW_SCHEMA,
    headline_metrics=(
        "single_accuracy",
        "single_accuracy_std_over_prompts",
        "single_var_accuracy",
        "multi_exact_k0",
        "multi_exact_k2",
        "multi_exact_k4",
        "multi_f1",
        "unparsed",
    ),
    sample_tasks=("dare_sample",),
    # across a group's prompts / formats / option variants only: NaN on one setup's task
    group_metrics=(
        "single_accuracy_std_over_prompts",
        "multi_f1_std_over_prompts",
        "single_format_range",
        "single_var_drop",
    ),
    docs="docs/dare.md",
)
