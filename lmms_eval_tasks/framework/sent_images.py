"""Images that carry the file a benchmark's official pipeline hands its models.

Some official pipelines save every image to a file and the model reads that file (VRB's saves each corrupted
image as a quality-95 JPEG). ``with_file`` gives the task a PIL image decoded from those bytes, so an
in-process model sees exactly the pixels the official reader gets, and keeps the bytes with it, so a server
client (``--model openai_pipelined``) can send the file itself instead of re-encoding its pixels. Only the
object made here carries them: ``copy()``/``convert()`` make new images without the file.
"""

from __future__ import annotations

import io
from typing import Any

_ATTRIBUTE = "_lmms_eval_tasks_file"


def with_file(data: bytes, mime: str) -> Any:
    """The image ``data`` decodes to (read whole now: safe to share between threads), carrying ``data``."""
    from PIL import Image

    image = Image.open(io.BytesIO(data))
    image.load()
    setattr(image, _ATTRIBUTE, (mime, bytes(data), image.size, image.mode))
    return image


def file_of(image: Any) -> tuple[str, bytes] | None:
    """(MIME type, bytes) of the file ``image`` was decoded from by ``with_file``, else None."""
    carried = getattr(image, _ATTRIBUTE, None)
    if carried is None:
        return None
    mime, data, size, mode = carried
    if getattr(image, "size", None) != size or getattr(image, "mode", None) != mode:
        return None
    return mime, data
