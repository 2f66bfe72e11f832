"""VRB (Ishmam et al., WACV 2025): VQA accuracy (protocols ``paper``, ``vqa_api``, ``official``) and the
visual robustness metrics over levels 0..5, free of any harness import; docs/vrb.md defines each."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lmms_eval_tasks.framework.input_checks import OptionError, RecordError, check_option
from lmms_eval_tasks.framework.registry import scorer
from lmms_eval_tasks.tasks.vrb import RECORD_SCHEMA
from lmms_eval_tasks.uncertainty.resampling import point_values
from lmms_eval_tasks.uncertainty.result import finite_or_none

PROTOCOLS = ("paper", "vqa_api", "official")
LEVELS = (0, 1, 2, 3, 4, 5)
CLEAN = "clean"
SUB_METRICS = ("first_drop", "range_of_error", "error_rate", "average_error", "average_difference")
MODEL_KEYS = (*SUB_METRICS, "accuracy_clean", "accuracy_average", "relative_accuracy_drop", "vre")


@dataclass(frozen=True)
class Options:
    """VRB's scorer options, each checked here before any record is read (one-line OptionError)."""

    protocol: str = "paper"  # the accuracy: "paper", "vqa_api" or "official" (the module's docstring)
    weights: Sequence[float] | None = None  # VRE's weights of the five sub-metrics
    preferences: Sequence[float] | None = None  # or preferences, turned into weights by a softmax
    details: bool = True  # the per-level, per-type and robustness tables

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise OptionError(f"unknown protocol {self.protocol!r}; expected one of {list(PROTOCOLS)}")
        check_option("details", self.details, bool)
        for name, values in (("weights", self.weights), ("preferences", self.preferences)):
            if values is None:
                continue
            if isinstance(values, str | bytes | dict) or not hasattr(values, "__iter__"):
                wanted = f"a list of {len(SUB_METRICS)} numbers or null"
                raise OptionError(f"option {name}: expected {wanted}, got {values!r:.80}")
            for position, value in enumerate(values):
                check_option(f"{name}[{position}]", value, float)


@scorer(Options, record_schema=RECORD_SCHEMA)
def score(records: Iterable[dict[str, Any]], options: Options) -> tuple[dict[str, Any], dict[str, Any]]:
    """Accuracy per level, by question and answer type, and the single-model robustness metrics; the
    details hold the per-level, per-type and robustness tables (``details=True``), incomplete corruptions."""
    records = list(records)
    scored = _score_records(records, options.protocol)
    resampling = resampling_of(
        records, scored.values, list(scored.level_ids), scored.levels_of, options.weights, options.preferences
    )
    with np.errstate(all="ignore"):  # Resampling.estimate's values, the statistic called from here
        estimate = point_values(resampling.statistic(resampling.totals()))
    metrics: dict[str, Any] = {
        **dict.fromkeys(("accuracy", "accuracy_clean", "relative_accuracy_drop", *SUB_METRICS), math.nan),
        **dict.fromkeys(("accuracy_average", "vre"), math.nan),
        **estimate,
        "questions": len(records),
        "missing_predictions": scored.missing_predictions,
        "protocol": options.protocol,
    }
    if options.details:
        metrics.update(_tables(scored, options))
    flat = {key: value for key, value in metrics.items() if not isinstance(value, dict | list)}
    tables = {key: value for key, value in metrics.items() if isinstance(value, dict | list)}
    undefined = undefined_reasons(flat, tables)
    return flat, {**tables, **({"undefined": undefined} if undefined else {}), "resampling": resampling}


@dataclass
class _Scored:
    """Each record's VQA accuracy (``values``), its level and types as codes, the predictions missing."""

    values: np.ndarray
    level_ids: dict[tuple[str, int], int]
    levels_of: np.ndarray
    type_ids: dict[str, dict[str, int]]
    record_types: dict[str, list[int]]
    missing_predictions: int


def _score_records(records: list[dict[str, Any]], protocol: str) -> _Scored:
    """Every record's VQA accuracy under ``protocol`` (a missing prediction is wrong: counted), with its
    level and question/answer type coded in order of first appearance."""
    cache = _AnswerCache(protocol)
    level_ids: dict[tuple[str, int], int] = {}
    type_ids: dict[str, dict[str, int]] = {"question_type": {}, "answer_type": {}}
    record_levels: list[int] = []
    record_types: dict[str, list[int]] = {"question_type": [], "answer_type": []}
    accuracies: list[float] = []
    missing_predictions = 0
    for index, record in enumerate(records):
        answers, severity, prediction = record["answers"], record["severity"], record["prediction"]
        if prediction is None:
            missing_predictions += 1
            prediction = ""
        if record["corruption"] == CLEAN and severity != 0:
            raise RecordError(index, "severity", f"corruption 'clean' must have severity 0, got {severity}")
        known = cache.answer_counts(record["question_id"], answers)
        if known is None:
            if not answers or not all([isinstance(answer, str) for answer in answers]):
                raise RecordError(index, "answers", "expected a non-empty list of strings (10 human answers)")
            known = cache.add_question(record["question_id"], answers)
        level = (CLEAN, 0) if severity == 0 else (record["corruption"], severity)
        record_levels.append(level_ids.setdefault(level, len(level_ids)))
        accuracies.append(
            cache.accuracy(known[0], known[1], len(answers), record["multiple_choice_answer"], prediction)
        )
        for kind in ("question_type", "answer_type"):
            codes = type_ids[kind]
            record_types[kind].append(codes.setdefault(record[kind], len(codes)))
    if not accuracies:
        raise RecordError("-", "<records>", "no records to score")
    return _Scored(
        np.asarray(accuracies, dtype=np.float64),
        level_ids,
        np.asarray(record_levels, dtype=np.int64),
        type_ids,
        record_types,
        missing_predictions,
    )


def _tables(scored: _Scored, options: Options) -> dict[str, Any]:
    """The details' tables: accuracy per level, the corruptions complete or not, the robustness of each
    complete corruption, accuracy by question and answer type (and level)."""
    level_ids, levels_of, values = scored.level_ids, scored.levels_of, scored.values
    level_sums = np.bincount(levels_of, weights=values, minlength=len(level_ids))
    level_counts = np.bincount(levels_of, minlength=len(level_ids))
    level_sum = {level: float(level_sums[i]) for level, i in level_ids.items()}
    level_count = {level: int(level_counts[i]) for level, i in level_ids.items()}
    by_level = {level_key(*level): _mean(level_sum[level], level_count[level]) for level in sorted(level_sum)}
    corruptions = sorted({name for name, severity in level_sum if severity > 0})
    complete = [name for name in corruptions if all((name, k) in level_sum for k in range(1, 6))]
    has_clean = (CLEAN, 0) in level_sum
    tables: dict[str, Any] = {}
    if has_clean and complete:
        clean = by_level[CLEAN]
        pool = {
            "model": {name: [clean, *(by_level[f"{name}_s{k}"] for k in range(1, 6))] for name in complete}
        }
        result = robustness(pool, weights=options.weights, preferences=options.preferences)
        tables["by_corruption"] = {
            name: {key: value for key, value in cell.items() if key != "scaled"}
            for name, cell in result["cells"]["model"].items()
        }
        tables["vre_by_corruption"] = {name: entry["vre"] for name, entry in result["corruptions"].items()}
        tables["robustness_notes"] = result["notes"] + [
            "vre is scaled over this model's corruptions only; compare models with `lmms-eval-tasks vre`"
        ]
    tables["accuracy_by_level"] = by_level
    tables["questions_by_level"] = {level_key(*level): level_count[level] for level in sorted(level_count)}
    tables["complete_corruptions"] = complete
    tables["incomplete_corruptions"] = {
        name: [k for k in range(6) if (k == 0 and not has_clean) or (k > 0 and (name, k) not in level_sum)]
        for name in corruptions
        if name not in complete or not has_clean
    }
    level_names = [level_key(*level) for level in level_ids]  # in code order: codes are insertion positions
    for kind in ("question_type", "answer_type"):
        names = sorted(scored.type_ids[kind], key=scored.type_ids[kind].get)
        codes = np.asarray(scored.record_types[kind], dtype=np.int64) * len(level_ids) + levels_of
        cells = len(names) * len(level_ids)
        sums = np.bincount(codes, weights=values, minlength=cells).reshape(len(names), len(level_ids))
        counts = np.bincount(codes, minlength=cells).reshape(len(names), len(level_ids))
        tables[f"accuracy_by_{kind}"] = {
            name: float(sums[i].sum() / counts[i].sum())
            for i, name in sorted(enumerate(names), key=lambda x: x[1])
        }
        tables[f"accuracy_by_{kind}_and_level"] = {
            name: {
                level_names[j]: float(sums[i, j] / counts[i, j])
                for j in sorted(range(len(level_ids)), key=level_names.__getitem__)
                if counts[i, j]
            }
            for i, name in sorted(enumerate(names), key=lambda x: x[1])
        }
    return tables


# ---- Records: one per (question, corruption level) for one model.


def known_corruptions() -> tuple[str, ...]:
    """``clean`` and every corruption name the engine defines (all profiles): the record contract's
    allowed ``corruption`` values, so a misspelt name is refused instead of dropping cells."""
    from lmms_eval_tasks.corruptions.tables import SEVERITY_TABLES

    names = {name for table in SEVERITY_TABLES.values() for name in table}
    return (CLEAN, *sorted(names))


def record_identity(record: dict[str, Any]) -> tuple[Any, ...]:
    """(question id, corruption, severity) of a validated record; every severity-0 record is the clean
    level, whatever its corruption name (as the scorer groups them)."""
    question_id = str(record.get("question_id")).strip()
    if record.get("severity") == 0:
        return (question_id, CLEAN, 0)
    return (question_id, record.get("corruption"), record.get("severity"))


def level_key(corruption: str, severity: int) -> str:
    """``clean`` for severity 0, else ``<corruption>_s<severity>`` (the task-name suffix)."""
    return CLEAN if severity == 0 else f"{corruption}_s{severity}"


class _AnswerCache:
    """Normalised human answers per question (shared by all its corruption levels) and predictions."""

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        # question id -> (the answers as given, {normalised answer: count}, unanimous under vqa_api)
        self.questions: dict[Any, tuple[list[str], dict[str, int], bool]] = {}
        self.normalised: dict[str, str] = {}  # an answer or prediction as given -> normalize_answer of it
        self.by_count: dict[tuple[int, int], float] = {}

    def answer_counts(self, question_id: Any, answers: list[str]) -> tuple[dict[str, int], bool] | None:
        """The question's answer counts; None when ``answers`` is not a validated list seen before."""
        cached = self.questions.get(question_id)
        if cached is not None and cached[0] == answers:
            return cached[1], cached[2]
        return None

    def add_question(self, question_id: Any, answers: list[str]) -> tuple[dict[str, int], bool]:
        raw = [text.replace("\n", " ").replace("\t", " ").strip() for text in answers]  # _clean_whitespace
        unanimous_raw = self.protocol == "vqa_api" and len(set(raw)) <= 1
        counts: dict[str, int] = defaultdict(int)
        for answer in raw if unanimous_raw else answers:
            if not unanimous_raw:  # each distinct answer normalised once (ten annotators often agree)
                normalised = self.normalised.get(answer)
                answer = normalised if normalised is not None else self.normalise(answer)
            counts[answer] += 1
        self.questions[question_id] = (answers, dict(counts), unanimous_raw)
        return self.questions[question_id][1], unanimous_raw

    def normalise(self, text: str) -> str:
        """``normalize_answer(text)``, kept for the next time (at most a million texts)."""
        normalised = normalize_answer(text)
        if len(self.normalised) < 1_000_000:
            self.normalised[text] = normalised
        return normalised

    def accuracy(
        self, counts: dict[str, int], unanimous_raw: bool, size: int, mc_answer: str, prediction: str
    ) -> float:
        if self.protocol == "official":
            return 1.0 if prediction.strip() == mc_answer else 0.0
        if unanimous_raw:
            predicted = _clean_whitespace(prediction)
        else:
            predicted = self.normalised.get(prediction)
            if predicted is None:
                predicted = self.normalise(prediction)
        key = (counts.get(predicted, 0), size)
        value = self.by_count.get(key)
        if value is None:
            value = self.by_count[key] = _accuracy_from_count(*key)
        return value


def _mean(total: float, count: int) -> float:
    return total / count if count else float("nan")


UNIT = "image"  # the resampling unit: an image's questions at every corruption level depend on each other


def resampling_of(
    records: list[dict[str, Any]],
    accuracy: np.ndarray,
    level_list: list[tuple[str, int]],
    levels_of: np.ndarray,
    weights: Sequence[float] | None,
    preferences: Sequence[float] | None,
) -> Any:
    """The headline numbers' one definition: a row per record (unit: its ``image_id``, else its question,
    noted), cell = its level, values (VQA accuracy, 1); statistic: accuracies, ``model_summary``."""
    from lmms_eval_tasks.uncertainty.resampling import Resampling

    corruptions = sorted({name for name, severity in level_list if severity > 0})
    order = [(CLEAN, 0)] + [(name, k) for name in corruptions for k in range(1, 6)]
    position = {level: i for i, level in enumerate(order)}
    to_cell = np.asarray([position[level] for level in level_list], dtype=np.int64)
    codes = to_cell[levels_of] if levels_of.size else levels_of
    present = set(level_list)
    complete = [c for c in corruptions if all((c, k) in present for k in range(1, 6))]
    complete = complete if (CLEAN, 0) in present else []
    complete_index = [corruptions.index(c) for c in complete]
    weight_vector = resolve_weights(weights, preferences)
    with_image = all(record.get("image_id") is not None for record in records)
    units = [r["image_id"] if with_image else r["question_id"] for r in records]
    note = "records carry no image_id: resampled by question (ignores the shared image)"
    note = None if with_image else note
    values = np.column_stack([accuracy, np.ones_like(accuracy)])

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
        sums, counts = totals[..., 0], totals[..., 1]
        with np.errstate(all="ignore"):
            level_accuracy = sums / counts  # [R, levels]
            out = {"accuracy": sums.sum(axis=1) / counts.sum(axis=1)}
        out["accuracy_clean"] = level_accuracy[:, 0]
        if not complete:  # no curve: the robustness numbers are undefined (no interval either)
            return out
        rows = totals.shape[0]
        by = level_accuracy[:, 1:].reshape(rows, len(corruptions), 5)[:, complete_index]
        curves = np.concatenate([np.repeat(level_accuracy[:, None, :1], len(complete), axis=1), by], axis=2)
        summary = model_summary(curves[:, None], weight_vector)  # one model: [R, 1]
        for key in ("relative_accuracy_drop", *SUB_METRICS, "accuracy_average", "vre"):
            out[key] = summary[key][:, 0]
        return out

    # the corruption profile and seed name the image a record saw: runs corrupted differently never pair
    identity = [
        f"{r['question_id']}@{order[c][0]}:{order[c][1]}|{r.get('profile')}|{r.get('seed')}"
        for r, c in zip(records, codes.tolist(), strict=True)
    ]
    unit = UNIT if with_image else "question"
    return Resampling(units, values, statistic, unit, codes, len(order), identity=identity, note=note)


def undefined_reasons(metrics: Mapping[str, Any], tables: Mapping[str, Any]) -> dict[str, str]:
    """Why each undefined (NaN) metric has no value, from this run's numbers: ``details["undefined"]``."""
    clean = metrics.get("accuracy_clean")
    clean = clean if isinstance(clean, float) and math.isfinite(clean) else None
    reasons: dict[str, str] = {}
    for metric, value in metrics.items():
        if not (isinstance(value, float) and math.isnan(value)):
            continue
        notes = [note for note in tables.get("robustness_notes") or [] if note.startswith(f"{metric}:")]
        if metric in {"accuracy_clean", "relative_accuracy_drop", "first_drop", "vre"} and clean is None:
            reasons[metric] = "no clean level (severity 0) scored in this run"
        elif metric != "relative_accuracy_drop" and tables.get("complete_corruptions") == []:
            reasons[metric] = (
                "needs a complete corruption (clean + severities 1-5); none is complete in this run"
            )
        elif metric == "relative_accuracy_drop" and clean == 0:
            reasons[metric] = "clean accuracy is 0, so a drop relative to it is undefined: 0/0"
        elif metric == "first_drop" and clean == 1:
            reasons[metric] = "clean error is 0, so the first drop relative to it is undefined"
        elif metric == "range_of_error":
            reasons[metric] = (
                "a corruption's lowest error over its levels is 0, so the range relative to it is undefined"
            )
        elif notes:
            reasons[metric] = "; ".join(notes)
    return reasons


# ---- Answer normalisation of the official VQA evaluation (processPunctuation + processDigitArticle).

# Removed (or replaced by a space) anywhere in an answer; the period is handled separately below.
_PUNCTUATION = tuple(';/[]"{}()=+\\_-><@`,?!')
# A comma between digits ("1,000") makes every punctuation mark vanish instead of becoming a space.
_DIGIT_COMMA = re.compile(r"(?<=\d),+(?=\d)")
# A period not followed by a digit is dropped ("yes." -> "yes", "2.5" kept). The official pattern
# "(?!<=\d)(\.)(?!\d)" means exactly this (its first group is a look-ahead, not a look-behind), and it is
# applied with re.UNICODE passed as the count argument, so at most 32 periods go.
_PERIOD = re.compile(r"\.(?!\d)")
_PERIOD_MAX_REPLACEMENTS = int(re.UNICODE)  # 32, as in the official call
_NUMBER_WORDS = {
    word: str(index)
    for index, word in enumerate("zero one two three four five six seven eight nine ten".split())
}
_NUMBER_WORDS["none"] = "0"
_ARTICLES = frozenset({"a", "an", "the"})


# Contractions: apostrophe-less spelling = the official VQA evaluation's canonical form (its table, as data;
# quirks kept: "somebody'd" maps to "somebodyd", and capitalised keys never match after lower-casing).
_CONTRACTION_PAIRS = (
    "aint=ain't arent=aren't cant=can't couldve=could've couldnt=couldn't couldn'tve=couldn't've "
    "couldnt've=couldn't've didnt=didn't doesnt=doesn't dont=don't hadnt=hadn't hadnt've=hadn't've "
    "hadn'tve=hadn't've hasnt=hasn't havent=haven't hed=he'd hed've=he'd've he'dve=he'd've hes=he's "
    "howd=how'd howll=how'll hows=how's Id've=I'd've I'dve=I'd've Im=I'm Ive=I've isnt=isn't itd=it'd "
    "itd've=it'd've it'dve=it'd've itll=it'll let's=let's maam=ma'am mightnt=mightn't "
    "mightnt've=mightn't've mightn'tve=mightn't've mightve=might've mustnt=mustn't mustve=must've "
    "neednt=needn't notve=not've oclock=o'clock oughtnt=oughtn't ow's'at='ow's'at 'ows'at='ow's'at "
    "'ow'sat='ow's'at shant=shan't shed've=she'd've she'dve=she'd've she's=she's shouldve=should've "
    "shouldnt=shouldn't shouldnt've=shouldn't've shouldn'tve=shouldn't've somebody'd=somebodyd "
    "somebodyd've=somebody'd've somebody'dve=somebody'd've somebodyll=somebody'll "
    "somebodys=somebody's someoned=someone'd someoned've=someone'd've someone'dve=someone'd've "
    "someonell=someone'll someones=someone's somethingd=something'd somethingd've=something'd've "
    "something'dve=something'd've somethingll=something'll thats=that's thered=there'd "
    "thered've=there'd've there'dve=there'd've therere=there're theres=there's theyd=they'd "
    "theyd've=they'd've they'dve=they'd've theyll=they'll theyre=they're theyve=they've twas='twas "
    "wasnt=wasn't wed've=we'd've we'dve=we'd've weve=we've werent=weren't whatll=what'll "
    "whatre=what're whats=what's whatve=what've whens=when's whered=where'd wheres=where's "
    "whereve=where've whod=who'd whod've=who'd've who'dve=who'd've wholl=who'll whos=who's "
    "whove=who've whyll=why'll whyre=why're whys=why's wont=won't wouldve=would've wouldnt=wouldn't "
    "wouldnt've=wouldn't've wouldn'tve=wouldn't've yall=y'all yall'll=y'all'll y'allll=y'all'll "
    "yall'd've=y'all'd've y'alld've=y'all'd've y'all'dve=y'all'd've youd=you'd youd've=you'd've "
    "you'dve=you'd've youll=you'll youre=you're youve=you've "
)
_CONTRACTIONS = dict(pair.split("=", 1) for pair in _CONTRACTION_PAIRS.split())


def process_punctuation(text: str) -> str:
    """The official VQA punctuation step: strip or space out punctuation, drop periods not before a digit."""
    remove = _DIGIT_COMMA.search(text) is not None
    out = text
    for mark in _PUNCTUATION:
        if remove or (mark + " ") in text or (" " + mark) in text:
            out = out.replace(mark, "")
        else:
            out = out.replace(mark, " ")
    return _PERIOD.sub("", out, count=_PERIOD_MAX_REPLACEMENTS)


def process_digit_article(text: str) -> str:
    """The official VQA word step: lower-case, number words to digits, drop articles, fix contractions."""
    words = []
    for word in text.lower().split():  # one loop: every answer of a run passes here
        word = _NUMBER_WORDS.get(word, word)
        if word not in _ARTICLES:
            words.append(_CONTRACTIONS.get(word, word))
    return " ".join(words)


def _clean_whitespace(text: str) -> str:
    return text.replace("\n", " ").replace("\t", " ").strip()


def normalize_answer(text: str) -> str:
    """A prediction or human answer as the VQA evaluation compares it ("Two." -> "2", "the dog" -> "dog")."""
    return process_digit_article(process_punctuation(text.replace("\n", " ").replace("\t", " ").strip()))


def leave_one_out_accuracy(matches: Sequence[bool]) -> float:
    """VQA accuracy from which annotators match: mean over each left-out annotator of min(#others / 3, 1)."""
    total = sum(1 for match in matches if match)
    count = len(matches)
    if count == 0:
        raise ValueError("no human answers")
    return sum(min(1.0, (total - (1 if match else 0)) / 3.0) for match in matches) / count


def _accuracy_from_count(matching: int, count: int) -> float:
    """``leave_one_out_accuracy`` when ``matching`` of ``count`` annotators match (the same arithmetic)."""
    return (matching * min(1.0, (matching - 1) / 3.0) + (count - matching) * min(1.0, matching / 3.0)) / count


def vqa_accuracy(
    prediction: str, answers: Sequence[str], multiple_choice_answer: str = "", protocol: str = "paper"
) -> float:
    """Accuracy of one prediction under ``protocol`` (see the module docstring)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; expected one of {list(PROTOCOLS)}")
    if protocol == "official":
        return 1.0 if prediction.strip() == multiple_choice_answer else 0.0
    raw = [_clean_whitespace(answer) for answer in answers]
    if protocol == "vqa_api" and len(set(raw)) <= 1:
        predicted = _clean_whitespace(prediction)
        return leave_one_out_accuracy([answer == predicted for answer in raw])
    predicted = normalize_answer(prediction)
    return leave_one_out_accuracy([normalize_answer(answer) == predicted for answer in answers])


# ---- Robustness sub-metrics, vectorised over any leading axes: accuracy arrays end with the 6 levels 0..5.

_LEVEL_AXIS = np.arange(6, dtype=np.float64)
_LEVEL_CENTRED = _LEVEL_AXIS - _LEVEL_AXIS.mean()  # -2.5 .. 2.5; sum of squares 17.5


def sub_metrics(accuracy: np.ndarray) -> dict[str, np.ndarray]:
    """Raw sub-metrics of accuracy curves ``[..., 6]`` (levels 0..5); division by a zero error gives NaN."""
    accuracy = np.asarray(accuracy, dtype=np.float64)
    if accuracy.shape[-1] != 6:
        raise ValueError(
            f"expected 6 levels (clean + severities 1..5) on the last axis, got {accuracy.shape}"
        )
    error = 1.0 - accuracy
    clean_error = error[..., 0]
    lowest = error.min(axis=-1)
    clean_accuracy = accuracy[..., 0]
    mean_accuracy = accuracy.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        first_drop = np.where(clean_error > 0, (error[..., 1] - clean_error) / clean_error, np.nan)
        range_of_error = np.where(lowest > 0, (error.max(axis=-1) - lowest) / lowest, np.nan)
    relative_drop = drop_ratio(clean_accuracy - mean_accuracy, clean_accuracy)
    error_rate = (
        (error - error.mean(axis=-1, keepdims=True)) @ _LEVEL_CENTRED / float(_LEVEL_CENTRED @ _LEVEL_CENTRED)
    )
    return {
        "first_drop": first_drop,
        "range_of_error": range_of_error,
        "error_rate": error_rate,
        "average_error": error.mean(axis=-1),
        "average_difference": (error[..., 1:] - clean_error[..., None]).mean(axis=-1),
        "accuracy_clean": clean_accuracy,
        "accuracy_average": mean_accuracy,
        "relative_accuracy_drop": relative_drop,
    }


def drop_ratio(loss: np.ndarray, clean: np.ndarray) -> np.ndarray:
    """The relative accuracy drop ``loss / clean`` (loss = clean minus mean accuracy over the levels),
    NaN where the clean accuracy is 0: the one definition for a cell, a model and a corruption."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(clean > 0, loss / np.where(clean > 0, clean, 1.0), np.nan)


def model_summary(table: np.ndarray, weight_vector: np.ndarray) -> dict[str, np.ndarray]:
    """Each model's numbers ``[..., model]`` from accuracy curves ``[..., model, corruption, 6]``: sub-metrics
    and accuracies averaged over its corruptions, relative drop, VRE (scorer, bootstrap, ``vre``)."""
    raw = sub_metrics(table)  # each [..., V, C]
    out = {name: raw[name].mean(axis=-1) for name in SUB_METRICS}
    out["accuracy_clean"] = table[..., 0].mean(axis=-1)
    out["accuracy_average"] = raw["accuracy_average"].mean(axis=-1)
    clean, average = out["accuracy_clean"], out["accuracy_average"]
    out["relative_accuracy_drop"] = drop_ratio(clean - average, clean)
    out["vre"] = vre_scores(raw, weight_vector)[0]
    return out


def vre_scores(raw: Mapping[str, np.ndarray], weight_vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(VRE per model ``[..., V]``, per corruption ``[..., C]``) from raw sub-metrics ``[..., V, C]``: each
    min-max scaled over the pool's finite cells (constant: 0, undefined: NaN), weighted; NaN under 2 cells."""
    stacked = np.stack([np.asarray(raw[name], dtype=np.float64) for name in SUB_METRICS], axis=-1)
    models, corruptions = stacked.shape[-3], stacked.shape[-2]
    if models * corruptions < 2:
        return np.full(stacked.shape[:-2], np.nan), np.full(stacked.shape[:-3] + (corruptions,), np.nan)
    scaled = _scaled(stacked, (-3, -2))  # NaN propagates: a model with an undefined cell
    return scaled.mean(axis=-2) @ weight_vector, scaled.mean(axis=-3) @ weight_vector


def softmax_weights(preferences: Sequence[float]) -> np.ndarray:
    """W = softmax(preference scores), one per sub-metric (zeros give 0.2 each)."""
    scores = np.asarray(preferences, dtype=np.float64)
    if scores.shape != (len(SUB_METRICS),) or not np.all(np.isfinite(scores)):
        raise ValueError(f"expected {len(SUB_METRICS)} finite preference scores, got {list(preferences)}")
    exponentials = np.exp(scores - scores.max())
    return exponentials / exponentials.sum()


def resolve_weights(
    weights: Sequence[float] | None = None, preferences: Sequence[float] | None = None
) -> np.ndarray:
    """The five VRE weights: explicit ``weights`` (non-negative, summing to 1), else softmax(preferences)."""
    if weights is not None and preferences is not None:
        raise ValueError("give weights or preferences, not both")
    if weights is None:
        return softmax_weights(preferences if preferences is not None else [0.0] * len(SUB_METRICS))
    values = np.asarray(weights, dtype=np.float64)
    if values.shape != (len(SUB_METRICS),) or not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError(f"expected {len(SUB_METRICS)} non-negative weights, got {list(weights)}")
    if abs(values.sum() - 1.0) > 1e-6:
        raise ValueError(f"weights must sum to 1 (got {values.sum():.6g}); or pass preferences for a softmax")
    return values


def min_max_scale(values: np.ndarray) -> tuple[np.ndarray, str | None]:
    """Min-max scale over all finite entries; a constant metric scales to 0 (returned note says so)."""
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    note = None
    if finite.size == 0:
        note = "no finite value in the pool"
    elif finite.max() == finite.min():
        note = "constant over the pool: scaled to 0"
    return _scaled(values, tuple(range(values.ndim))), note


def _scaled(values: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``values`` min-max scaled over ``axes`` (finite entries only; constant -> 0; not finite -> NaN)."""
    finite = np.isfinite(values)
    low = np.where(finite, values, np.inf).min(axis=axes, keepdims=True)
    high = np.where(finite, values, -np.inf).max(axis=axes, keepdims=True)
    spread = high - low
    with np.errstate(invalid="ignore"):
        scaled = np.where(spread > 0, (values - low) / np.where(spread > 0, spread, 1.0), 0.0)
    return np.where(finite, scaled, np.nan)


def robustness(
    accuracy: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    weights: Sequence[float] | None = None,
    preferences: Sequence[float] | None = None,
) -> dict[str, Any]:
    """``{"models", "corruptions", "cells", "pool", "notes"}`` of a pool, ``accuracy[model][corruption]`` =
    accuracies at levels 0..5, every model the same corruptions; VRE null (noted) under two cells."""
    models = list(accuracy)
    if not models:
        raise ValueError("empty pool: no model")
    corruptions = list(accuracy[models[0]])
    for model in models:
        if set(accuracy[model]) != set(corruptions):
            missing = sorted(set(corruptions) - set(accuracy[model]))
            extra = sorted(set(accuracy[model]) - set(corruptions))
            raise ValueError(
                f"model {model!r} does not cover the pool's corruptions (missing {missing}, extra {extra}): "
                "VRE means over different corruption sets are not comparable"
            )
    if not corruptions:
        raise ValueError("empty pool: no corruption")
    table = np.array([[accuracy[model][name] for name in corruptions] for model in models], dtype=np.float64)
    return robustness_array(table, models, corruptions, weights=weights, preferences=preferences)


def robustness_array(
    table: np.ndarray,
    models: Sequence[str],
    corruptions: Sequence[str],
    *,
    weights: Sequence[float] | None = None,
    preferences: Sequence[float] | None = None,
) -> dict[str, Any]:
    """``robustness`` on an array ``[model, corruption, level]`` of accuracies (the vectorised core)."""
    if table.ndim != 3 or table.shape[2] != 6 or table.shape[:2] != (len(models), len(corruptions)):
        raise ValueError(f"accuracy table of shape {table.shape} does not match the models and corruptions")
    if np.any(~np.isfinite(table)) or np.any((table < 0) | (table > 1)):
        raise ValueError("accuracies must be fractions in [0, 1]")
    weight_vector = resolve_weights(weights, preferences)
    raw = sub_metrics(table)  # each [V, C]
    summary = model_summary(table, weight_vector)  # each [V]
    notes: list[str] = []
    cells = table.shape[0] * table.shape[1]
    clean = table[:, :, 0]
    if np.any(np.abs(clean - clean[:, :1]) > 1e-9):
        notes.append("clean (level 0) accuracy differs between a model's corruptions; each cell uses its own")
    for name in ("first_drop", "range_of_error"):
        if np.any(~np.isfinite(raw[name])):
            notes.append(f"{name} undefined (division by a zero error) for some cells: null")
    scaled: dict[str, np.ndarray] = {}
    if cells < 2:
        notes.append("VRE needs at least two (model, corruption) cells to min-max scale: null")
    else:
        notes += [f"{name}: {note}" for name in SUB_METRICS if (note := min_max_scale(raw[name])[1])]
        scaled_stack = _scaled(np.stack([raw[name] for name in SUB_METRICS], axis=-1), (-3, -2))
        scaled = {name: scaled_stack[..., m] for m, name in enumerate(SUB_METRICS)}
    vre_corruptions = vre_scores(raw, weight_vector)[1]
    relative_corruption = drop_ratio((clean - raw["accuracy_average"]).sum(axis=0), clean.sum(axis=0))

    def corruption_entry(c: int) -> dict[str, Any]:
        keys = (*SUB_METRICS, "accuracy_average")
        values = {name: finite_or_none(raw[name][:, c].mean()) for name in keys}
        values["relative_accuracy_drop"] = finite_or_none(relative_corruption[c])
        values["vre"] = finite_or_none(vre_corruptions[c])
        return values

    cell_entries: dict[str, dict[str, Any]] = {}
    for v, model in enumerate(models):
        cell_entries[model] = {}
        for c, name in enumerate(corruptions):
            keys = (*SUB_METRICS, "accuracy_average", "relative_accuracy_drop")
            cell = {key: finite_or_none(raw[key][v, c]) for key in keys}
            cell["accuracy_by_level"] = [float(value) for value in table[v, c]]
            if scaled:
                cell["scaled"] = {key: finite_or_none(scaled[key][v, c]) for key in SUB_METRICS}
            cell_entries[model][name] = cell
    return {
        "models": {
            model: {key: finite_or_none(summary[key][v]) for key in MODEL_KEYS}
            for v, model in enumerate(models)
        },
        "corruptions": {name: corruption_entry(c) for c, name in enumerate(corruptions)},
        "cells": cell_entries,
        "pool": {
            "models": list(models),
            "corruptions": list(corruptions),
            "cells": cells,
            "weights": dict(zip(SUB_METRICS, (float(w) for w in weight_vector), strict=True)),
            "vre_computed": cells >= 2,
        },
        "notes": notes,
    }
