"""VQDv1 (Revisiting MLLM Evaluation): visual query detection, 0..N boxes per query, F1 by box count."""

from lmms_eval_tasks.framework.dataset_contract import RowField
from lmms_eval_tasks.framework.records import RecordField, RecordSchema
from lmms_eval_tasks.framework.registry import Benchmark
from lmms_eval_tasks.tasks.revisiting import question_rows

RECORD_SCHEMA = RecordSchema(
    fields=(
        RecordField("question_id", "id"),
        RecordField(
            "row",
            "int",
            required=False,
            doc="the record's row in the prepared subset: the authors' subset repeats queries on purpose",
        ),
        RecordField("gtbox", "list", aliases=("labeled_answer",), doc="gold boxes [[x, y, w, h], ...]"),
        RecordField("width", "number"),
        RecordField("height", "number"),
        RecordField("prediction", "str", nullable=True, aliases=("predicted_answer",), doc="model output"),
    ),
    identity=("question_id", "row"),
    identity_note="VQDv1 repeats queries on purpose (sampled with replacement): give each record the "
    "'row' field that `prepare vqdv1` and the hooks write",
    example=tuple(
        {"question_id": question, "row": row, "gtbox": gtbox, "width": 100, "height": 100, "prediction": text}
        for question, row, gtbox, text in (
            (1, 0, [[10, 10, 20, 20]], "[10, 10, 30, 30]"),
            (1, 1, [[10, 10, 20, 20]], "[]"),
            (2, 2, [[]], "[]"),
        )
    ),
)

# The dataset contract: the columns the hooks read from a row (docs/vqdv1.md).
ROW_SCHEMA = question_rows(
    RowField("gtbox", "any", doc="0..N gold boxes (a list, or its JSON text)"),
    RowField("width", "number"),
    RowField("height", "number"),
    identity=("question_id", "row"),
)

BENCHMARK = Benchmark(
    name="vqdv1",
    title="VQDv1 (Revisiting Multi-Modal LLM Evaluation, Lu et al.)",
    description="visual query detection: every box answering a query (0..N), per-query F1, micro/macro F1 "
    "over box counts 0, 1, 2, 3, 4+",
    record_schema=RECORD_SCHEMA,
    behaviour="lmms_eval_tasks.tasks.vqdv1.behaviour",
    row_schema=ROW_SCHEMA,
    headline_metrics=("micro_f1", "macro_f1", "f1_0", "f1_1", "f1_2", "f1_3", "unparsed"),
    sample_tasks=("vqdv1_sample",),
    docs="docs/vqdv1.md",
)
