"""TallyQA (Revisiting MLLM Evaluation): counting, simple vs complex questions, accuracy and RMSE."""

from lmms_eval_tasks.framework.dataset_contract import RowField
from lmms_eval_tasks.framework.records import RecordField, RecordSchema
from lmms_eval_tasks.framework.registry import Benchmark
from lmms_eval_tasks.tasks.revisiting import question_rows

RECORD_SCHEMA = RecordSchema(
    fields=(
        RecordField("question_id", "id"),
        RecordField("answer", "scalar", doc="the gold count (a non-negative integer or its digits)"),
        RecordField("issimple", "bool"),
        RecordField("prediction", "str", nullable=True, doc="the model's raw output (null = no output)"),
    ),
    identity=("question_id",),
    example=(
        {"question_id": 1, "answer": 2, "issimple": True, "prediction": "2"},
        {"question_id": 2, "answer": 5, "issimple": False, "prediction": "four"},
    ),
)

ROW_SCHEMA = question_rows(RowField("answer", "scalar"), RowField("issimple", "bool"))

BENCHMARK = Benchmark(
    name="tallyqa",
    title="TallyQA (Revisiting Multi-Modal LLM Evaluation, Lu et al.)",
    description="counting questions, simple and complex: micro/macro accuracy (count buckets 0-3, 4+), RMSE",
    record_schema=RECORD_SCHEMA,
    behaviour="lmms_eval_tasks.tasks.tallyqa.behaviour",
    row_schema=ROW_SCHEMA,
    headline_metrics=(
        "simple_micro_accuracy",
        "simple_macro_accuracy",
        "simple_rmse",
        "complex_micro_accuracy",
        "complex_macro_accuracy",
        "complex_rmse",
        "micro_accuracy",
        "unparsed",
    ),
    sample_tasks=("tallyqa_sample",),
    docs="docs/revisiting.md",
)
