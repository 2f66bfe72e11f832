"""TDIUC scoring (Kafle & Kanan 2017, as used by "Revisiting MLLM Evaluation"): 12 question types.

A prediction is correct when, after normalisation, it equals the label or shares a WordNet synset with it
(``wordnet.synsets(a) & wordnet.synsets(b)``; nltk's morphy maps plurals to lemmas, so "dogs" finds
dog.n.01). Normalisation as in the official ``eval_script/TDIUC_eval.py``: remove spaces, lower-case,
spell ASCII digit strings out as num2words does ("2" -> "two"). Absurd questions are labelled
"doesnotapply".

Protocols (``protocol=``):
- ``default``: the above, plus the multi-word fix: the official script looks up the space-stripped answer
  ("teddybear"), which WordNet rarely knows; the default also looks up the underscore form ("teddy_bear",
  WordNet's spelling of multi-word lemmas). This only ever adds matches, for answers with spaces.
  ``macro_accuracy`` is the mean over the question types present.
- ``official``: exactly the script: the space-stripped form only, and ``macro_accuracy`` divides the sum
  of per-type accuracies by 12 even when fewer types are present (the same number on the full data).

Metrics (percent): ``accuracy_<question_type>``, ``micro_accuracy``, ``macro_accuracy`` (arithmetic
mean-per-type, MPT), ``harmonic_mpt``, ``normalized_arithmetic_mpt`` and ``normalized_harmonic_mpt``
(per type, the mean of the per-unique-answer accuracies first, as in the TDIUC paper).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any

from loguru import logger

from lmms_eval_tasks.framework.input_checks import RecordError, require_field
from lmms_eval_tasks.tasks.revisiting.scoring import (
    category_accuracies,
    check_options,
    check_protocol,
    closing_counts,
    digits_to_words,
    harmonic_mean,
    judged_records,
    mean,
    official_digits_to_words,
    per_question_correct_for,
    percent,
    prediction_text,
)

QUESTION_TYPES: tuple[str, ...] = (
    "absurd",
    "activity_recognition",
    "attribute",
    "color",
    "counting",
    "object_presence",
    "object_recognition",
    "positional_reasoning",
    "scene_recognition",
    "sentiment_understanding",
    "sport_recognition",
    "utility_affordance",
)
ABSURD_ANSWER = "doesnotapply"

_wordnet_lock = threading.Lock()
_wordnet: Any = None


def wordnet() -> Any:
    """nltk's WordNet reader, loaded once (thread-safe); installed on first use (``ensure_wordnet``).

    Raises ``WordNetMissing`` (one line with the fix) when it can be neither found nor installed.
    """
    global _wordnet
    if _wordnet is None:
        with _wordnet_lock:
            if _wordnet is None:
                from lmms_eval_tasks.wordnet import WordNetMissing, ensure_wordnet

                try:
                    how = ensure_wordnet()
                except WordNetMissing as error:
                    raise WordNetMissing(f"TDIUC scoring needs WordNet (synonym matching): {error}") from None
                logger.info(f"TDIUC: {how}")
                from nltk.corpus import wordnet as reader

                _wordnet = reader
    return _wordnet


# The longest WordNet 3.0 lemma has 71 characters and morphy removes suffixes of at most 4: a longer string
# has no synset, so it is not looked up (a runaway generation costs no WordNet time).
MAX_LOOKUP_LENGTH = 100


@lru_cache(maxsize=200_000)
def synset_names(word: str) -> frozenset[str]:
    """Names of every WordNet synset of ``word`` (all parts of speech, morphy applied), cached."""
    if not word or len(word) > MAX_LOOKUP_LENGTH:
        return frozenset()
    reader = wordnet()
    with _wordnet_lock:  # nltk's lazy per-file loading is not thread-safe
        return frozenset(synset.name() for synset in reader.synsets(word))


def normalize(text: str, protocol: str = "default") -> str:
    """The official normalisation: spaces removed, lower case, ASCII digit strings in words (surrounding
    whitespace is stripped first, as the authors' inference code strips every answer)."""
    compact = text.strip().replace(" ", "").lower()
    return official_digits_to_words(compact) if protocol == "official" else digits_to_words(compact)


def lookup_forms(text: str, protocol: str = "default") -> tuple[str, ...]:
    """The strings whose synsets are compared: the normalised form, and (default) the underscore form."""
    compact = normalize(text, protocol)
    if protocol == "official":
        return (compact,)
    words = text.lower().split()
    underscored = "_".join(words) if len(words) > 1 else ""
    return (compact, underscored) if underscored and underscored != compact else (compact,)


def are_synonyms(prediction: str, label: str, protocol: str = "default") -> bool:
    """True when some lookup form of each side shares a WordNet synset with the other."""
    predicted = frozenset().union(*(synset_names(form) for form in lookup_forms(prediction, protocol)))
    if not predicted:
        return False
    labelled = frozenset().union(*(synset_names(form) for form in lookup_forms(label, protocol)))
    return not predicted.isdisjoint(labelled)


def is_correct(prediction: str, label: str, protocol: str = "default") -> bool:
    """Exact match after normalisation, else a shared WordNet synset."""
    if normalize(prediction, protocol) == normalize(label, protocol):
        return True
    return are_synonyms(prediction, label, protocol)


def _question_type(record: dict[str, Any], index: int) -> str:
    value = require_field(record, "question_type", index, str)
    if value not in QUESTION_TYPES:
        raise RecordError(
            index, "question_type", f"unknown TDIUC question type {value!r}; known: {QUESTION_TYPES}"
        )
    return value


def judge_records(
    records: Sequence[dict[str, Any]], protocol: str = "default"
) -> list[tuple[str, str, str, bool]]:
    """Per record: (question_id, question_type, labeled_answer, correct); RecordError on bad fields."""
    protocol = check_protocol(protocol)
    judged = []
    for index, record in enumerate(records):
        question_id = require_field(record, "question_id", index, (str, int))
        question_type = _question_type(record, index)
        label = require_field(record, "labeled_answer", index, str)
        prediction = prediction_text(record, index)
        judged.append((str(question_id), question_type, label, is_correct(prediction, label, protocol)))
    return judged


def score_records(records: Iterable[dict[str, Any]], *, protocol: str = "default") -> dict[str, Any]:
    """TDIUC metrics in percent (see the module docstring); ``protocol`` "default" or "official"."""
    records, judged = judged_records(records, protocol, judge_records)
    by_type: dict[str, list[bool]] = defaultdict(list)
    by_type_answer: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for _, question_type, label, correct in judged:
        by_type[question_type].append(correct)
        by_type_answer[question_type][normalize(label, protocol)].append(correct)
    accuracies = category_accuracies(by_type, QUESTION_TYPES)
    types = list(accuracies)
    normalized = {
        name: mean([percent(sum(values), len(values)) for values in by_type_answer[name].values()])
        for name in types
    }
    metrics: dict[str, Any] = {f"accuracy_{name}": accuracies[name] for name in types}
    metrics["micro_accuracy"] = percent(sum(correct for *_, correct in judged), len(judged))
    if protocol == "official":
        metrics["macro_accuracy"] = sum(accuracies.values()) / len(QUESTION_TYPES)
    else:
        metrics["macro_accuracy"] = mean(list(accuracies.values()))
    metrics["harmonic_mpt"] = harmonic_mean(list(accuracies.values()))
    metrics["normalized_arithmetic_mpt"] = mean(list(normalized.values()))
    metrics["normalized_harmonic_mpt"] = harmonic_mean(list(normalized.values()))
    for name in types:
        metrics[f"normalized_accuracy_{name}"] = normalized[name]
        metrics[f"questions_{name}"] = len(by_type[name])
    return closing_counts(metrics, records, judged, protocol, question_types=len(types))


per_question_correct = per_question_correct_for(judge_records, "tdiuc", itemgetter(3))


__all__ = [
    "check_options",
    "ABSURD_ANSWER",
    "QUESTION_TYPES",
    "are_synonyms",
    "is_correct",
    "judge_records",
    "lookup_forms",
    "normalize",
    "per_question_correct",
    "score_records",
    "synset_names",
    "wordnet",
]


def score_task(records: Iterable[dict[str, Any]], **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one scoring path (harness and ``score``): ``(score_records(records, **options), details)``."""
    return score_records(records, **options), {}
