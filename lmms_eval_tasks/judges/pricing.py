"""Approximate list prices (USD per 1M tokens: input, output) of OpenAI judge models, checked 2025 (Azure
and batch pricing differ); unknown models give None; ``LMMS_EVAL_TASKS_JUDGE_PRICE`` overrides."""

from __future__ import annotations

import re

from lmms_eval_tasks import environment

# A dated snapshot (gpt-4o-2024-11-20) not listed costs what its undated model does
PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-2024-05-13": (5.00, 15.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-4-0125-preview": (10.00, 30.00),
    "gpt-4-1106-preview": (10.00, 30.00),
    "gpt-4": (30.00, 60.00),
    "gpt-4-0613": (30.00, 60.00),
    "gpt-4-0314": (30.00, 60.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "gpt-3.5-turbo-0125": (0.50, 1.50),
}


def price_per_million(model: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens for ``model`` from the env override or the table; None: unknown."""
    override = environment.value("LMMS_EVAL_TASKS_JUDGE_PRICE")
    if override:
        try:
            input_price, output_price = (float(part) for part in override.split(","))
            return input_price, output_price
        except ValueError:
            raise ValueError(
                f"LMMS_EVAL_TASKS_JUDGE_PRICE must be '<input>,<output>' USD per 1M tokens, got {override!r}"
            ) from None
    return PRICES_PER_MILLION.get(model) or PRICES_PER_MILLION.get(re.sub(r"-\d{4}-\d{2}-\d{2}$", "", model))


def estimate_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """Estimated USD cost of the given token counts, or None when the model's price is unknown."""
    prices = price_per_million(model)
    if prices is None:
        return None
    return round((prompt_tokens * prices[0] + completion_tokens * prices[1]) / 1_000_000, 6)
