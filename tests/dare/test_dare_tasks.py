"""DARE task wiring: generated YAML, bundled sample data, prompts, hooks and group scoring (in process)."""

from __future__ import annotations

import io
import math
import random
from pathlib import Path

import pytest

from lmms_eval_tasks.reporting import schema as reports
from lmms_eval_tasks.tasks.dare import grid, hooks, make_sample, task_docs
from lmms_eval_tasks.tasks.dare.prompts import build_prompt
from lmms_eval_tasks.tasks.dare.scoring import LETTERS, parse_prediction, parse_yes_no, score

TASK_DIR = grid.TASK_DIR


def test_committed_yaml_files_match_the_generator() -> None:
    expected = grid.expected_files()
    for relative, content in expected.items():
        path = TASK_DIR / relative
        assert path.exists(), f"{relative} missing: run make generate"
        assert path.read_text(encoding="utf-8") == content, f"{relative} differs from the generator"
    generated_on_disk = {
        path.relative_to(TASK_DIR)
        for path in (TASK_DIR / "yaml").rglob("*")
        if path.is_file() and (path.suffix == ".yaml" or path.name.endswith("_yaml"))
    }
    assert generated_on_disk == set(expected)


def test_grid_shape() -> None:
    groups = grid.groups()
    assert len(groups["dare_full"]) == 34
    assert len(groups["dare"]) == 21 and not any("_log_" in name for name in groups["dare"])
    assert len(groups["dare_log"]) == 9
    assert set(groups["dare_sample"]) == {name for name in groups["dare_sample_full"] if "_log_" not in name}
    assert all(name.startswith("dare_test_") for name in groups["dare_test"])
    names = [task.name for task in grid.all_tasks()]
    assert len(names) == len(set(names)) == 3 * 34
    assert not set(names) & set(groups)


def test_every_hook_named_in_yaml_resolves() -> None:
    for content in grid.expected_files().values():
        for line in content.splitlines():
            for module in (hooks, task_docs):
                if f"!function {module.__name__}." in line:
                    name = line.rsplit(".", 1)[1]
                    assert callable(getattr(module, name)), name
    with pytest.raises(AttributeError):
        task_docs.aggregate_no_such_metric  # noqa: B018


# --- sample data -----------------------------------------------------------------------------------


def _parquet_rows(config: str) -> list[dict]:
    import pyarrow.parquet as parquet

    return parquet.read_table(make_sample.sample_path(config)).to_pylist()


@pytest.mark.parametrize("config", make_sample.CONFIGS)
def test_regenerating_the_sample_gives_the_committed_rows(config: str) -> None:
    generated = make_sample.build_rows()[config]
    committed = _parquet_rows(config)
    assert len(committed) == len(generated)
    for new, old in zip(generated, committed, strict=True):
        assert {key: value for key, value in new.items() if key != "img"} == {
            key: value for key, value in old.items() if key != "img"
        }
        assert new["img"]["bytes"] == old["img"]["bytes"]


def test_sample_schema_and_answers_by_construction() -> None:
    from datasets import load_dataset
    from PIL import Image

    files = {config: str(make_sample.sample_path(config)) for config in make_sample.CONFIGS}
    for config, path in files.items():
        dataset = load_dataset("parquet", data_files={"validation": path})["validation"]
        assert dataset.features == make_sample.features(), config
        assert 8 <= len(dataset) <= 12
        for row in dataset:
            assert row["img"].size == (make_sample.IMAGE_SIZE, make_sample.IMAGE_SIZE)
            options = [row[letter] for letter in LETTERS]
            assert len(set(options)) == 4, row["id"]
            if config == "n_correct":
                assert all(letter in LETTERS for letter in row["answer"])
            else:
                assert len(row["answer"]) == 1 and row["answer"][0] in options
    multi = _parquet_rows("n_correct")
    assert sorted(len(row["answer"]) for row in multi) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    variations = _parquet_rows("1_correct_var")
    by_instance: dict[int, list[dict]] = {}
    for row in variations:
        by_instance.setdefault(row["instance_id"], []).append(row)
    for rows in by_instance.values():
        assert len(rows) == 3 and len({row["answer"][0] for row in rows}) == 1
        assert len({tuple(sorted(row[letter] for letter in LETTERS)) for row in rows}) == 3
    # The leftmost-shape answers really are leftmost in the picture: sample the gold shape's colour.
    single = _parquet_rows("1_correct")
    checked = 0
    for row in single:
        if row["question"] == "Which shape is furthest to the left?":
            image = Image.open(io.BytesIO(row["img"]["bytes"])).convert("RGB")
            colour = make_sample.COLOURS[row["answer"][0].split()[0]]
            leftmost_colour = next(
                pixel
                for x in range(image.width)
                for y in range(image.height)
                if (pixel := image.getpixel((x, y))) != (255, 255, 255)
            )
            assert leftmost_colour == colour
            checked += 1
    assert checked >= 1


# --- prompts ----------------------------------------------------------------------------------------

DOC = {
    "id": "q1",
    "question": "How many red circles?",
    "A": "1",
    "B": "2",
    "C": "3",
    "D": "4",
    "category": "count",
}


def test_prompt_text_single_gen_p1() -> None:
    assert build_prompt(DOC, "single", "gen", 1) == (
        "The following are multiple choice questions about conditional counting. You should directly answer "
        "the question by choosing the correct option given the image and the question. Give only the letter "
        'indicating the correct answer e.g. "A"\n'
        "Question: How many red circles?\nOptions:\nA. 1\nB. 2\nC. 3\nD. 4\nAnswer:"
    )


def test_prompt_variants() -> None:
    assert (
        build_prompt(DOC, "single", "json", 3)
        .splitlines()[0]
        .endswith('Please return the answer as json for instance {"answer": "D"}.')
    )
    multi = build_prompt(DOC, "multi", "json", 1)
    assert '{"answers": ["A", "B"]} or if there is no correct answer {"answers": []}.' in multi
    assert multi.endswith("Answers:")
    assert build_prompt(DOC, "multi", "gen", 1, "all_none").splitlines()[-3:] == [
        "E. All of the above",
        "F. None of the above",
        "Answers:",
    ]
    binary = build_prompt(DOC, "multi", "binary", 1, option="C")
    assert binary.endswith("Question: How many red circles?\nOption: 3\nAnswer:")
    for task in grid.all_tasks():
        text = build_prompt(DOC, task.setup, task.answer_format, task.prompt, task.extra_options, "A")
        assert "conditional counting" in text and "{subject}" not in text and "{{" not in text, task.name
    with pytest.raises(ValueError, match="unknown DARE category"):
        build_prompt({**DOC, "category": "astronomy"}, "single", "gen", 1)


# --- hooks ------------------------------------------------------------------------------------------


def _sample_docs(task_name: str):
    from datasets import load_dataset

    task = grid.TASKS_BY_NAME[task_name]
    dataset = load_dataset("parquet", data_files={"validation": str(make_sample.sample_path(task.config))})[
        "validation"
    ]
    return getattr(task_docs, f"process_docs_{task_name}")(dataset)


def test_process_docs_adds_the_task_identity() -> None:
    docs = _sample_docs("dare_sample_single_json_p2")
    assert docs[0]["dare_task"] == "dare_sample_single_json_p2" and docs[0]["dare_prompt"] == 2
    text = hooks.doc_to_text(docs[0])
    assert "as json e.g." in text and text.endswith("Answer:")
    assert hooks.doc_to_visual(docs[0])[0].mode == "RGB"


def test_binary_variant_asks_once_per_option() -> None:
    docs = _sample_docs("dare_sample_multi_binary_p1")
    assert len(docs) == 40
    assert [doc["dare_option"] for doc in docs.select(range(4))] == list(LETTERS)
    assert len({doc["id"] for doc in docs.select(range(4))}) == 1
    assert hooks.doc_to_text(docs[2]).endswith(f"Option: {docs[2]['C']}\nAnswer:")


def test_unknown_category_names_the_doc_and_the_field() -> None:
    from datasets import load_dataset

    dataset = load_dataset("parquet", data_files={"validation": str(make_sample.sample_path("1_correct"))})[
        "validation"
    ]
    broken = dataset.map(
        lambda row, index: {"category": "astronomy" if index == 3 else row["category"]}, with_indices=True
    )
    with pytest.raises(ValueError, match=r"doc 3 \(id='sample-1c-003'\): field 'category'"):
        task_docs.process_docs_dare_sample_single_gen_p1(broken)
    with pytest.raises(ValueError, match="no column 'img'"):
        task_docs.process_docs_dare_sample_single_gen_p1(dataset.remove_columns("img"))


def _doc(task_name: str, **fields: object) -> dict:
    task = grid.TASKS_BY_NAME[task_name]
    return {
        **DOC,
        "instance_id": 1,
        "answer": ["2"],
        "dare_task": task_name,
        "pack_task": task_name,
        "dare_setup": task.setup,
        "dare_format": task.answer_format,
        "dare_prompt": task.prompt,
        "dare_extra_options": task.extra_options or "",
        "dare_split": task.split,
        **fields,
    }


def test_out_log_single_picks_the_lowest_loss() -> None:
    doc = _doc("dare_single_log_p1")
    assert hooks.doc_to_choice(doc) == ["A", "B", "C", "D"]
    results = hooks.process_results(doc, [(2.5, False), (0.7, True), (1.0, False), (3.0, False)])
    record = results["single_accuracy"]
    assert (
        record["prediction"] == "B" and record["correct"] is True and record["losses"] == [2.5, 0.7, 1.0, 3.0]
    )
    # the keys the task's YAML lists: its headline keys, plus the screening count next to its 'unparsed'
    assert set(results) == {*grid.TASKS_BY_NAME["dare_single_log_p1"].result_keys(), "screened_outputs"}
    # lmms-eval 0.7.3 stringifies (loss, greedy) pairs unless the pack's evaluator fix is installed
    stringified = hooks.process_results(doc, ["(2.5, False)", "(1.5, False)", "(0.25, True)", "(nan, False)"])
    assert stringified["unparsed"]["prediction"] == "C"


def test_out_log_multi_scores_all_sixteen_answer_sets() -> None:
    doc = _doc("dare_multi_log_p1", answer=["1", "3"])
    choices = hooks.doc_to_choice(doc)
    assert len(choices) == 16 and choices[0] == "NONE" and choices[-1] == "A, B, C, D"
    losses = [1.0] * 16
    losses[choices.index("A, C")] = 0.5
    record = hooks.process_results(doc, [(loss, False) for loss in losses])["multi_f1"]
    assert record["prediction"] == "A, C" and record["correct"] is True


def test_records_carry_parse_diagnostics() -> None:
    record = hooks.process_results(_doc("dare_single_gen_p1"), ["The answer is (b)."])["single_accuracy"]
    assert (record["parsed"], record["parse_status"], record["correct"]) == ("B", "ok", True)
    record = hooks.process_results(_doc("dare_single_gen_p1"), ["no idea"])["unparsed"]
    assert record["parse_status"] == "unparsed" and record["correct"] is False
    test_record = hooks.process_results(_doc("dare_test_single_json_p1", answer=[]), ['{"answer": "C"}'])[
        "exported"
    ]
    assert test_record["parsed"] == "C" and "correct" not in test_record


@pytest.mark.parametrize("task", grid.all_tasks(), ids=lambda task: task.name)
def test_random_answers_are_valid_answers_of_the_format(task: grid.TaskSpec) -> None:
    rng = random.Random(0)
    doc = _doc(task.name, dare_option="B")
    letters = LETTERS + {"all": "E", "none": "E", "all_none": "EF"}.get(task.extra_options or "", "")
    seen = set()
    for _ in range(60):
        answer = hooks.random_answer(task.name, doc, rng)
        if task.answer_format == "binary":
            assert parse_yes_no(answer) is not None
            seen.add(answer)
            continue
        parsed = parse_prediction(
            "log" if task.answer_format == "log" else task.answer_format, answer, letters=letters
        )
        assert parsed.status in ("ok", "none"), (answer, parsed)
        seen.add(parsed.text)
        if task.setup != "multi":
            assert len(parsed.letters) == (3 if task.answer_format == "inv" else 1)
    assert len(seen) >= 2
    assert hooks.random_answer(task.name, doc, random.Random(7)) == hooks.random_answer(
        task.name, doc, random.Random(7)
    )


def test_random_single_answers_score_about_a_quarter() -> None:
    rng = random.Random(1)
    records = []
    for index in range(2000):
        doc = _doc("dare_single_csv_p1", id=f"q{index}")
        records.append(hooks.make_record(doc, [hooks.random_answer("dare_single_csv_p1", doc, rng)]))
    assert 22.0 < score(records)[0]["single_accuracy"] < 28.0


# --- aggregation as the host drives it ----------------------------------------------------------------


def _records(task_name: str, outputs: dict[str, str], answers: dict[str, list[str]]) -> list[dict]:
    return [
        hooks.make_record(
            _doc(task_name, id=question, instance_id=question.split("-")[0], answer=answers[question]),
            [output],
        )
        for question, output in outputs.items()
    ]


def test_group_metrics_are_scores_over_the_union_of_member_records(tmp_path: Path) -> None:
    answers = {"q1": ["1"], "q2": ["2"]}
    per_task = {
        "dare_single_gen_p1": _records("dare_single_gen_p1", {"q1": "A", "q2": "B"}, answers),  # 100 %
        "dare_single_gen_p2": _records("dare_single_gen_p2", {"q1": "A", "q2": "C"}, answers),  # 50 %
        "dare_single_gen_p3": _records("dare_single_gen_p3", {"q1": "D", "q2": "C"}, answers),  # 0 %
    }

    class Args:
        output_path = str(tmp_path)

    for name, records in per_task.items():
        value = task_docs.aggregate_single_accuracy(records, args=Args())
        assert (
            value
            == {"dare_single_gen_p1": 100.0, "dare_single_gen_p2": 50.0, "dare_single_gen_p3": 0.0}[name]
        )
        assert math.isnan(task_docs.aggregate_single_accuracy_std_over_prompts(records, args=Args()))
    # the generated group aggregations, as the host calls them (members' numbers, sizes, weight_by_size)
    group_value = task_docs.aggregate_dare_gen_single_accuracy([100.0, 50.0, 0.0], [2, 2, 2], False)
    assert group_value == 50.0  # mean over prompts (100 + 50 + 0) / 3
    std = task_docs.aggregate_dare_gen_single_accuracy_std_over_prompts([math.nan] * 3, [2, 2, 2], False)
    assert std == pytest.approx(math.sqrt((50**2 + 0 + 50**2) / 3))
    union = [record for records in per_task.values() for record in records]
    assert group_value == score(union)[0]["single_accuracy"]
    report = reports.latest_report_path(tmp_path, "dare_gen")
    assert report is not None and "| all | 50.0 |" in report.read_text(encoding="utf-8")
    assert reports.read_report(report)["details"]["members"] == list(per_task)
    assert reports.latest_report_path(tmp_path, "dare_single_gen_p1").is_file()


def test_docs_show_every_prompt_text_verbatim() -> None:
    from lmms_eval_tasks.tasks.dare.prompts import BINARY_PROMPT, MULTI_PROMPTS, SINGLE_PROMPTS

    docs = (Path(__file__).resolve().parents[2] / "docs" / "dare.md").read_text(encoding="utf-8")
    for template in [*SINGLE_PROMPTS.values(), *MULTI_PROMPTS.values(), BINARY_PROMPT]:
        assert f"`{template.format(subject='{subject}')}`" in docs or template in docs, template[:60]
    for group in grid.groups():
        assert f"`{group}`" in docs, group


def test_group_aggregation_rejects_unknown_metric_keys_and_groups() -> None:
    # A typo in a group metric used to return NaN silently: now it fails where the function is made.
    with pytest.raises(ValueError, match="single_acuracy"):
        hooks.HOOKS.group_aggregator("dare", "single_acuracy")
    with pytest.raises(ValueError, match="no_such_group"):
        hooks.HOOKS.group_aggregator("no_such_group", "single_accuracy")([1.0], [1], False)
