"""TDIUC scoring (Kafle & Kanan 2017, as in "Revisiting MLLM Evaluation"): equal after normalisation or a
shared WordNet synset; micro, macro, harmonic, normalized MPTs in percent (docs/revisiting.md)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any

import numpy as np
from loguru import logger

from lmms_eval_tasks.framework.input_checks import require_field
from lmms_eval_tasks.framework.registry import scorer
from lmms_eval_tasks.tasks.revisiting.scoring import (
    ProtocolOptions,
    choice_field,
    closing_counts,
    digits_to_words,
    judged_records,
    official_digits_to_words,
    per_question_correct_for,
    prediction_text,
)
from lmms_eval_tasks.uncertainty.resampling import (
    Resampling,
    cell_codes,
    group_matrix,
    ordered_sum,
    percent,
    present_harmonic,
    present_mean,
)

QUESTION_TYPES: tuple[str, ...] = tuple(
    "absurd activity_recognition attribute color counting object_presence object_recognition "
    "positional_reasoning scene_recognition sentiment_understanding sport_recognition "
    "utility_affordance".split()
)
ABSURD_ANSWER = "doesnotapply"
UNIT = "question"  # the resampling unit: questions are independent

_wordnet_lock = threading.Lock()
_wordnet: Any = None


@scorer(ProtocolOptions)
def score(
    records: Iterable[dict[str, Any]], options: ProtocolOptions
) -> tuple[dict[str, Any], dict[str, Any]]:
    """TDIUC metrics in percent (see the module docstring) and details (the ``resampling`` they come
    from)."""
    protocol = options.protocol
    records, judged = judged_records(records, protocol, judge_records)
    resampling = resampling_of(judged, protocol)
    metrics: dict[str, Any] = resampling.estimate()
    types = [name for name in QUESTION_TYPES if f"accuracy_{name}" in metrics]
    for name in types:
        metrics[f"questions_{name}"] = sum(question_type == name for _, question_type, _, _ in judged)
    return closing_counts(metrics, records, judged, protocol, question_types=len(types)), {
        "resampling": resampling
    }


def resampling_of(judged: list[tuple[str, str, str, bool]], protocol: str) -> Resampling:
    """Every metric's one definition: a row per question, cell = (type, normalised label), values
    (correct, 1); per type accuracy and mean label accuracy, micro, macro (official: sum over 12), MPTs."""
    keys = [(question_type, normalize(label, protocol)) for _, question_type, label, _ in judged]
    codes, cells = cell_codes(keys)
    types = [name for name in QUESTION_TYPES if any(cell[0] == name for cell in cells)]
    to_type = group_matrix(cells, lambda cell: cell[0], types)
    values = np.asarray([[float(correct), 1.0] for *_, correct in judged]).reshape(-1, 2)

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
        hits, counts = totals[..., 0], totals[..., 1]  # [R, cells]
        accuracy = percent(hits @ to_type, counts @ to_type)  # [R, types]
        cell_accuracy = percent(hits, counts)
        normalized = np.stack(
            [present_mean(np.where(to_type[:, j] > 0, cell_accuracy, np.nan)) for j in range(len(types))],
            axis=-1,
        ).reshape(hits.shape[0], len(types))
        out = {f"accuracy_{name}": accuracy[:, j] for j, name in enumerate(types)}
        out["micro_accuracy"] = percent(ordered_sum(hits), ordered_sum(counts))
        if protocol == "official":
            out["macro_accuracy"] = ordered_sum(np.nan_to_num(accuracy, nan=0.0)) / len(QUESTION_TYPES)
        else:
            out["macro_accuracy"] = present_mean(accuracy)
        out["harmonic_mpt"] = present_harmonic(accuracy)
        out["normalized_arithmetic_mpt"] = present_mean(normalized)
        out["normalized_harmonic_mpt"] = present_harmonic(normalized)
        for j, name in enumerate(types):
            out[f"normalized_accuracy_{name}"] = normalized[:, j]
        return out

    ids = [question_id for question_id, *_ in judged]
    return Resampling(ids, values, statistic, UNIT, codes, len(cells), identity=ids)


def wordnet() -> Any:
    """nltk's WordNet reader, loaded once (thread-safe), installed on first use; ``WordNetMissing`` (one
    line with the fix) when it can be neither found nor installed."""
    global _wordnet
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


def judge_records(
    records: Sequence[dict[str, Any]], protocol: str = "default"
) -> list[tuple[str, str, str, bool]]:
    """Per record: (question_id, question_type, labeled_answer, correct); RecordError on bad fields.
    ``protocol`` checked by ``ProtocolOptions``."""
    judged = []
    for index, record in enumerate(records):
        question_id = require_field(record, "question_id", index, (str, int))
        question_type = choice_field(record, "question_type", index, QUESTION_TYPES, "TDIUC question type")
        label = require_field(record, "labeled_answer", index, str)
        prediction = prediction_text(record, index)
        judged.append((str(question_id), question_type, label, is_correct(prediction, label, protocol)))
    return judged


per_question_correct = per_question_correct_for(judge_records, "tdiuc", itemgetter(3))
