"""DARE has one parse path (scoring.dare.parse_record): validation hooks, the dare_test export and `score`
parse the same output identically (issue: on dare_test an answer equal to an option's text was exported as
unparsed while validation parsed it)."""

from __future__ import annotations

import pytest

from lmms_eval_tasks.tasks.dare import grid, hooks
from lmms_eval_tasks.tasks.dare.scoring import parse_record, score_record

DOC = {
    "id": "q1",
    "instance_id": 1,
    "question": "What is on the table?",
    "A": "a red apple",
    "B": "two dogs",
    "C": "a blue cup",
    "D": "nothing",
    "category": "count",
}


def _doc(task_name: str, **fields: object) -> dict:
    task = grid.TASKS_BY_NAME[task_name]
    return {
        **DOC,
        "answer": ["B"] if task.scored else [],
        "dare_task": task_name,
        "pack_task": task_name,
        "dare_setup": task.setup,
        "dare_format": task.answer_format,
        "dare_prompt": task.prompt,
        "dare_extra_options": task.extra_options or "",
        "dare_split": task.split,
        **fields,
    }


# (validation task, its dare_test twin, model output, expected parsed text)
CASES = [
    ("dare_single_gen_p1", "dare_test_single_gen_p1", "Two dogs", "B"),  # the drift: option text
    ("dare_single_gen_p1", "dare_test_single_gen_p1", "Answer: two dogs.", "B"),
    ("dare_single_gen_p1", "dare_test_single_gen_p1", "(b)", "B"),
    ("dare_single_gen_p1", "dare_test_single_gen_p1", "no idea", ""),
    ("dare_single_json_p1", "dare_test_single_json_p1", '{"answer": "C"}', "C"),
    ("dare_single_inv_p1", "dare_test_single_inv_p1", "A, C, D", "A, C, D"),
    ("dare_single_csv_p1", "dare_test_single_csv_p1", "answer,B", "B"),
    ("dare_single_word_p1", "dare_test_single_word_p1", "Banana", "B"),
    ("dare_multi_gen_p1", "dare_test_multi_gen_p1", "A and C", "A, C"),
    ("dare_multi_gen_p1", "dare_test_multi_gen_p1", "NONE", "NONE"),
    ("dare_multi_plus_all_p1", "dare_test_multi_plus_all_p1", "E", "E"),
    ("dare_multi_binary_p1", "dare_test_multi_binary_p1", "Yes.", "B"),  # binary yes = the option letter
    ("dare_multi_binary_p1", "dare_test_multi_binary_p1", "no", "NONE"),
]


@pytest.mark.parametrize(("validation", "test", "output", "expected"), CASES)
def test_validation_test_export_and_score_parse_identically(
    validation: str, test: str, output: str, expected: str
) -> None:
    fields = {"dare_option": "B"} if grid.TASKS_BY_NAME[validation].answer_format == "binary" else {}
    validation_record = hooks.make_record(_doc(validation, **fields), [output])
    test_record = hooks.make_record(_doc(test, **fields), [output])
    assert test_record["split"] == "test" and "correct" not in test_record
    diagnostics = ("parsed", "parse_status", "parse_rule")
    assert [test_record[key] for key in diagnostics] == [validation_record[key] for key in diagnostics]
    assert validation_record["parsed"] == expected
    # `score` re-parses the saved record through the same function.
    assert parse_record(validation_record).text == expected
    assert score_record(validation_record).parsed == parse_record(test_record)


def test_the_option_text_answer_is_no_longer_unparsed_on_dare_test() -> None:
    record = hooks.make_record(_doc("dare_test_single_gen_p1"), ["two dogs"])
    assert (record["parsed"], record["parse_status"], record["parse_rule"]) == (
        "B",
        "ok",
        "output equals an option text",
    )
