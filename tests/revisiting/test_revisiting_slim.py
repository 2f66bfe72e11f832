"""`slim`: the paper's stratified rule, group sizes worked out by hand, seeded and reproducible."""

from __future__ import annotations

import json

import pytest

from lmms_eval_tasks.cli import main
from lmms_eval_tasks.tasks.revisiting.slim import KINDS, group_quota, merge_tdiuc, slim


@pytest.mark.parametrize(
    ("size", "ratio", "minimum", "expected"),
    [
        (150, 0.05, 200, 150),  # m <= k: the whole group
        (200, 0.05, 200, 200),
        (1000, 0.05, 200, 200),  # m*r = 50 < k < m: k
        (4000, 0.05, 200, 200),  # m*r = 200 >= k: ceil(200) = 200 (no float drift to 201)
        (4001, 0.05, 200, 201),  # m*r = 200.05: ceil -> 201
        (10000, 0.05, 200, 500),
        (12345, 0.025, 200, 309),  # 308.625 -> 309
    ],
)
def test_group_quota(size: int, ratio: float, minimum: int, expected: int) -> None:
    assert group_quota(size, ratio, minimum) == expected


def tdiuc_entries() -> list[dict]:
    """color/red 1000, color/blue 10, counting/2 5000."""
    entries = []
    for question_type, answer, count in (
        ("color", "red", 1000),
        ("color", "blue", 10),
        ("counting", "2", 5000),
    ):
        for _ in range(count):
            entries.append(
                {
                    "question_id": len(entries),
                    "question_type": question_type,
                    "labeled_answer": answer,
                    "image_id": 1,
                }
            )
    return entries


def test_stratified_by_type_and_answer() -> None:
    # r = 0.05, k = 20: red 1000 * 0.05 = 50 >= 20 -> 50; blue 10 <= 20 -> 10; "2" 5000 * 0.05 = 250
    result = slim(tdiuc_entries(), KINDS["tdiuc"], ratio=0.05, minimum=20, seed=3)
    assert result.counts == {"color": (1010, 60), "counting": (5000, 250)}
    answers = [entry["labeled_answer"] for entry in result.entries]
    assert answers.count("red") == 50 and answers.count("blue") == 10
    ids = [entry["question_id"] for entry in result.entries]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)  # original order, no duplicates


def test_group_by_type_only_like_the_scripts() -> None:
    # color as one group of 1010: 1010 * 0.05 = 50.5 -> ceil 51
    result = slim(tdiuc_entries(), KINDS["tdiuc"], ratio=0.05, minimum=20, seed=3, group_by="type")
    assert result.counts["color"] == (1010, 51)


def test_seed_reproduces_and_changes_the_draw() -> None:
    first = slim(tdiuc_entries(), KINDS["tdiuc"], ratio=0.05, minimum=20, seed=1).entries
    again = slim(tdiuc_entries(), KINDS["tdiuc"], ratio=0.05, minimum=20, seed=1).entries
    other = slim(tdiuc_entries(), KINDS["tdiuc"], ratio=0.05, minimum=20, seed=2).entries
    assert first == again
    assert [e["question_id"] for e in first] != [e["question_id"] for e in other]


def test_vqdv1_keeps_every_multi_box_query() -> None:
    entries = []
    for boxes, count in (([[]], 300), ([[0, 0, 5, 5]], 400), ([[0, 0, 5, 5], [1, 1, 4, 4]], 7)):
        entries += [
            {"question_id": len(entries) + i, "question_type": "simple", "gtbox": boxes} for i in range(count)
        ]
    result = slim(entries, KINDS["vqdv1"], ratio=0.1, minimum=50, seed=0)
    kept_boxes = [len([b for b in entry["gtbox"] if b]) for entry in result.entries]
    # 2 boxes: all 7 kept; 0 boxes: 300 * 0.1 = 30 < 50 -> 50; 1 box: 400 * 0.1 = 40 < 50 -> 50
    assert (kept_boxes.count(2), kept_boxes.count(0), kept_boxes.count(1)) == (7, 50, 50)


def test_missing_field_names_the_entry() -> None:
    with pytest.raises(Exception, match="record 1: field 'template_id'"):
        slim([{"template_id": "data", "answer": "1"}, {"answer": "2"}], KINDS["dvqa"])


def test_merge_tdiuc_joins_by_question_id() -> None:
    questions = {"questions": [{"question_id": 5, "question": "Q?", "image_id": 9}]}
    annotations = {
        "annotations": [{"question_id": 5, "question_type": "color", "answers": [{"answer": "red"}]}]
    }
    assert merge_tdiuc(questions, annotations) == [
        {
            "index": 0,
            "question_id": 5,
            "question": "Q?",
            "image_id": 9,
            "labeled_answer": "red",
            "question_type": "color",
        }
    ]


def test_cli_prints_the_per_type_table(tmp_path, capsys) -> None:
    full = tmp_path / "full.json"
    full.write_text(json.dumps(tdiuc_entries()))
    out = tmp_path / "slim.json"
    arguments = ["slim", "tdiuc", "--input", str(full), "--out", str(out), "--ratio", "0.05", "--min", "20"]
    assert main([*arguments, "--seed", "7"]) == 0
    printed = capsys.readouterr().out
    assert "kept 310 of 6010 (r=0.05, k=20, seed=7, group by type+answer, rounding paper)" in printed
    assert "| color | 1010 | 60 |" in printed and "| counting | 5000 | 250 |" in printed
    assert "| **total** | 6010 | 310 |" in printed
    assert len(json.loads(out.read_text())) == 310


def test_cli_tdiuc_from_the_two_released_files_and_dvqa_inputs_apart(tmp_path, capsys) -> None:
    questions = {"questions": [{"question_id": i, "question": "Q?", "image_id": i} for i in range(30)]}
    annotations = {
        "annotations": [
            {
                "question_id": i,
                "question_type": "color" if i < 20 else "absurd",
                "answers": [{"answer": "red"}],
            }
            for i in range(30)
        ]
    }
    (tmp_path / "q.json").write_text(json.dumps(questions))
    (tmp_path / "a.json").write_text(json.dumps(annotations))
    out = tmp_path / "tdiuc.json"
    arguments = ["--questions", str(tmp_path / "q.json"), "--annotations", str(tmp_path / "a.json")]
    assert main(["slim", "tdiuc", *arguments, "--out", str(out), "--ratio", "0.5", "--min", "5"]) == 0
    # color/red: 20 * 0.5 = 10 >= 5 -> 10; absurd/red: 10 * 0.5 = 5 >= 5 -> ceil(5) = 5
    assert "| absurd | 10 | 5 |" in capsys.readouterr().out
    kept = json.loads(out.read_text())
    assert len(kept) == 15 and set(kept[0]) == {
        "index", "question_id", "question", "image_id", "labeled_answer", "question_type"
    }  # fmt: skip
    # DVQA: each input sampled on its own (20 * 0.25 = 5 per file), then concatenated
    for name in ("easy", "hard"):
        entries = [{"question_id": f"{name}{i}", "template_id": "data", "answer": "1"} for i in range(20)]
        (tmp_path / f"{name}.json").write_text(json.dumps(entries))
    out = tmp_path / "dvqa.json"
    inputs = ["--input", str(tmp_path / "easy.json"), "--input", str(tmp_path / "hard.json")]
    assert main(["slim", "dvqa", *inputs, "--out", str(out), "--ratio", "0.25", "--min", "2"]) == 0
    kept = [entry["question_id"] for entry in json.loads(out.read_text())]
    assert sum(i.startswith("easy") for i in kept) == 5 and sum(i.startswith("hard") for i in kept) == 5
    assert main(["slim", "dvqa", "--questions", str(tmp_path / "q.json"), "--out", str(out)]) == 2
