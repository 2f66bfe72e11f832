"""``lmms-eval-tasks prepare tallyqa``: TallyQA's ``test.json`` (the authors' ``TallyQA_test.json``) + images.

Image paths in the file are relative (``VG_100K_2/2410408.jpg``, ``val2014/COCO_val2014_...jpg``): pass
the folder holding Visual Genome's and COCO's image folders as ``--images``.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError, require_field
from lmms_eval_tasks.framework.preparing import DatasetKind


def image_candidates(entry: dict[str, Any]) -> list[str]:
    """The entry's relative ``image`` path, then its file name alone (a flat image folder)."""
    image = str(entry.get("image", ""))
    name = PurePosixPath(image).name
    return [image, name] if name and name != image else [image]


def convert(entry: dict[str, Any], index: int) -> dict[str, Any]:
    """One dataset row: typed fields; the file's ``image`` path becomes ``image_file``."""
    answer = require_field(entry, "answer", index, int)
    if isinstance(answer, bool) or answer < 0:
        raise RecordError(index, "answer", f"expected a non-negative count, got {answer!r}")
    row = {key: value for key, value in entry.items() if key != "image"}
    row.update(
        question_id=require_field(entry, "question_id", index, (int, str)),
        question=require_field(entry, "question", index, str),
        answer=answer,
        issimple=require_field(entry, "issimple", index, bool),
        image_file=require_field(entry, "image", index, str),
    )
    return row


PREPARERS = [
    DatasetKind(
        name="tallyqa",
        help="TallyQA: test.json (all 38,589 test questions) + the folder holding VG_100K*/ and val2014/",
        required_fields=("image", "question", "question_id", "answer", "issimple"),
        image_candidates=image_candidates,
        convert=convert,
    )
]
