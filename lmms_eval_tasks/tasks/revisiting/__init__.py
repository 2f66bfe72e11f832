"""What the "Revisiting MLLM Evaluation" tasks share (TDIUC, TallyQA, DVQA; VQDv1 keeps its own prompts):
one set of hooks, parsers and ``prepare`` told each dataset's settings (``datasets.py``), the text rules
(``scoring.py``), the generator and the `revisiting` groups (``revisiting.yaml``, ``revisiting_sample.yaml``).
No benchmark of its own: each dataset is a benchmark package (``tasks/tdiuc``, ``tasks/tallyqa``,
``tasks/dvqa``, ``tasks/vqdv1``) with its registry entry, scorer and report section."""

from lmms_eval_tasks.framework.dataset_contract import RowField, RowSchema


def question_rows(*fields: RowField) -> RowSchema:
    """A dataset's row contract: ``question_id``, ``question``, its own ``fields``, the image."""
    return RowSchema(
        fields=(
            RowField("question_id", "id"),
            RowField("question", "text"),
            *fields,
            RowField("image", "image"),
        ),
        identity=("question_id",),
        image_note="no EXIF orientation: the authors' loaders open files with PIL.Image.open(...)"
        ".convert('RGB') and the annotations (boxes, sizes) are in the stored pixel layout",
    )
