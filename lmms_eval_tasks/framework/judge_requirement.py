"""Judged tasks need a judge, checked before a model loads or records are re-scored; the offline rule judge
runs only when asked for (``*_offline``/``*_sample`` tasks, ``LMMS_EVAL_TASKS_JUDGE=rule``)."""

from __future__ import annotations

from collections.abc import Iterable

KEY_VARIABLES = (
    "OPENAI_API_KEY (OpenAI), OPENAI_API_URL (a local OpenAI-compatible server) "
    "or AZURE_ENDPOINT + AZURE_API_KEY"
)


def missing_judge_line(tasks: Iterable[str], prefix: str = "lmms_eval", records: bool = False) -> str | None:
    """None when every task in ``tasks`` that an LLM judges has a judge endpoint; else one line naming the
    tasks, the key variables, the rule-judged task and the rule-judge switch (``records``: re-scoring)."""
    unjudged = _unjudged(tasks)
    if not unjudged:
        return None
    if records:
        return (
            f"{prefix}: records of {', '.join(unjudged)} are scored by an LLM judge and none is configured: "
            f"set {KEY_VARIABLES}; or set LMMS_EVAL_TASKS_JUDGE=rule to re-score them with the offline rule "
            "judge (an approximation, not comparable with GPT-judged numbers; the output names the rule "
            "judge)"
        )
    alternatives = sorted({offline for offline in unjudged.values() if offline})
    instead = f"run {' / '.join(alternatives)} (the offline rule judge) or " if alternatives else ""
    return (
        f"{prefix + ': ' if prefix else ''}{', '.join(unjudged)} {'is' if len(unjudged) == 1 else 'are'} "
        f"scored by an LLM judge and "
        f"none is configured: set {KEY_VARIABLES}; or {instead}set LMMS_EVAL_TASKS_JUDGE=rule to score with "
        f"the offline rule judge (an approximation, not comparable with GPT-judged numbers)"
    )


def require_judge(task: str) -> None:
    """ValueError (the missing-judge line) when ``task`` needs an LLM judge and has none, at docs time (a
    user's task including a judged one); a ``--predict_only`` run needs none."""
    from lmms_eval_tasks.framework.run_state import current_run

    if getattr(current_run().args, "predict_only", False):
        return
    line = missing_judge_line([task], prefix="")
    if line:
        raise ValueError(line)


def _unjudged(tasks: Iterable[str]) -> dict[str, str]:
    """{task: its rule-judged task or ""} for the tasks an LLM judges that have no judge endpoint."""
    from lmms_eval_tasks.framework.registry import benchmark_for_task
    from lmms_eval_tasks.judges.factory import llm_judge_unavailable

    unjudged: dict[str, str] = {}
    for task in dict.fromkeys(tasks):
        benchmark = benchmark_for_task(task)
        judge_needed = None if benchmark is None else benchmark.loaded.judge_needed
        if judge_needed is None:
            continue
        offline_task = judge_needed(task)
        if offline_task is not None and llm_judge_unavailable(task):
            unjudged[task] = offline_task
    return unjudged
