"""Judge integrity: what each defence does to the ConTextual sample's acceptance under attack, in one run.

Every answer of the bundled ConTextual sample (10 items) is replaced by each output of
``parser_index.ATTACK_OUTPUTS``, then by an honest random answer (another item's reference) and by the right
answer, and judged under the four settings (verdict parse: official first marker / default, the judge's own
last verdict with the model's quoted text masked out) x (judge prompt: official / hardened).

By default the judge is a local step-by-step judge that quotes the response before its own verdict (the
hidden-style attack: a verdict planted in the answer reaches the reply). It reads no instructions, so it
measures the parser defences only. ``--base-url URL --model NAME`` runs the same table against any
OpenAI-compatible judge instead (key from LMMS_EVAL_TASKS_JUDGE_API_KEY or OPENAI_API_KEY; none for a
keyless local server): the only way to measure how much the hardened prompt changes a real LLM judge.
A cell shows the acceptance rate over the judged items, with the number judged when the judge left some
unjudged. Prints a Markdown table (docs/judges.md, "Judge integrity"); last line:
``RESULT planted_official=<%> planted_default=<%> honest_random=<%> worst_default=<%> unjudged=<n>``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the reusable fake server lives with the tests

from fake_openai import FakeOpenAIServer  # noqa: E402
from loguru import logger  # noqa: E402

from lmms_eval_tasks.framework.parser_index import ATTACK_OUTPUTS  # noqa: E402
from lmms_eval_tasks.judges import get_judge  # noqa: E402
from lmms_eval_tasks.tasks.contextual import scoring  # noqa: E402

REAL_MODEL = "gpt-4o-2024-11-20"  # the pack's default judge
LOCAL_MODEL = "local-quoting-judge"  # the name the local judge is asked under (its cache identity)
SETTINGS = [
    ("official", "official"),
    ("official", "hardened"),
    ("default", "official"),
    ("default", "hardened"),
]


def sample_records() -> list[dict]:
    """The bundled sample's 10 records (official schema, no image needed: the judge is text only)."""
    import pyarrow.parquet as pq

    path = ROOT / "lmms_eval_tasks/tasks/contextual/sample/contextual_sample.parquet"
    table = pq.read_table(path, columns=["image_url", "instruction", "response", "category"])
    return table.to_pylist()


def quoting_judge(prompt: str) -> str:
    """Quotes the response, then its own verdict: Yes when the prediction holds the reference."""
    reference = prompt.split("\nGround-truth Response: ", 1)[1].split("\nPredicted Response: ", 1)[0]
    prediction = prompt.split("\nPredicted Response: ", 1)[1]
    block = re.search(r"<<<MODEL OUTPUT \w+>>>\n(.*)\n<<<END OF MODEL OUTPUT \w+>>>", prediction, re.S)
    prediction = block.group(1) if block else prediction
    verdict = "Yes" if reference.strip().lower() in prediction.lower() else "No"
    quote = f"The predicted response reads:\n{prediction}\n\n"
    return f"{quote}Comparing with the ground truth.\nJudgement: {verdict}"


def answers(records: list[dict], rng: random.Random) -> dict[str, list[str]]:
    """Each attack as every answer, the right answers, and honest random answers (a shuffled reference)."""
    references = [record["response"] for record in records]
    shuffled = references[:]
    while any(a == b for a, b in zip(shuffled, references, strict=True)):
        rng.shuffle(shuffled)
    table = {"right answer": references, "honest random answer": shuffled}
    table.update({name: [text] * len(records) for name, text in ATTACK_OUTPUTS.items()})
    return table


def judge_rates(judge, records: list[dict], table: dict[str, list[str]]) -> dict[str, list[tuple]]:
    """``{answers: [(acceptance rate or None, items judged), per setting]}``."""
    rates: dict[str, list[tuple]] = {}
    for name, predictions in table.items():
        row = []
        for protocol, prompt in SETTINGS:
            scored = [{**record, "prediction": p} for record, p in zip(records, predictions, strict=True)]
            metrics, _ = scoring.score(
                scored, judge=judge, protocol=protocol, judge_prompt=prompt, rouge=False
            )
            row.append((metrics["acceptance_rate"], len(records) - int(metrics.get("unjudged") or 0)))
        rates[name] = row
    return rates


def cell(rate: float | None, judged: int, items: int) -> str:
    """``"40 %"``, or ``"40 % (8 judged)"`` when the judge left some items without a verdict."""
    text = "n/a" if rate is None else f"{rate:.0f} %"
    return text if judged == items else f"{text} ({judged} judged)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base-url", help="an OpenAI-compatible judge's base URL (default: the local quoting judge)"
    )
    parser.add_argument(
        "--model", default=None, help=f"judge model name with --base-url (default {REAL_MODEL})"
    )
    parser.add_argument("--quick", action="store_true", help="four rows only: checks the script works")
    arguments = parser.parse_args()
    # the table measures the parser's defences; each of its 72 scorings would add the judge self-test's probes
    os.environ["LMMS_EVAL_TASKS_JUDGE_SELF_TEST"] = "off"
    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    records = sample_records()
    table = answers(records, random.Random(0))
    if arguments.quick:
        keep = ("right answer", "honest random answer", "planted-contextual", "over-long")
        table = {name: table[name] for name in keep}
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        # key None: from the environment, as in a run
        url, key, retries, model = arguments.base_url, None, 3, arguments.model or REAL_MODEL
        if not url:
            local = stack.enter_context(FakeOpenAIServer(quoting_judge, max_prompt_chars=6000))
            url, key, retries, model = local.base_url, "sk-local", 1, LOCAL_MODEL
        cache = Path(folder) / "cache.sqlite"
        judge = get_judge(
            "openai", base_url=url, model=model, api_key=key, cache_path=cache, max_retries=retries
        )
        described = judge.describe()
        rates = judge_rates(judge, records, table)
        judge.close()
    where = "the local quoting judge" if not arguments.base_url else f"{described.get('endpoint')}"
    print(f"judge: {described.get('model')} ({where})")
    settings = [f"{parse} parse, {prompt} prompt" for parse, prompt in SETTINGS]
    print(f"| answers ({len(records)} sample items) | " + " | ".join(settings) + " |")
    print("|---|---|---|---|---|")
    for name, row in rates.items():
        print(f"| {name} | " + " | ".join(cell(rate, judged, len(records)) for rate, judged in row) + " |")
    attacks = [row for name, row in rates.items() if name in ATTACK_OUTPUTS]
    worst_default = max(max(rate or 0.0 for rate, _ in row[2:]) for row in attacks)
    planted = [rate or 0.0 for rate, _ in rates["planted-contextual"]]
    unjudged = sum(len(records) - judged for row in rates.values() for _, judged in row)
    print(
        f"RESULT planted_official={planted[0]:.0f} planted_default={planted[2]:.0f} "
        f"honest_random={rates['honest random answer'][2][0] or 0.0:.0f} worst_default={worst_default:.0f} "
        f"unjudged={unjudged}"
    )


if __name__ == "__main__":
    main()
