"""TDIUC (Revisiting MLLM Evaluation): 12 question types, WordNet synonym matching, MPT metrics."""

from lmms_eval_tasks.framework.dataset_contract import RowField
from lmms_eval_tasks.framework.records import RecordField, RecordSchema
from lmms_eval_tasks.framework.registry import Benchmark
from lmms_eval_tasks.tasks.revisiting import question_rows

RECORD_SCHEMA = RecordSchema(
    fields=(
        RecordField("question_id", "id"),
        RecordField("question_type", "str", choices="lmms_eval_tasks.tasks.tdiuc.scoring:QUESTION_TYPES"),
        RecordField("labeled_answer", "str", doc="the gold answer ('doesnotapply' for absurd questions)"),
        RecordField("prediction", "str", nullable=True, doc="the model's raw output (null = no output)"),
    ),
    identity=("question_id",),
    example=(
        {"question_id": 1, "question_type": "color", "labeled_answer": "red", "prediction": "red"},
        {"question_id": 2, "question_type": "counting", "labeled_answer": "2", "prediction": "three"},
    ),
)

ROW_SCHEMA = question_rows(RowField("question_type", "text"), RowField("labeled_answer", "scalar"))

BENCHMARK = Benchmark(
    name="tdiuc",
    title="TDIUC (Revisiting Multi-Modal LLM Evaluation, Lu et al.)",
    description="VQA over 12 question types incl. absurd ones; exact or WordNet-synonym match; "
    "micro/macro (arithmetic MPT), harmonic and normalized MPT",
    record_schema=RECORD_SCHEMA,
    behaviour="lmms_eval_tasks.tasks.tdiuc.behaviour",
    row_schema=ROW_SCHEMA,
    headline_metrics=(
        "micro_accuracy",
        "macro_accuracy",
        "harmonic_mpt",
        "normalized_arithmetic_mpt",
        "normalized_harmonic_mpt",
        "accuracy_absurd",
        "accuracy_counting",
        "accuracy_color",
    ),
    sample_tasks=("tdiuc_sample",),
    docs="docs/revisiting.md",
)
