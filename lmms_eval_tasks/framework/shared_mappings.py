"""One memory mapping per dataset file, however many tasks load it.

`datasets` maps a cached Arrow file again each time a dataset is loaded from it, and every mapping counts
the pages it has touched in the process's RSS: VRB's 71 levels read the same VQAv2 files, so the full VRB
showed about 170 GB of RSS for about 6 GB really used, and an RSS-based job limit (SLURM, watchdogs) kills
such a run. ``share_file_mappings`` makes `datasets` reuse the table of a file that is mapped already (same
path, inode, size and modification time). Arrow tables are immutable, so sharing one between datasets
changes nothing they read. The tables stay mapped for the life of the process (the datasets wrap new table
objects around their buffers, so no weak reference can tell when the last one goes): meant for a run's
process, which keeps its datasets to the end anyway. Thread-safe.
"""

from __future__ import annotations

import os
import threading
from typing import Any

_MARK = "_lmms_eval_tasks_shared_mappings"
_tables: dict[tuple[Any, ...], Any] = {}
_lock = threading.Lock()


def share_file_mappings() -> None:
    """Make `datasets` map each Arrow file once for all the datasets that read it (idempotent)."""
    import datasets.table as arrow_tables

    mapped = arrow_tables._memory_mapped_arrow_table_from_file
    if getattr(mapped, _MARK, False):
        return

    def shared(filename: str) -> Any:
        try:
            stat = os.stat(filename)
        except OSError:
            return mapped(filename)  # `datasets` says what is wrong with the file
        key = (os.path.realpath(filename), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
        with _lock:
            table = _tables.get(key)
            if table is None:
                table = _tables[key] = mapped(filename)
        return table

    setattr(shared, _MARK, True)
    shared.__wrapped__ = mapped  # type: ignore[attr-defined]
    arrow_tables._memory_mapped_arrow_table_from_file = shared
