"""ConTextual: context-sensitive text-rich visual reasoning, GPT-4 judged acceptance rate (ICML 2024)."""

from lmms_eval_tasks.framework.dataset_contract import RowField, RowSchema
from lmms_eval_tasks.framework.records import RecordField, RecordSchema
from lmms_eval_tasks.framework.registry import Benchmark

RECORD_SCHEMA = RecordSchema(
    fields=(
        RecordField("image_url", "str", doc="identifies the question, as in the official files"),
        RecordField("instruction", "str", nullable=True),
        RecordField("response", "str", required=False, nullable=True, doc="the reference answer"),
        RecordField("category", "str", choices="lmms_eval_tasks.tasks.contextual.scoring:CATEGORIES"),
        RecordField("prediction", "str", nullable=True, doc="the model's raw output (null = no output)"),
    ),
    identity=("image_url",),
    example=(
        {
            "image_url": "https://example.org/1.png",
            "instruction": "What does the sign say?",
            "response": "stop",
            "category": "time",
            "prediction": "stop",
        },
        {
            "image_url": "https://example.org/2.png",
            "instruction": "Which shop is open?",
            "response": "the bakery",
            "category": "shopping",
            "prediction": "the bank",
        },
    ),
)

# The dataset contract: the columns the hooks read from a row (docs/contextual.md).
ROW_SCHEMA = RowSchema(
    fields=(
        RowField("image_url", "text", doc="identifies the instruction; names the prepared image file"),
        RowField("instruction", "text", doc="the prompt"),
        RowField("category", "text"),
        RowField("response", "text", needed_by="lmms_eval_tasks.tasks.contextual.config:reads_response"),
        RowField("image", "image", needed_by="lmms_eval_tasks.tasks.contextual.config:reads_image_column"),
    ),
    identity=("csv_row", "image_url"),
    image_note="no EXIF orientation: the downloaded files are opened with PIL.Image.open(...).convert('RGB')",
)

BENCHMARK = Benchmark(
    name="contextual",
    title="ConTextual (ICML 2024)",
    description="context-sensitive text-rich visual reasoning: GPT-4 judged acceptance rate over 8 visual "
    "scenarios, natural vs digital scenes, 95% interval, ROUGE-L",
    record_schema=RECORD_SCHEMA,
    behaviour="lmms_eval_tasks.tasks.contextual.behaviour",
    row_schema=ROW_SCHEMA,
    headline_metrics=(
        "acceptance_rate",
        "acceptance_rate_ci95_low",
        "acceptance_rate_ci95_high",
        "acceptance_rate_natural",
        "acceptance_rate_digital",
        "acceptance_rate_misc_natural_scenes",
        "rouge_l",
        "unjudged",
    ),
    sample_tasks=("contextual_sample",),
    leaderboard_files=("{task}_predictions.json", "{task}_predictions.csv"),  # export: by the out suffix
    docs="docs/contextual.md",
    paper_judge_model="gpt-4",  # the paper's and the official judging script's judge
)
