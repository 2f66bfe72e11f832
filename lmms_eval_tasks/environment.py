"""The pack's own environment variables (``LMMS_EVAL_TASKS_*``): their one table and their one reader.

Every variable the pack reads is declared in ``VARIABLES`` (name, meaning, default) and read through an
accessor below, at call time, never at import (so a test's ``monkeypatch.setenv`` applies and a variable
set after import counts); reading an undeclared name is a programming error (KeyError). The table is the
docs' configuration page (``markdown_table``; a test keeps the page and the table equal, and fails when a
module outside this one reads an ``LMMS_EVAL_TASKS_`` variable directly).

The host's and the libraries' variables (``HF_*``, ``OPENAI_*``, ``AZURE_*``, ``MODEL_VERSION``,
``LMMS_EVAL_*``, ``NLTK_DATA``, ``RANK``, ...) are read where they are used: their meaning is the host's,
and their readers follow its rules.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

PREFIX = "LMMS_EVAL_TASKS_"

# What the placeholders of a declared name stand for (a name is declared when it matches one entry).
JUDGE_SETTINGS = (
    "KIND", "MODEL", "API_TYPE", "REPEATS", "CONCURRENCY", "TIMEOUT", "MAX_RETRIES", "MAX_TOKENS",
    "TEMPERATURE", "BACKOFF_BASE", "BACKOFF_MAX", "CIRCUIT_BREAKER", "TOTAL_TIMEOUT", "MAX_UNJUDGED",
    "CACHE_ENABLED", "CACHE_NAMESPACE",
)  # fmt: skip
PLACEHOLDERS = {
    "<SETTING>": "|".join(JUDGE_SETTINGS),
    "<TASK>": "[A-Z0-9_]+",
    "<KIND>": "[A-Z0-9]+",
    "<DATASET>": "TDIUC|TALLYQA|DVQA",
    "<OPTION>": "PROTOCOL|COORDS|BOX_FORMAT|SYNTAX",
}
OFF_SPELLINGS = ("", "0", "false", "no", "off")
TRUE_SPELLINGS = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Variable:
    """One declared variable (or family: ``<TASK>`` etc. in ``PLACEHOLDERS``), what it means, its default."""

    name: str
    meaning: str
    default: str


VARIABLES: tuple[Variable, ...] = (
    Variable(
        "LMMS_EVAL_TASKS_CACHE",
        "root of every pack cache: judge answers, corrupted images, WordNet, ConTextual's images, tiny "
        "LLaVA, the host's task index",
        "`~/.cache/lmms_eval_tasks`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_DATA",
        "parent folder of the datasets `lmms-eval-tasks prepare` wrote, one subfolder per dataset",
        "none",
    ),
    Variable(
        "LMMS_EVAL_TASKS_DATA_<KIND>",
        "the prepared folder of one dataset (TDIUC, TALLYQA, DVQA, VQDV1, CONTEXTUAL); wins over the above",
        "`$LMMS_EVAL_TASKS_DATA/<kind>`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_JUDGE",
        "the LLM judge: `auto` (an endpoint if configured, else the rule judge), `openai` or `rule`",
        "`auto`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_JUDGE_<SETTING>",
        "a judge setting for every task (`MODEL`, `REPEATS`, `CONCURRENCY`, `TIMEOUT`, `TOTAL_TIMEOUT`, "
        "`MAX_UNJUDGED`, `CACHE_NAMESPACE`, ...: the judges page)",
        "the judges page",
    ),
    Variable(
        "LMMS_EVAL_TASKS_JUDGE_<SETTING>_<TASK>",
        "the same setting for one benchmark's tasks (`..._MODEL_HALLUSIONBENCH`); wins over the above",
        "the setting for every task",
    ),
    Variable(
        "LMMS_EVAL_TASKS_JUDGE_BASE_URL",
        "the judge's OpenAI-compatible endpoint; wins over `OPENAI_API_URL` / `OPENAI_BASE_URL`",
        "the host's variables",
    ),
    Variable(
        "LMMS_EVAL_TASKS_JUDGE_API_KEY", "the judge's key; wins over `OPENAI_API_KEY`", "`OPENAI_API_KEY`"
    ),
    Variable(
        "LMMS_EVAL_TASKS_JUDGE_CACHE",
        "the judge cache file (or a folder holding `judge_cache.sqlite`)",
        "`$LMMS_EVAL_TASKS_CACHE/judge/judge_cache.sqlite`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_JUDGE_PRICE",
        "`<input>,<output>` USD per 1M judge tokens, for the cost estimate",
        "the pack's price table (unknown model: no estimate)",
    ),
    Variable(
        "LMMS_EVAL_TASKS_JUDGE_IS_MODEL",
        "`1`: judging with the server that serves the model under test is on purpose (else refused)",
        "off",
    ),
    Variable(
        "LMMS_EVAL_TASKS_SKIP_MODEL_CHECK",
        "`1`: the launcher skips its check that each `--model` wrapper can run here",
        "off",
    ),
    Variable(
        "LMMS_EVAL_TASKS_NO_SUBSTITUTION",
        "`1`: `--model llava` is not served by the pack's LLaVA (original code only: the models page)",
        "off",
    ),
    Variable(
        "LMMS_EVAL_TASKS_CORRUPT_MAX_PIXELS",
        "largest image (height x width) the corruption engine corrupts and every task's image loader "
        "accepts (it replaces PIL's own decompression-bomb limit there, which libraries change when "
        "imported); `0` = no limit",
        "`16777216` (4096 x 4096)",
    ),
    Variable(
        "LMMS_EVAL_TASKS_WORDNET_SOURCE",
        "the folder of Debian's WordNet files (TDIUC's synonym matching)",
        "`/usr/share/wordnet`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_<DATASET>_PROTOCOL",
        "TDIUC, TALLYQA or DVQA scoring: `default` or `official` (the authors' script, its bugs included)",
        "`default`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_<DATASET>_PROMPT",
        "TDIUC, TALLYQA or DVQA prompt: a variant name or a template containing `{question}`",
        "the model's variant, else `hf`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_VQDV1_<OPTION>",
        "VQDv1 scoring options `PROTOCOL`, `COORDS`, `BOX_FORMAT`, `SYNTAX` (the VQDv1 page)",
        "the spec's protocol, the official box rule",
    ),
    Variable(
        "LMMS_EVAL_TASKS_VQDV1_PROMPT",
        "VQDv1 prompt: a variant name or a template",
        "the model's variant, else `api`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_CONTEXTUAL_PROTOCOL",
        "ConTextual scoring: `default` or `official`",
        "`default`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_CONTEXTUAL_JUDGE_PROMPT",
        "ConTextual judge prompt: `official` or `hardened`",
        "`official`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_CONTEXTUAL_IMAGE_JUDGE",
        "`1`/`true`/`yes`/`on`: the judge also sees the image",
        "off",
    ),
    Variable(
        "LMMS_EVAL_TASKS_CONTEXTUAL_SKIP_MISSING",
        "`1`/`true`/`yes`/`on`: run without the rows whose image was not downloaded (counted, reported)",
        "off",
    ),
    Variable(
        "LMMS_EVAL_TASKS_HALLUSIONBENCH_NO_VERDICT",
        "judge replies without a verdict word: `official` (the official parse) or `unjudged`",
        "`official`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_HALLUSIONBENCH_JUDGE_PROMPT",
        "HallusionBench judge prompt: `official` or `hardened`",
        "`official`",
    ),
    Variable(
        "LMMS_EVAL_TASKS_VRB_PROFILE", "VRB corruption profile: `vrb` or `imagenet_c` (the VRB page)", "`vrb`"
    ),
    Variable("LMMS_EVAL_TASKS_VRB_SEED", "VRB corruption seed (an integer >= 0)", "`0`"),
    Variable("LMMS_EVAL_TASKS_VRB_IMAGES", "VRB subset size in images (an integer >= 1)", "`3000`"),
    Variable("LMMS_EVAL_TASKS_VRB_PROTOCOL", "VRB scoring: `paper`, `vqa_api` or `official`", "`paper`"),
    Variable("LMMS_EVAL_TASKS_VRB_PROMPT", "VRB prompt: `vrb_llava` or `vqav2`", "the task's prompt"),
    Variable(
        "LMMS_EVAL_TASKS_VRB_IMAGE_MEMO",
        "corrupted VRB images kept in memory per process (an integer >= 0)",
        "`64`",
    ),
)


def _pattern(name: str) -> str:
    for placeholder, alternatives in PLACEHOLDERS.items():
        name = name.replace(placeholder, f"(?:{alternatives})")
    return name


_DECLARED = re.compile("|".join(f"(?:{_pattern(variable.name)})" for variable in VARIABLES))


def declared(name: str) -> bool:
    """True when ``name`` is in ``VARIABLES`` (a family's placeholders filled in)."""
    return _DECLARED.fullmatch(name) is not None


def value(name: str) -> str | None:
    """The variable's value as set (None when unset), read now."""
    if not declared(name):
        raise KeyError(f"{name} is not declared in lmms_eval_tasks.environment.VARIABLES")
    return os.environ.get(name)


def text(name: str) -> str:
    """The variable's value without surrounding whitespace; "" when unset."""
    return (value(name) or "").strip()


def flag(name: str) -> bool:
    """An on/off switch: on when set to anything but an off spelling (``""``, 0, false, no, off)."""
    return text(name).lower() not in OFF_SPELLINGS


def yes(name: str) -> bool:
    """An opt-in: on only when set to 1, true, yes or on (any other value is off)."""
    return text(name).lower() in TRUE_SPELLINGS


def integer(name: str, default: int, minimum: int) -> int:
    """An integer >= ``minimum``; ``default`` when unset; a one-line ValueError naming the variable."""
    raw = text(name)
    if not raw:
        return default
    try:
        number = int(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected an integer") from None
    if number < minimum:
        raise ValueError(f"{name}={number}: must be >= {minimum}")
    return number


def task_suffix(task: str) -> str:
    """A task name as a variable suffix: upper case, non-alphanumerics as underscores."""
    return re.sub(r"[^A-Za-z0-9]+", "_", task).strip("_").upper()


def judge_setting(setting: str, task: str | None = None) -> str | None:
    """``LMMS_EVAL_TASKS_JUDGE_<SETTING>_<TASK>``, else ``LMMS_EVAL_TASKS_JUDGE_<SETTING>``; None when both
    are unset or empty."""
    base = f"{PREFIX}JUDGE_{setting.upper()}"
    if task:
        found = value(f"{base}_{task_suffix(task)}")
        if found not in (None, ""):
            return found
    found = value(base)
    return found if found not in (None, "") else None


@contextmanager
def overridden(name: str, new_value: str | None) -> Iterator[None]:
    """``name`` set to ``new_value`` inside the block (unchanged when None), restored after it."""
    if new_value is None:
        yield
        return
    previous = value(name)
    os.environ[name] = new_value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


def markdown_table() -> str:
    """``VARIABLES`` as the Markdown table of the configuration page."""
    rows = ["| Variable | Meaning | Default |", "|---|---|---|"]
    rows += [f"| `{item.name}` | {item.meaning} | {item.default} |" for item in VARIABLES]
    return "\n".join(rows) + "\n"
