"""VQDv1: predicted boxes (default rule, the official script's extraction, Qwen-VL's <box> syntax).

Light at import: targets are ``"module:function"`` strings, resolved on use; ``framework.parser_index.
all_parsers`` collects this list through ``Benchmark.parsers``.
"""

from __future__ import annotations

from lmms_eval_tasks.framework.parser_index import ParserEntry

_VQD = "lmms_eval_tasks.tasks.vqdv1.scoring"

PARSERS: list[ParserEntry] = [
    ParserEntry("vqdv1.parse_boxes", f"{_VQD}:parse_boxes", ("list",), {"width": 640, "height": 480}),
    ParserEntry(
        "vqdv1.parse_boxes[official]",
        f"{_VQD}:parse_boxes",
        ("list",),
        {"width": 640, "height": 480, "official": True},
    ),
    ParserEntry(
        "vqdv1.parse_boxes[qwen]",
        f"{_VQD}:parse_boxes",
        ("list",),
        {"width": 640, "height": 480, "syntax": "qwen"},
    ),
    ParserEntry("vqdv1.is_explicit_empty", f"{_VQD}:is_explicit_empty", ("bool",)),
]
