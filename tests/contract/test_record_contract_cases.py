"""The cases the record contract was built for (numbers from the 525-case audit), by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lmms_eval_tasks.cli import main


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 1
    return capsys.readouterr().err.strip()


def test_tdiuc_refuses_a_duplicate_instead_of_counting_it(tmp_path: Path, capsys) -> None:
    # 1 right of 2: micro 50.0; a second copy of the wrong one used to give 1/3 = 33.3.
    records = [
        {"question_id": 1, "question_type": "color", "labeled_answer": "red", "prediction": "red"},
        {"question_id": 2, "question_type": "color", "labeled_answer": "red", "prediction": "blue"},
    ]
    assert main(["score", "tdiuc", str(_write(tmp_path / "a.jsonl", records))]) == 0
    assert json.loads(capsys.readouterr().out)["micro_accuracy"] == pytest.approx(50.0)
    error = _error(capsys, "score", "tdiuc", str(_write(tmp_path / "b.jsonl", [*records, records[1]])))
    assert "record 2 (line 3): field 'question_id': duplicate record (question_id='2')" in error


def test_dvqa_refuses_a_nan_answer(tmp_path: Path, capsys) -> None:
    path = tmp_path / "nan.jsonl"
    line = '{"question_id": 1, "template_id": "data", "answer": NaN, "prediction": "nan"}\n'
    path.write_text(line, "utf-8")
    error = _error(capsys, "score", "dvqa", str(path))
    assert error.endswith("record 0 (line 1): field 'answer': expected a string or a finite number, got NaN")


def test_vrb_refuses_a_misspelt_corruption_listing_the_known_names(tmp_path: Path, capsys) -> None:
    record = {"question_id": 1, "answers": ["two"] * 10, "multiple_choice_answer": "two",
              "question_type": "how many", "answer_type": "number", "prediction": "two"}  # fmt: skip
    records = [{**record, "corruption": "clean", "severity": 0},
               {**record, "corruption": "gausian_noise", "severity": 3}]  # fmt: skip
    error = _error(capsys, "score", "vrb", str(_write(tmp_path / "v.jsonl", records)))
    assert "record 1 (line 2): field 'corruption': unknown value 'gausian_noise'; known: clean, " in error
    assert "gaussian_noise" in error and "snow" in error


def _vqd(question_id: int, row: int | None, prediction: str) -> dict:
    record = {"question_id": question_id, "gtbox": [[0, 0, 10, 10]], "width": 50, "height": 50,
              "prediction": prediction}  # fmt: skip
    return record if row is None else {**record, "row": row}


def test_vqdv1_repeated_queries_are_rows_and_a_true_duplicate_is_refused(tmp_path: Path, capsys) -> None:
    # query 7 asked twice (rows 0 and 1): F1 1 and 0, query 8 F1 1: micro F1 = (1 + 0 + 1) / 3 = 66.67
    records = [_vqd(7, 0, "[0, 0, 10, 10]"), _vqd(7, 1, "[]"), _vqd(8, 2, "[0, 0, 10, 10]")]
    assert main(["score", "vqdv1", str(_write(tmp_path / "ok.jsonl", records))]) == 0
    assert json.loads(capsys.readouterr().out)["micro_f1"] == pytest.approx(200 / 3)
    error = _error(capsys, "score", "vqdv1", str(_write(tmp_path / "dup.jsonl", [*records, records[1]])))
    assert "duplicate record (question_id='7', row='1')" in error
    without_row = [_vqd(7, None, "[]"), _vqd(7, None, "[]")]
    error = _error(capsys, "score", "vqdv1", str(_write(tmp_path / "norow.jsonl", without_row)))
    assert "give each record the 'row' field" in error
    bad_id = [{**records[0], "question_id": [7]}]
    error = _error(capsys, "score", "vqdv1", str(_write(tmp_path / "id.jsonl", bad_id)))
    assert "field 'question_id': expected a string or an integer id, got a list" in error


def test_compare_vqdv1_pairs_repeated_queries_by_row(tmp_path: Path, capsys) -> None:
    run_a = [_vqd(7, 0, "[0, 0, 10, 10]"), _vqd(7, 1, "[]"), _vqd(8, 2, "[0, 0, 10, 10]")]
    run_b = [_vqd(7, 0, "[]"), _vqd(7, 1, "[0, 0, 10, 10]"), _vqd(8, 2, "[0, 0, 10, 10]")]
    path_a, path_b = _write(tmp_path / "a.jsonl", run_a), _write(tmp_path / "b.jsonl", run_b)
    assert main(["compare", "vqdv1", str(path_a), str(path_b)]) == 0
    result = json.loads(capsys.readouterr().out)
    # row 0: A right, B wrong (b10); row 1: A wrong, B right (b01); row 2 both right
    assert (result["questions"], result["b10"], result["b01"], result["both_correct"]) == (3, 1, 1, 1)
    assert main(["compare", "vqdv1", str(path_a), str(_write(tmp_path / "c.jsonl", [*run_b, run_b[0]]))]) == 1
    assert "run B 3: field 'question_id': duplicate record" in capsys.readouterr().err


def test_prepare_then_score_a_vqdv1_subset_with_repeated_queries(tmp_path: Path, capsys) -> None:
    from PIL import Image

    images = tmp_path / "images"
    images.mkdir()
    Image.new("RGB", (50, 40)).save(images / "a.jpg")
    entry = {"question_id": 7, "question": "the dog", "gtbox": [[0, 0, 10, 10]], "question_type": "simple",
             "image_id": 1, "width": 50, "height": 40, "file_name": "a.jpg"}  # fmt: skip
    annotations = tmp_path / "VQDv1_sampling.json"
    annotations.write_text(json.dumps([entry, entry, {**entry, "question_id": 8}]), "utf-8")
    out = tmp_path / "prepared"
    argv = ["prepare", "vqdv1", "--annotations", str(annotations), "--images", str(images), "--out", str(out)]
    assert main([*argv, "--quiet"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert (summary["rows"], summary["repeated_queries"], summary["repeated_rows"]) == (3, 1, 1)
    assert "1 queries repeat (1 extra rows" in captured.err
    from datasets import load_from_disk

    rows = load_from_disk(str(out))["test"]
    assert rows["row"] == [0, 1, 2] and rows["question_id"] == [7, 7, 8]
    records = [{**{k: row[k] for k in ("question_id", "row", "gtbox", "width", "height")},
                "prediction": "[0, 0, 10, 10]"} for row in rows]  # fmt: skip
    assert main(["score", "vqdv1", str(_write(tmp_path / "r.jsonl", records))]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["queries"] == 3 and metrics["micro_f1"] == pytest.approx(100.0)


def _dvqa(question_id: int, template: str, prediction: str) -> dict:
    return {"question_id": question_id, "template_id": template, "answer": "3", "prediction": prediction}


def test_dvqa_macro_refuses_a_duplicate_instead_of_counting_it(tmp_path: Path, capsys) -> None:
    # structure: q1 right, q2 wrong = 50; data: q3 right = 100; reasoning: q4 wrong = 0
    # macro = (50 + 100 + 0) / 3 = 50.0, micro = 2 / 4 = 50.0
    records = [_dvqa(1, "structure", "3"), _dvqa(2, "structure", "4"), _dvqa(3, "data", "3"),
               _dvqa(4, "reasoning", "4")]  # fmt: skip
    assert main(["score", "dvqa", str(_write(tmp_path / "a.jsonl", records))]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["macro_accuracy"] == pytest.approx(50.0)
    assert metrics["micro_accuracy"] == pytest.approx(50.0)
    # q2 counted twice would give structure 1/3 = 33.33 and macro (33.33 + 100 + 0) / 3 = 44.44: refused
    from lmms_eval_tasks.tasks.dvqa.scoring import score

    twice = score([*records, records[1]])[0]  # the bare scorer, without the contract: the harm
    assert twice["macro_accuracy"] == pytest.approx((100 / 3 + 100 + 0) / 3)  # 44.44
    error = _error(capsys, "score", "dvqa", str(_write(tmp_path / "b.jsonl", [*records, records[1]])))
    assert "record 4 (line 5): field 'question_id': duplicate record (question_id='2')" in error
    assert "also record 1 (line 2)" in error


def test_dvqa_nan_prediction_is_not_counted_correct_against_a_nan_answer(tmp_path: Path, capsys) -> None:
    # q1: answer NaN, prediction "nan" (would "match" as text); q2: answer 3, prediction 4 (wrong)
    path = tmp_path / "nan2.jsonl"
    path.write_text('{"question_id": 2, "template_id": "data", "answer": "3", "prediction": "4"}\n'
                    '{"question_id": 1, "template_id": "data", "answer": NaN, "prediction": "nan"}\n',
                    "utf-8")  # fmt: skip
    error = _error(capsys, "score", "dvqa", str(path))
    assert error.endswith("record 1 (line 2): field 'answer': expected a string or a finite number, got NaN")
    # without the NaN record: 0 of 1 right, micro 0.0 (never 1 of 2 = 50.0)
    assert main(["score", "dvqa", str(_write(tmp_path / "ok.jsonl", [_dvqa(2, "data", "4")]))]) == 0
    assert json.loads(capsys.readouterr().out)["micro_accuracy"] == pytest.approx(0.0)


def _vrb(question_id: int, corruption: str, severity: int, prediction: str) -> dict:
    return {"question_id": question_id, "answers": ["two"] * 10, "multiple_choice_answer": "two",
            "question_type": "how many", "answer_type": "number", "corruption": corruption,
            "severity": severity, "prediction": prediction}  # fmt: skip


def test_vrb_misspelt_corruption_refused_and_the_valid_set_scores_as_before(tmp_path: Path, capsys) -> None:
    # two questions at clean + gaussian_noise 1..5; q2 wrong from severity 3: accuracy per level
    # [1, 1, 1, .5, .5, .5] (10 identical answers: a match scores 1, leave-one-out min(9/3, 1))
    noisy = [(q, s, "three" if q == 2 and s >= 3 else "two") for s in range(1, 6) for q in (1, 2)]
    valid = [_vrb(q, "clean", 0, "two") for q in (1, 2)]
    valid += [_vrb(q, "gaussian_noise", s, p) for q, s, p in noisy]
    assert main(["score", "vrb", str(_write(tmp_path / "ok.jsonl", valid)), "--details"]) == 0
    scored = json.loads(capsys.readouterr().out)
    m = scored["metrics"]
    assert m["accuracy"] == pytest.approx(9 / 12)  # 9 of 12 records right
    assert scored["details"]["accuracy_by_level"] == pytest.approx(
        {"clean": 1.0, **{f"gaussian_noise_s{s}": 1.0 if s < 3 else 0.5 for s in range(1, 6)}}
    )
    # error E = [0, 0, 0, .5, .5, .5]: average_error = 1.5 / 6 = .25, average_difference = 1.5 / 5 = .3,
    # accuracy_average = .75, relative drop (1 - .75) / 1 = .25; error_rate = least-squares slope over
    # levels 0..5: centred levels [-2.5 .. 2.5], centred E [-.25 x3, .25 x3]: .25 * 9 / 17.5 = 0.128571
    assert m["average_error"] == pytest.approx(0.25) and m["average_difference"] == pytest.approx(0.3)
    assert m["accuracy_average"] == pytest.approx(0.75)
    assert m["relative_accuracy_drop"] == pytest.approx(0.25)
    assert m["error_rate"] == pytest.approx(2.25 / 17.5)
    assert m["first_drop"] is None and m["vre"] is None  # zero clean error; VRE needs two cells: null
    bad = [*valid, _vrb(1, "gausian_noise", 3, "two")]
    error = _error(capsys, "score", "vrb", str(_write(tmp_path / "bad.jsonl", bad)))
    assert "record 12 (line 13): field 'corruption': unknown value 'gausian_noise'" in error


def test_vqdv1_a_query_with_a_row_and_again_without_one_is_refused(tmp_path: Path, capsys) -> None:
    # query 7 at row 0 (F1 1) and a copy without row (F1 0) was micro F1 (1 + 0) / 2 = 50.0 over 2
    # "queries": one query counted twice under two identities. Rows go on every record or on none.
    records = [_vqd(7, 0, "[0, 0, 10, 10]"), _vqd(8, 1, "[]"), _vqd(7, None, "[]")]
    error = _error(capsys, "score", "vqdv1", str(_write(tmp_path / "mixed.jsonl", records)))
    assert "record 2 (line 3): field 'row': missing, while record 0 (line 1) has it" in error
    assert "give each record the 'row' field" in error
    first_without = [_vqd(7, None, "[]"), _vqd(7, 0, "[0, 0, 10, 10]")]
    error = _error(capsys, "score", "vqdv1", str(_write(tmp_path / "mixed2.jsonl", first_without)))
    assert "record 0 (line 1): field 'row': missing, while record 1 (line 2) has it" in error
    # all without row (distinct queries) or all with row still score: q7 F1 1, q8 F1 0 -> 50.0
    for rows in ((None, None), (0, 1)):
        plain = [_vqd(7, rows[0], "[0, 0, 10, 10]"), _vqd(8, rows[1], "[]")]
        assert main(["score", "vqdv1", str(_write(tmp_path / "ok.jsonl", plain))]) == 0
        assert json.loads(capsys.readouterr().out)["micro_f1"] == pytest.approx(50.0)
