"""The pack's own environment variables (``LMMS_EVAL_TASKS_*``): their one table (``VARIABLES``, the docs'
configuration page) and their one reader, at call time; reading an undeclared name is a KeyError."""

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


# The one table: a line ``NAME | default`` per variable, its meaning on the indented lines below it.
_TABLE = """
LMMS_EVAL_TASKS_CACHE | `~/.cache/lmms_eval_tasks`
    root of every pack cache: judge answers, corrupted images, WordNet, ConTextual's images, tiny LLaVA, the
    host's task index
LMMS_EVAL_TASKS_DATA | none
    parent folder of the datasets `lmms-eval-tasks prepare` wrote, one subfolder per dataset
LMMS_EVAL_TASKS_DATA_<KIND> | `$LMMS_EVAL_TASKS_DATA/<kind>`
    the prepared folder of one dataset (TDIUC, TALLYQA, DVQA, VQDV1, CONTEXTUAL); wins over the above
LMMS_EVAL_TASKS_JUDGE | `auto`
    the LLM judge: `auto` (an endpoint if configured, else the rule judge), `openai` or `rule`
LMMS_EVAL_TASKS_JUDGE_<SETTING> | the judges page
    a judge setting for every task (`MODEL`, `REPEATS`, `CONCURRENCY`, `TIMEOUT`, `TOTAL_TIMEOUT`,
    `MAX_UNJUDGED`, `CACHE_NAMESPACE`, ...: the judges page)
LMMS_EVAL_TASKS_JUDGE_<SETTING>_<TASK> | the setting for every task
    the same setting for one benchmark's tasks (`..._MODEL_HALLUSIONBENCH`); wins over the above
LMMS_EVAL_TASKS_JUDGE_BASE_URL | the host's variables
    the judge's OpenAI-compatible endpoint; wins over `OPENAI_API_URL` / `OPENAI_BASE_URL`
LMMS_EVAL_TASKS_JUDGE_API_KEY | `OPENAI_API_KEY`
    the judge's key; wins over `OPENAI_API_KEY`
LMMS_EVAL_TASKS_JUDGE_CACHE | `$LMMS_EVAL_TASKS_CACHE/judge/judge_cache.sqlite`
    the judge cache file (or a folder holding `judge_cache.sqlite`)
LMMS_EVAL_TASKS_JUDGE_SELF_TEST | on
    `off` skips the judge self-test (a few probes per judged run that measure the judge's false-accept and
    false-reject rates)
LMMS_EVAL_TASKS_JUDGE_PRICE | the pack's price table (unknown model: no estimate)
    `<input>,<output>` USD per 1M judge tokens, for the cost estimate
LMMS_EVAL_TASKS_JUDGE_IS_MODEL | off
    `1`: judging with the server that serves the model under test is on purpose (else refused)
LMMS_EVAL_TASKS_SKIP_MODEL_CHECK | off
    `1`: the launcher skips its check that each `--model` wrapper can run here
LMMS_EVAL_TASKS_NO_SUBSTITUTION | off
    `1`: `--model llava` is not served by the pack's LLaVA (original code only: the models page)
LMMS_EVAL_TASKS_CORRUPT_MAX_PIXELS | `16777216` (4096 x 4096)
    largest image (height x width) the corruption engine corrupts and every task's image loader accepts (it
    replaces PIL's own decompression-bomb limit there, which libraries change when imported); `0` = no limit
LMMS_EVAL_TASKS_WORDNET_SOURCE | `/usr/share/wordnet`
    the folder of Debian's WordNet files (TDIUC's synonym matching)
LMMS_EVAL_TASKS_<DATASET>_PROTOCOL | `default`
    TDIUC, TALLYQA or DVQA scoring: `default` or `official` (the authors' script, its bugs included)
LMMS_EVAL_TASKS_<DATASET>_PROMPT | the model's variant, else `hf`
    TDIUC, TALLYQA or DVQA prompt: a variant name or a template containing `{question}`
LMMS_EVAL_TASKS_VQDV1_<OPTION> | the spec's protocol, the official box rule
    VQDv1 scoring options `PROTOCOL`, `COORDS`, `BOX_FORMAT`, `SYNTAX` (the VQDv1 page)
LMMS_EVAL_TASKS_VQDV1_PROMPT | the model's variant, else `api`
    VQDv1 prompt: a variant name or a template
LMMS_EVAL_TASKS_CONTEXTUAL_PROTOCOL | `default`
    ConTextual scoring: `default` or `official`
LMMS_EVAL_TASKS_CONTEXTUAL_JUDGE_PROMPT | `official`
    ConTextual judge prompt: `official` or `hardened`
LMMS_EVAL_TASKS_CONTEXTUAL_IMAGE_JUDGE | off
    `1`/`true`/`yes`/`on`: the judge also sees the image
LMMS_EVAL_TASKS_CONTEXTUAL_SKIP_MISSING | off
    `1`/`true`/`yes`/`on`: run without the rows whose image was not downloaded (counted, reported)
LMMS_EVAL_TASKS_HALLUSIONBENCH_NO_VERDICT | `official`
    judge replies without a verdict word: `official` (the official parse) or `unjudged`
LMMS_EVAL_TASKS_HALLUSIONBENCH_JUDGE_PROMPT | `official`
    HallusionBench judge prompt: `official` or `hardened`
LMMS_EVAL_TASKS_VRB_PROFILE | `vrb`
    VRB corruption profile: `vrb` or `imagenet_c` (the VRB page)
LMMS_EVAL_TASKS_VRB_SEED | `0`
    VRB corruption seed (an integer >= 0)
LMMS_EVAL_TASKS_VRB_IMAGES | `3000`
    VRB subset size in images (an integer >= 1)
LMMS_EVAL_TASKS_VRB_PROTOCOL | `paper`
    VRB scoring: `paper`, `vqa_api` or `official`
LMMS_EVAL_TASKS_VRB_PROMPT | the task's prompt
    VRB prompt: `vrb_llava` or `vqav2`
LMMS_EVAL_TASKS_VRB_IMAGE_MEMO | `64`
    corrupted VRB images kept in memory per process (an integer >= 0)
LMMS_EVAL_TASKS_SERVER_BREAKER | `16`
    failed model-server requests in a row (each after its retries) that stop the run; a request's bound of
    only timeouts also does (0: never)
LMMS_EVAL_TASKS_SIGTERM_GRACE | `20`
    seconds a run may clean up after SIGTERM before it ends anyway (an integer >= 0)
"""


VARIABLES = tuple(
    Variable(name, " ".join(meaning.split()), default)
    for name, default, meaning in re.findall(r"^(\S+) \| (.*)\n((?: {4}.*\n?)*)", _TABLE, re.MULTILINE)
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
    names = [f"{base}_{task_suffix(task)}", base] if task else [base]
    return next((found for name in names if (found := value(name))), None)


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
