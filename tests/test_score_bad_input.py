"""`lmms-eval-tasks score` on bad records, bad options and bad files: one line on stderr, a defined exit code.

Exit codes: 1 = a record (or the file's bytes) is unusable, 2 = a bad command line (option, path).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lmms_eval_tasks.cli import main
from lmms_eval_tasks.framework.input_checks import OptionError, check_option, read_jsonl
from lmms_eval_tasks.framework.registry import get_benchmark

RECORD = {
    "id": "q1",
    "instance_id": 1,
    "category": "count",
    "setup": "single",
    "answer": ["B"],
    "A": "1",
    "B": "2",
    "C": "3",
    "D": "4",
    "format": "gen",
    "prompt": 1,
    "prediction": "B",
}


def _write(tmp_path: Path, records: list[dict], name: str = "records.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    error = captured.err.strip()
    assert error and "\n" not in error and "Traceback" not in error, captured.err
    assert captured.out == ""
    return error


def _score(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["score", *argv])
    return code, _one_line_error(capsys)


# --- duplicate and conflicting records ------------------------------------------------------------


def test_an_id_answered_three_times_is_rejected_not_counted_three_times(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, [RECORD, {**RECORD, "id": "q2"}, RECORD, RECORD])
    code, error = _score(capsys, "dare", str(path))
    assert code == 1
    assert "record 2 (line 3): field 'setup': duplicate record (setup='single', format='gen', " in error
    assert "category='count', id='q1', option=''); also record 0 (line 1)" in error


def test_a_conflicting_answer_to_the_same_question_is_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, [RECORD, {**RECORD, "prediction": "C"}])
    code, error = _score(capsys, "dare", str(path))
    assert code == 1 and "record 1 (line 2): field 'setup': conflicting record (" in error


def test_the_same_id_in_another_task_setting_is_a_different_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Same question, other prompt / format / option letter: each is its own record, not a duplicate.
    binary = {**RECORD, "setup": "multi", "format": "binary", "answer": ["B", "D"]}
    records = [
        RECORD,
        {**RECORD, "prompt": 2},
        {**RECORD, "format": "json", "prediction": '{"answer": "B"}'},
        {**binary, "option": "A", "prediction": "no"},
        {**binary, "option": "B", "prediction": "yes"},
    ]
    assert main(["score", "dare", str(_write(tmp_path, records))]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == 5
    duplicate_option = [*records, {**binary, "option": "B", "prediction": "yes"}]
    code, error = _score(capsys, "dare", str(_write(tmp_path, duplicate_option)))
    assert code == 1 and "duplicate record (setup='multi', format='binary', prompt='1', " in error
    assert "id='q1', option='B'); also record 4 (line 5)" in error


# --- options --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [("-1", "-1"), ("1.5", "1.5"), ("true", "true"), ('"x"', '"x"'), ("x", '"x"'), ("null", "null")],
)
def test_dare_std_ddof_must_be_0_or_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: str, shown: str
) -> None:
    code, error = _score(capsys, "dare", str(_write(tmp_path, [RECORD])), "-o", f"std_ddof={raw}")
    assert code == 2
    assert error == f"lmms-eval-tasks score: dare: option std_ddof: expected one of 0, 1, got {shown}"


def test_dare_valid_options_still_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, [RECORD, {**RECORD, "prompt": 2, "prediction": "A"}])
    assert main(["score", "dare", str(path), "-o", "std_ddof=1", "-o", "primary_format=gen"]) == 0
    # accuracies 100 and 0: sample std = sqrt(((100-50)^2 + (0-50)^2) / 1) = 70.71
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["single_accuracy_std_over_prompts"] == pytest.approx(70.7107, 1e-4)


@pytest.mark.parametrize("raw", ["csv2", "1", "null"])
def test_dare_primary_format_must_be_a_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: str
) -> None:
    code, error = _score(capsys, "dare", str(_write(tmp_path, [RECORD])), "-o", f"primary_format={raw}")
    assert code == 2 and 'option primary_format: expected one of "gen", "log"' in error


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("repeats=0", "option repeats: expected an integer >= 1 or null, got 0"),
        ("repeats=1.5", "option repeats: expected an integer >= 1 or null, got 1.5"),
        ("repeats=true", "option repeats: expected an integer >= 1 or null, got true"),
        ("diagnosis=yes", 'option diagnosis: expected true or false, got "yes"'),
        ("diagnosis=1", "option diagnosis: expected true or false, got 1"),
        ("variant=vlm", 'option variant: expected one of "official", "vlmevalkit", got "vlm"'),
        ("judge=5", 'option judge: expected one of "auto", "openai", "rule" or null, got 5'),
        ("judge=gpt", 'option judge: expected one of "auto", "openai", "rule" or null, got "gpt"'),
        ("judge_model=7", "option judge_model: expected a string or null, got 7"),
        ('judge_model=""', "option judge_model: expected a model name or null, got an empty string"),
    ],
)
def test_hallusionbench_options_are_validated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, message: str
) -> None:
    path = _write(tmp_path, list(get_benchmark("hallusionbench").record_schema.example))
    code, error = _score(capsys, "hallusionbench", str(path), "-o", option)
    assert code == 2 and error == f"lmms-eval-tasks score: hallusionbench: {message}"


def test_check_option_rules() -> None:
    assert check_option("n", 3, int, minimum=1) == 3
    assert check_option("x", 2, float) == 2  # an int is a number
    assert check_option("flag", False, bool) is False
    assert check_option("m", None, str, allow_none=True) is None
    for name, value, kind, extra in [
        ("n", True, int, {}),  # JSON true is not 1
        ("n", 2.0, int, {}),
        ("x", float("nan"), float, {}),
        ("x", 5, float, {"maximum": 1}),
        ("s", None, str, {}),
        ("s", ["a"], str, {}),
    ]:
        with pytest.raises(OptionError, match=rf"^option {name}: expected .*, got "):
            check_option(name, value, kind, **extra)


# --- files ----------------------------------------------------------------------------------------


def test_a_non_utf8_file_names_the_file_line_and_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(RECORD).encode() + b"\n" + '{"id": "caf\xe9"}\n'.encode("latin-1"))
    code, error = _score(capsys, "dare", str(path))
    assert code == 1
    assert error == (
        f"lmms-eval-tasks score: {path}: record at line 2: field '<encoding>': "
        "not UTF-8 (byte 0xe9 at column 12); re-save the file as UTF-8"
    )


def test_a_utf8_bom_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(RECORD).encode() + b"\r\n")
    assert read_jsonl(path) == [RECORD]
    assert main(["score", "dare", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["single_accuracy"] == 100.0


def test_a_directory_is_reported_as_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, error = _score(capsys, "dare", str(tmp_path))
    # a folder is read as a run folder (like compare): without --task it says so in one line
    assert code == 2 and error == f"lmms-eval-tasks score: {tmp_path} is a folder: name the task with --task"
    with pytest.raises(IsADirectoryError):
        read_jsonl(tmp_path)


@pytest.mark.parametrize(
    ("benchmark", "option", "message"),
    [
        ("vrb", "details=1", "option details: expected true or false, got 1"),
        ("vrb", 'weights="x"', "option weights: expected a list of 5 numbers or null, got 'x'"),
        ("vrb", "weights=[0.2, true, 0.2, 0.2, 0.2]", "option weights[1]: expected a number, got true"),
        ("vrb", 'preferences=[1, "a"]', 'option preferences[1]: expected a number, got "a"'),
        ("contextual", "rouge=null", "option rouge: expected true or false, got null"),
        ("contextual", 'image_judge="no"', 'option image_judge: expected true or false, got "no"'),
        ("contextual", "judge=3", 'option judge: expected one of "auto", "openai", "rule" or null, got 3'),
        ("contextual", "judge_model=[]", "option judge_model: expected a string or null, got list"),
    ],
)
def test_new_benchmarks_options_are_validated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], benchmark: str, option: str, message: str
) -> None:
    path = _write(tmp_path, list(get_benchmark(benchmark).record_schema.example))
    code, error = _score(capsys, benchmark, str(path), "-o", option)
    assert code == 2 and error == f"lmms-eval-tasks score: {benchmark}: {message}"


# --- options before records -------------------------------------------------------------------------

BAD_OPTION = {  # one bad option value per benchmark, and the one-line message it gets
    "dare": ("std_ddof=2", "option std_ddof: expected one of 0, 1, got 2"),
    "hallusionbench": ("variant=vlm", 'option variant: expected one of "official", "vlmevalkit", got "vlm"'),
    "vrb": ("details=1", "option details: expected true or false, got 1"),
    "contextual": ("rouge=null", "option rouge: expected true or false, got null"),
    "tdiuc": ('protocol="paper"', 'option protocol: expected one of "default", "official", got "paper"'),
    "tallyqa": ('protocol="paper"', 'option protocol: expected one of "default", "official", got "paper"'),
    "dvqa": ('protocol="paper"', 'option protocol: expected one of "default", "official", got "paper"'),
    "vqdv1": (
        'coords="inches"',
        'option coords: expected one of "auto", "pixel", "relative", "grid1000", got "inches"',
    ),  # fmt: skip
}


@pytest.mark.parametrize("benchmark", sorted(BAD_OPTION))
@pytest.mark.parametrize("records", ["duplicate", "empty", "not-json"])
def test_a_bad_option_is_reported_before_bad_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], benchmark: str, records: str
) -> None:
    # the records alone would exit 1; with a bad -o too the option is the first problem: exit 2
    example = list(get_benchmark(benchmark).record_schema.example)
    path = _write(tmp_path, [*example, example[0]])
    if records == "empty":
        path.write_text("", encoding="utf-8")
    elif records == "not-json":
        path.write_text("{not json\n", encoding="utf-8")
    # an empty file is not records at all (a usage error, exit 2); duplicates and bad JSON are bad records (1)
    assert main(["score", benchmark, str(path)]) == (2 if records == "empty" else 1)
    capsys.readouterr()
    option, message = BAD_OPTION[benchmark]
    code, error = _score(capsys, benchmark, str(path), "-o", option)
    assert (code, error) == (2, f"lmms-eval-tasks score: {benchmark}: {message}")


def test_every_benchmark_has_a_bad_option_case() -> None:
    from lmms_eval_tasks.framework.registry import benchmarks

    with_options = [name for name, benchmark in benchmarks().items() if benchmark.loaded.options is not None]
    assert sorted(BAD_OPTION) == sorted(with_options)  # a scorer without options has none to get wrong


@pytest.mark.parametrize("benchmark", sorted(BAD_OPTION))
def test_benchmark_score_checks_options_before_records(benchmark: str) -> None:
    # the Python API too: Benchmark.check_options builds the options (their check) before the record contract
    from lmms_eval_tasks.cli._arguments import parse_option

    key, value = parse_option(BAD_OPTION[benchmark][0])
    example = list(get_benchmark(benchmark).record_schema.example)
    with pytest.raises(ValueError) as caught:
        get_benchmark(benchmark).check_options(**{key: value})
        get_benchmark(benchmark).validate([*example, example[0]])
    assert f"option {key}" in str(caught.value) and "duplicate" not in str(caught.value)


@pytest.mark.parametrize(
    ("benchmark", "field", "value", "problem"),
    [
        ("contextual", "image_url", "", "field 'image_url': empty"),
        ("tallyqa", "answer", 1.5, "field 'answer': expected int or str, got float 1.5"),
        ("hallusionbench", "subcategory", "zzz", "field 'subcategory': unknown VD subcategory 'zzz'"),
    ],
)
def test_a_scorer_refusal_names_the_file_line_too(tmp_path, capsys, benchmark, field, value, problem) -> None:
    """Semantic checks live in the scorers, which number records from 0; `score` adds the file line
    (blank lines shift the second record to line 4), as the record contract's own messages do."""
    records = [dict(record) for record in get_benchmark(benchmark).record_schema.example]
    records[1][field] = value
    path = tmp_path / "r.jsonl"
    path.write_text("\n" + "".join(json.dumps(record) + "\n\n" for record in records), encoding="utf-8")
    assert main(["score", benchmark, str(path)]) == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"lmms-eval-tasks score: {path}: record 1 (line 4): {problem}"), error
