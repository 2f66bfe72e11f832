"""Images carrying the file a benchmark's official pipeline sends (VRB's quality-95 JPEG): the task sees the
pixels, a server client sends the file; ``copy()``/``convert()`` drop it."""

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
