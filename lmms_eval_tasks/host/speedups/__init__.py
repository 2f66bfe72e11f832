"""Speed-ups that work around the host, kept apart from what the pack needs of it: the task index parsed by
libyaml and kept between runs (``task_index``, ``task_index_cache``), and one import of the host shared by
several runs (``shared_import``). None changes what a run computes; the pack's own ``openai_pipelined``
client (``models/openai_pipelined.py``) is the third kind, a faster client for model servers.
"""
