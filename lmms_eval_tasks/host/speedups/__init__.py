"""Speed-ups around the host, changing nothing a run computes: the task index (``task_index``,
``task_index_cache``), one host import shared by several runs (``shared_import``)."""
