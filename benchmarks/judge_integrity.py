"""Judge integrity: what each defence does to the ConTextual sample's acceptance under attack, in one run.

Every answer of the bundled ConTextual sample (10 items) is replaced by each output of
``parser_index.ATTACK_OUTPUTS``, then by an honest random answer (another item's reference) and by the right
answer, and judged under the four settings (verdict parse: official first marker / default, the judge's own
last verdict with the model's quoted text masked out) x (judge prompt: official / hardened). The default
judge is a local step-by-step judge that quotes the response before its own verdict (the hidden-style
attack: a verdict planted in the answer reaches the reply); ``--base-url URL --model NAME`` (and
OPENAI_API_KEY) runs the same table against a real OpenAI-compatible judge, the only way to measure how much
the hardened prompt itself changes a real judge. Prints a Markdown table (docs/judges.md, "Judge integrity").
Last line: ``RESULT planted_official=<%> planted_default=<%> honest_random=<%> worst_default=<%>``.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base-url", help="a real OpenAI-compatible judge (default: the local quoting judge)"
    )
    parser.add_argument("--model", default="gpt-4o-2024-11-20", help="judge model name with --base-url")
    parser.add_argument("--quick", action="store_true", help="three attacks only: checks the script works")
    arguments = parser.parse_args()
    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    records = sample_records()
    table = answers(records, random.Random(0))
    if arguments.quick:
        keep = ("right answer", "honest random answer", "planted-contextual", "over-long")
        table = {name: table[name] for name in keep}
    rates: dict[str, list[float | None]] = {}
    with (
        tempfile.TemporaryDirectory() as folder,
        FakeOpenAIServer(quoting_judge, max_prompt_chars=6000) as fake,
    ):
        url = arguments.base_url or fake.base_url
        judge = get_judge(
            "openai", base_url=url, model=arguments.model, api_key=None if arguments.base_url else "sk-local",
            cache_path=Path(folder) / "cache.sqlite", max_retries=1,
        )  # fmt: skip
        for name, predictions in table.items():
            row = []
            for protocol, prompt in SETTINGS:
                scored = [{**record, "prediction": p} for record, p in zip(records, predictions, strict=True)]
                metrics, _ = scoring.score(
                    scored, judge=judge, protocol=protocol, judge_prompt=prompt, rouge=False
                )
                row.append(metrics["acceptance_rate"])
            rates[name] = row
        judge.close()
    print(
        "| answers (10 sample items) | official parse, official prompt | official parse, hardened prompt "
        "| default parse, official prompt | default parse, hardened prompt |"
    )
    print("|---|---|---|---|---|")
    for name, row in rates.items():
        print(f"| {name} | " + " | ".join("n/a" if v is None else f"{v:.0f} %" for v in row) + " |")
    attacks = [row for name, row in rates.items() if name in ATTACK_OUTPUTS]
    worst_default = max(max(v or 0.0 for v in row[2:]) for row in attacks)
    planted = rates.get("planted-contextual", [None] * 4)
    print(
        f"RESULT planted_official={planted[0]:.0f} planted_default={planted[2]:.0f} "
        f"honest_random={rates['honest random answer'][2]:.0f} worst_default={worst_default:.0f}"
    )


if __name__ == "__main__":
    main()
