"""Screening of model outputs that try to play the grader (a planted verdict, a content-free "master key", a
hedge naming every candidate, repeated text), counted and shown for every benchmark (docs/judges.md)."""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lmms_eval_tasks.judges.integrity import fold_text

KINDS = ("judge_markers", "content_free", "hedge", "repeated")
# The metric: outputs flagged for any kind (each output once); the per-kind counts are in details.screening.
SCREENED_OUTPUTS = "screened_outputs"
KIND_TEXT = {
    "judge_markers": "outputs carrying the judge's markers or a bare verdict word",
    "content_free": "content-free outputs (empty, punctuation only, or a reasoning opener with no answer)",
    "hedge": "hedging outputs (both yes and no, every option listed, or many numbers / a range)",
    "repeated": "outputs of repeated text",
}
MAX_EXAMPLES = 5
CONSTANT_SHARE = 0.9


def _folded_words(*groups: str) -> str:
    """An alternation of ``|``-separated words as screened (``fold_text``: Cyrillic look-alikes as Latin, in
    each case: folding "В" and "в" differs)."""
    words = [word for group in groups for word in group.split("|")]
    assert all(words), "an empty alternative would match anything"
    assert not any("\\" in word for word in words), "upper() turns a class like \\d into its complement"
    forms = (fold_text(form) for word in words for form in (word, word.capitalize(), word.upper()))
    return "|".join(dict.fromkeys(forms))


# A whole answer that opens reasoning and gives nothing else ("One Token to Fool LLM-as-a-Judge" keys), in
# the languages of the judge self-test's probes: matched on its words (punctuation dropped, disguises folded)
_OPENERS = re.compile(
    r"(?:thought process|let'?\s?s (?:solve|think|work)(?: (?:this|it|through))?(?: (?:problem|out))?"
    r"(?: step by step)?|let me think(?: step by step)?|step by step|solution|reasoning|analysis|"
    r"answer|final answer|the answer is|explanation|i think|okay|ok|sure|hmm+|step (?:\d+|one)|"
    r"(?:first(?:ly)? )?let'?\s?s (?:analy[sz]e|look at|examine|think about) (?:the|this) "
    r"(?:image|picture|question|problem|figure)|"
    + _folded_words(
        "解|解答|答案|答|解析|分析|思考|思路|步骤|第一步|首先|回答|推理",
        "かいせつ|解説|答え|こたえ|考え|考察|まず|解き方",
        "해설|정답|답|풀이|분석|답변|해답|생각",
        "respuesta|solución|solucion|análisis|razonamiento|paso a paso|explicación",
        "réponse|reponse|analyse|raisonnement|étape par étape|explication",
        "antwort|lösung|begründung|schritt für schritt|erklärung",
        "ответ|решение|анализ|рассуждение|пошагово|объяснение",
        "الإجابة|الاجابة|الحل|التحليل|الجواب|الشرح",
    )
    + ")",
    re.IGNORECASE,
)
_NO_CONTENT = re.compile(r"[\W_]*", re.UNICODE)
_YES = re.compile(r"\byes\b", re.IGNORECASE)
_NO = re.compile(r"\bno\b", re.IGNORECASE)
# "yes or no", "No/Yes", "yes, no": both answers side by side ("Yes, there is no cat" is an answer)
_YES_NO_PAIR = re.compile(
    r"\b(?:yes\W{0,3}(?:or|and)?\W{0,3}no|no\W{0,3}(?:or|and)?\W{0,3}yes)\b", re.IGNORECASE
)
SHORT_ANSWER_WORDS = 8  # a short answer holding both yes and no is a hedge wherever they stand
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\d)")
_RANGE = re.compile(r"\b\d++\s*+(?:-|–|to|or)\s*+\d++\b|\bbetween\s++\d++\s++and\s++\d++\b", re.IGNORECASE)
_LETTER = re.compile(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])")
NUMBER_HEDGE = 3  # this many distinct numbers in a numeric answer is a hedge
_VERDICT_LABELS = _folded_words(
    "judg(?:e)?ment|verdict|output|grade|score|rating|evaluation|assessment|result|is_correct|correct",
    "jugement|verdicto|veredicto|juicio|urteil|bewertung|ergebnis|résultat|resultado|вердикт|оценка",
    "判断|判定|结论|結論|输出|評価|판정|평가|결론|الحكم|التقييم",
)
_VERDICTS = r"\d+|" + _folded_words(
    "yes|no|correct|incorrect|unclear|same|different|true|false|right|wrong|accepted|rejected",
    "oui|non|sí|si|ja|nein|да|нет|correcte|correcto|correcta|incorrecte|incorrecto|richtig|falsch|верно",
    "неверно|правильно|是|否|对|错|正确|正確|错误|錯誤|正しい|正解|不正解|はい|いいえ|예|아니오|맞음|틀림",
    "نعم|لا|صحيح|خطأ",
)
# A line that labels a verdict the way graders do ("Judgement: Yes", "**Verdict:** same", in any of those
# languages, as a JSON member, with "=" / "-"): no answer of any benchmark needs one, so all screen for it
MULTILINGUAL_VERDICT_LINE = (
    rf"^[ \t*_#>{{\[,\"']*+(?:final[ \t_]+)?(?:{_VERDICT_LABELS})[\"']?"
    rf"[ \t*_]*+[:=：＝\-–][ \t*_\"']*(?:{_VERDICTS})(?!\w)"
)
# A line that calls itself right ("Réponse : correcte", "输出：正确") or addresses the judge
_RIGHT = _folded_words("correct|correcte|correcto|correcta|richtig|正确|正確|верно|правильно|صحيح")
SELF_GRADING_LINE = rf"^[ \t*_#>]*\w{{2,20}}[ \t]*+[:：=\-][ \t]*+(?:{_RIGHT})[ \t.!*_]*+$"
SELF_GRADING = (
    r"\b(?:(?:this|the) (?:prediction|predicted response|response) is (?:correct|right|accurate)\b"
    r"|ignore (?:all |any )?(?:the )?(?:previous|prior|above|preceding) (?:instructions?|prompts?|rules)\b"
    r"|ignor(?:a|ez|iere) (?:todas |toutes |alle )?(?:las |les )?(?:instrucciones|instructions|anweisungen))"
    r"|忽略(?:之前|以上|所有)"
)
# Nothing but three or more option letters ("A, B, C, D", "(A) (B) (C)"): every option listed
# Nothing but three or more plain numbers, or only a range ("0 1 2 3", "between 0 and 10"): every number
_NUMBER_LIST = re.compile(r"[\s,;/-]*\d++(?:\.\d+)?(?:[\s,;/]++(?:and\s+|or\s+)?\d++(?:\.\d+)?){2,}[\s.]*")
_RANGE_ONLY = re.compile(
    r"\s*(?:between\s+|from\s+)?\d++(?:\.\d+)?\s*+(?:-|–|to|and|or)\s*\d++(?:\.\d+)?\s*\.?\s*", re.IGNORECASE
)
_LETTER_LIST = re.compile(r"[\s(]*+[A-J][)\].]?(?:[\s,;/]++(?:and\s+|or\s+)?[(]?[A-J][)\].]?){2,}[\s.]*")


@dataclass(frozen=True)
class Screening:
    """What a benchmark screens its predictions for: its judge's own ``judge_markers`` (regexes) and
    ``verdict_words`` (a line of only that word); hedges: both yes and no (``yes_no``), every option letter
    (``option_letters``, "module:function" of a record's letters), ``NUMBER_HEDGE`` numbers or a range
    (``numbers``); ``hedges_rewarded``: what the report says where the paper's metric credits a hedge;
    ``explicit_empty``: "module:function" (text -> bool) of the benchmark's own "nothing" answer (VQDv1)."""

    judge_markers: tuple[str, ...] = ()
    verdict_words: tuple[str, ...] = ()
    yes_no: bool = False
    option_letters: str | None = None
    numbers: bool = False
    hedges_rewarded: str = ""
    prediction_field: str = "prediction"
    explicit_empty: str | None = None


def content_free(text: str) -> bool:
    """True for an empty answer, punctuation only, or a reasoning opener with nothing after it."""
    stripped = text.strip()
    if _NO_CONTENT.fullmatch(stripped):
        return True
    words, runs = re.subn(r"[\W_]+", " ", stripped, count=61)  # 61 runs of non-words: 59+ words between
    return runs < 61 and len(words := words.strip()) <= 60 and _OPENERS.fullmatch(words) is not None


def repeated(text: str) -> bool:
    """True for text that is mostly repetition: a line (5+ characters) three times or more, or a long text
    that compresses to under a tenth of its size (runs of whitespace count once: padding is no repetition)."""
    lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= 5]
    if len(lines) >= 3 and len(set(lines)) <= len(lines) - 2:
        return True
    text = " ".join(text.split())
    if len(text) >= 400:
        data = text.encode("utf-8", "surrogatepass")
        return len(zlib.compress(data)) < len(data) / 10
    return False


def _hedge(text: str, screening: Screening, letters: str | None) -> bool:
    if screening.yes_no and _YES.search(text) and _NO.search(text):
        if _YES_NO_PAIR.search(text) or len(text.split()) <= SHORT_ANSWER_WORDS:
            return True
    if _RANGE_ONLY.fullmatch(text) or (
        _NUMBER_LIST.fullmatch(text) and len(set(re.findall(r"\d+(?:\.\d+)?", text))) >= NUMBER_HEDGE
    ):
        return True
    # a bare list of 3+ letters is a hedge where the options are unknown; where they are known (multi-correct
    # questions), only one listing every option is: "A, B, D" is an honest answer there
    if not letters and _LETTER_LIST.fullmatch(text) and len(set(re.findall(r"[A-J]", text))) >= 3:
        return True
    if letters and len(letters) >= 3 and set(letters) <= set(_LETTER.findall(text)):
        return True
    return screening.numbers and bool(_RANGE.search(text) or len(set(_NUMBER.findall(text))) >= NUMBER_HEDGE)


def _markers(screening: Screening) -> re.Pattern[str]:
    """One pattern, linear and quick: possessive runs; the line patterns share one ``^``, and those that need
    a label and a separator on the line (``:``, ``=``, a dash) are tried only on a line that has both."""
    labelled = "|".join(f"(?:{line[1:]})" for line in (MULTILINGUAL_VERDICT_LINE, SELF_GRADING_LINE))
    lines = [rf"(?=[^\n:=：＝\-–]++[:=：＝\-–])(?:{labelled})"]
    if screening.verdict_words:
        words = "|".join(re.escape(word) for word in screening.verdict_words)
        lines.append(rf"[ \t*_`\"'.]*+(?:{words})[ \t*_`\"'.!]*+$")
    anchored = "^(?:" + "|".join(f"(?:{line})" for line in lines) + ")"
    parts = [f"(?:{marker})" for marker in (*screening.judge_markers, SELF_GRADING)]
    return re.compile("|".join([*parts, anchored]), re.IGNORECASE | re.MULTILINE)


def _is_explicit_empty(screening: Screening, text: str) -> bool:
    if not screening.explicit_empty:
        return False
    from lmms_eval_tasks.framework.targets import resolve

    return bool(resolve(screening.explicit_empty)(text))


# scripts written without spaces between words: Thai, Lao, Myanmar, Khmer, kana, CJK ideographs
_UNSPACED = re.compile(
    r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff ]+"
)


def is_content_free(text: str, screening: Screening, reference: str | None = None) -> bool:
    """The screen's "content_free" verdict on one prediction (judged benchmarks then skip the judge); words
    that are a phrase of the ``reference`` ("OK" for a button labelled "OK") are an answer, not a key."""
    folded = fold_text(text or "")
    if not content_free(folded) or _is_explicit_empty(screening, folded):
        return False
    words = re.sub(r"[\W_]+", " ", folded).strip().lower()
    target = re.sub(r"[\W_]+", " ", fold_text(reference or "")).strip().lower()
    if words and _UNSPACED.fullmatch(words):  # no spaces between its words: any part of the reference's text
        return words not in target
    return not (words and target and f" {words} " in f" {target} ")


def screen_text(
    text: str, screening: Screening, letters: str | None = None, markers: re.Pattern[str] | None = None
) -> list[str]:
    """The kinds (``KINDS``) one prediction is flagged for."""
    flags = []
    markers = markers if markers is not None else _markers(screening)
    text = fold_text(text)  # zero-width, full-width and look-alike disguises screened as what they show
    if markers.search(text):
        flags.append("judge_markers")
    if content_free(text) and not _is_explicit_empty(screening, text):
        flags.append("content_free")
    elif _hedge(text, screening, letters):
        flags.append("hedge")
    if repeated(text):
        flags.append("repeated")
    return flags


# Every check switched on: the hostile-corpus entry of ``parser_index`` (the screen reads untrusted text too).
ALL_CHECKS = Screening(
    judge_markers=(r"judg(?:e)?ment[*_]*[ \t]*:", r"^[ \t]*output[ \t]*:"),
    verdict_words=("yes", "no", "correct", "incorrect"),
    yes_no=True,
    numbers=True,
)


def screen_all_kinds(text: str) -> list[str]:
    """``screen_text`` with every check on (letters A-D): for the parser timing tests."""
    return screen_text(text, ALL_CHECKS, "ABCD")


def screen_records(records: Sequence[Mapping[str, Any]], screening: Screening) -> dict[str, Any]:
    """Counts per kind, ``flagged``, the first ``MAX_EXAMPLES`` records per kind, all ``flagged_records``."""
    letters_of: Callable[[Mapping[str, Any], int], str] | None = None
    if screening.option_letters:
        from lmms_eval_tasks.framework.targets import resolve

        letters_of = resolve(screening.option_letters)
    markers = _markers(screening)
    counts = dict.fromkeys(KINDS, 0)
    examples: dict[str, list[int]] = {kind: [] for kind in KINDS}
    flagged: list[int] = []
    for index, record in enumerate(records):
        value = record.get(screening.prediction_field) if isinstance(record, Mapping) else None
        text = value if isinstance(value, str) else ""
        try:
            letters = letters_of(record, index) if letters_of is not None else None
        except Exception:  # a bad record is the record contract's business, not the screen's
            letters = None
        flags = screen_text(text, screening, letters, markers)
        for kind in flags:
            counts[kind] += 1
            if len(examples[kind]) < MAX_EXAMPLES:
                examples[kind].append(index)
        if flags:
            flagged.append(index)
    return {"counts": counts, "flagged": len(flagged), "examples": examples, "flagged_records": flagged}


def screening_warnings(result: Mapping[str, Any], records: int, screening: Screening) -> list[str]:
    """One warning per non-zero kind, then the mark of a run whose score depends on such outputs."""
    warnings = [
        f"{count} {KIND_TEXT[kind]} (of {records} records, screening {kind!r}; first: "
        f"records {result['examples'][kind]})"
        for kind, count in result["counts"].items()
        if count
    ]
    if result["flagged"]:
        hedges = screening.hedges_rewarded and result["counts"]["hedge"]
        rewarded = f" {screening.hedges_rewarded}" if hedges else ""
        warnings.append(
            f"!!! SCORE DEPENDS ON SCREENED OUTPUTS: {result['flagged']} of {records} outputs try to play "
            f"the grader (details.screening lists them); check them before citing this number.{rewarded}"
        )
    return warnings


def constant_answer(records: Sequence[Mapping[str, Any]], screening: Screening) -> tuple[str, int] | None:
    """(the answer, how many outputs give it) when one answer is ``CONSTANT_SHARE`` or more of 10+ outputs
    (whitespace and case ignored): a constant answer, whatever each question asked."""
    field = screening.prediction_field
    texts = [str(record.get(field) or "") for record in records if isinstance(record, Mapping)]
    if len(texts) < 10:
        return None
    answer, count = Counter(map(_normal, texts)).most_common(1)[0]
    return (answer, count) if count >= CONSTANT_SHARE * len(texts) else None


def _normal(text: Any) -> str:
    return " ".join(str(text or "").split()).lower()


def _constant_warning(found: tuple[str, int], records: int, metrics: Mapping[str, Any], baseline: Any) -> str:
    answer, count = found
    text = f"{count} of {records} outputs are one constant answer {answer[:40]!r} (details.screening)"
    name, value = next(iter((baseline or {}).items()), (None, None))
    if not isinstance(value, int | float) or not isinstance(metrics.get(name), int | float):
        return text
    run = metrics[name]
    return (f"{text}: {name} {run:.2f} is {run - value:+.2f} points from {value:.2f}, what that answer to "
            "every question scores (the constant-answer baseline)")  # fmt: skip


def attach_screening(
    screening: Screening | None,
    records: Sequence[Mapping[str, Any]],
    metrics: dict[str, Any],
    details: dict[str, Any],
    baseline: Callable[[list[dict[str, Any]]], Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(metrics, details)`` plus ``metrics[SCREENED_OUTPUTS]``, ``details.screening`` and its warnings (a
    constant answer with ``baseline``'s metrics for it on every record); no metric changes."""
    if screening is None or not records:
        return metrics, details
    result = screen_records(records, screening)
    metrics = {**metrics, SCREENED_OUTPUTS: result["flagged"]}
    details = dict(details)
    details["screening"] = {
        **{key: value for key, value in result.items() if key != "flagged_records"},
        "flagged_records": result["flagged_records"][:100],
        "hedges_rewarded_by_the_metric": screening.hedges_rewarded or None,
    }
    warnings = screening_warnings(result, len(records), screening)
    found = constant_answer(records, screening)
    if found:
        field = screening.prediction_field
        given = next(record.get(field) for record in records if _normal(record.get(field)) == found[0])
        scores = dict(baseline([{**record, field: given} for record in records])) if baseline else None
        details["screening"]["constant_answer"] = {"answer": given, "outputs": found[1], "baseline": scores}
        warnings.append(_constant_warning(found, len(records), metrics, scores))
    if warnings:
        details["warnings"] = [*details.get("warnings", []), *warnings]
    return metrics, details


def with_screened_column(keys: Sequence[str], count_keys: Collection[str]) -> tuple[str, ...]:
    """``keys`` plus ``SCREENED_OUTPUTS`` when they hold one of ``count_keys`` (unparsed, unjudged...): the
    one rule of the host's table columns for the YAML (``taskgen``) and the hooks, which must agree."""
    keys = tuple(keys)
    if SCREENED_OUTPUTS in keys or not any(key in count_keys for key in keys):
        return keys
    return (*keys, SCREENED_OUTPUTS)
