"""DVQA (Revisiting MLLM Evaluation): bar-chart QA by template (structure, data retrieval, reasoning)."""

from lmms_eval_tasks.framework.dataset_contract import RowField
from lmms_eval_tasks.framework.records import RecordField, RecordSchema
from lmms_eval_tasks.framework.registry import Benchmark
from lmms_eval_tasks.tasks.revisiting import question_rows

RECORD_SCHEMA = RecordSchema(
    fields=(
        RecordField("question_id", "id"),
        RecordField("template_id", "str", choices=("structure", "data", "reasoning")),
        RecordField("answer", "scalar", doc="the gold answer (text or a finite number; NaN is refused)"),
        RecordField("prediction", "str", nullable=True, doc="the model's raw output (null = no output)"),
    ),
    identity=("question_id",),
    example=(
        {"question_id": 1, "template_id": "structure", "answer": "3", "prediction": "three"},
        {"question_id": 2, "template_id": "data", "answer": "0.5", "prediction": "5"},
    ),
)

ROW_SCHEMA = question_rows(RowField("template_id", "text"), RowField("answer", "scalar"))

BENCHMARK = Benchmark(
    name="dvqa",
    title="DVQA (Revisiting Multi-Modal LLM Evaluation, Lu et al.)",
    description="bar-chart QA: structural understanding, data retrieval, reasoning; exact match, decimals "
    "kept",
    record_schema=RECORD_SCHEMA,
    behaviour="lmms_eval_tasks.tasks.dvqa.behaviour",
    row_schema=ROW_SCHEMA,
    headline_metrics=(
        "micro_accuracy",
        "macro_accuracy",
        "accuracy_structure",
        "accuracy_data",
        "accuracy_reasoning",
    ),
    sample_tasks=("dvqa_sample",),
    docs="docs/revisiting.md",
)
