"""HallusionBench: yes/no image-context reasoning, figure consistency and the hallucination diagnosis."""

from lmms_eval_tasks.framework.dataset_contract import RowField, RowSchema, ScoringUnit
from lmms_eval_tasks.framework.records import RecordField, RecordSchema
from lmms_eval_tasks.framework.registry import Benchmark

RECORD_SCHEMA = RecordSchema(
    fields=(
        RecordField("category", "str", choices=("VD", "VS")),
        RecordField("subcategory", "str", doc="one of its category's subcategories (checked by the scorer)"),
        RecordField("visual_input", "id", choices=("0", "1", "2")),
        RecordField("set_id", "id"),
        RecordField("figure_id", "id"),
        RecordField("question_id", "id"),
        RecordField("question", "str", required=False, nullable=True),
        RecordField("gt_answer", "id", choices=("0", "1"), doc="'1' = yes, '0' = no"),
        RecordField("gt_answer_details", "str", required=False, nullable=True),
        RecordField("prediction", "str", nullable=True, doc="the model's raw output (null = no output)"),
    ),
    identity=("category", "subcategory", "set_id", "figure_id", "question_id"),
    example=tuple(
        {
            "category": "VD",
            "subcategory": "illusion",
            "visual_input": "1",
            "set_id": "0",
            "figure_id": figure,
            "question_id": "0",
            "question": "Is the left line longer?",
            "gt_answer_details": "They are equal.",
            "gt_answer": gt,
            "prediction": prediction,
        }
        for figure, gt, prediction in (("0", "0", "No, they are equal."), ("1", "1", "Yes."))
    ),
)

# The dataset contract: the columns the hooks read from a row (docs/hallusionbench.md, "Data").
ROW_SCHEMA = RowSchema(
    fields=(
        RowField("category", "text"),
        RowField("subcategory", "text"),
        RowField("visual_input", "id"),
        RowField("set_id", "id"),
        RowField("figure_id", "id"),
        RowField("question_id", "id"),
        RowField("question", "text", doc="the prompt: the raw question"),
        RowField("gt_answer", "id"),
        RowField("gt_answer_details", "str", doc="the judge's reference answer"),
        RowField("image", "image", null_when=("visual_input", ("0",)), doc="none on no-image questions"),
    ),
    identity=("category", "subcategory", "set_id", "figure_id", "question_id"),
    units=(
        ScoringUnit(
            "figure set",
            key=("category", "subcategory", "set_id"),
            why="qAcc needs every figure of a question, fAcc every question of a figure",
        ),
    ),
    exif_transpose=True,
    image_note="EXIF orientation applied: the Hub data as the datasets library decodes it (host loader)",
)

BENCHMARK = Benchmark(
    name="hallusionbench",
    title="HallusionBench (CVPR 2024)",
    description="yes/no image-context reasoning: aAcc/fAcc/qAcc, yes/no bias, figure consistency, "
    "Language Hallucination vs Visual Illusion diagnosis",
    record_schema=RECORD_SCHEMA,
    behaviour="lmms_eval_tasks.tasks.hallusionbench.behaviour",
    row_schema=ROW_SCHEMA,
    headline_metrics=("aAcc", "fAcc", "qAcc", "overall", "LH", "VI", "Mixed", "unjudged_verdicts"),
    count_keys=(
        "unjudged_verdicts",
        "empty_predictions",
        "no_verdict",
        "undiagnosed_verdicts",  # with the next: change the LH/VI/Mixed headline shares when not zero
        "unjudged_consistency_needed",
    ),
    sample_tasks=tuple(f"hallusionbench{variant}_sample" for variant in ("", "_offline", "_vlmevalkit")),
    leaderboard_files=("{task}/HallusionBench_result.json",),  # hooks.LEADERBOARD_FILE, in the task folder
    docs="docs/hallusionbench.md",
    paper_judge_model="gpt-4",  # the paper's and the official judging script's judge
)
