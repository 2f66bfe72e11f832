"""Odd runs users launch: cut runs (``--limit``), generation settings and few-shot requests, each either
refused in one line or said in the report (and the host's table) with its values.

Each test fails on the code before issue 30: it goes through entry points that existed then (the launcher,
a task's ``process_docs``, ``reporting.schema.provenance``, DARE's ``report_details``).
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter

import pytest

from lmms_eval_tasks.framework.run_state import host_run
from lmms_eval_tasks.host.launcher import main as launcher_main


def _refused(capsys: pytest.CaptureFixture[str], *arguments: str) -> str:
    code = launcher_main(["--model", "random_guess", *arguments])
    error = capsys.readouterr().err.strip()
    assert code == 2, error
    assert error and "\n" not in error and "Traceback" not in error, error
    return error


@pytest.mark.parametrize("limit", ["0", "-2", "-0.5"])
def test_a_zero_or_negative_limit_is_refused_in_one_line(capsys, tmp_path, limit: str) -> None:
    error = _refused(
        capsys, "--tasks", "hallusionbench_sample", "--limit", limit, "--output_path", str(tmp_path)
    )
    assert f"--limit {limit}: expected a positive number of documents" in error
    assert not any(tmp_path.iterdir())  # nothing started


def test_a_fractional_limit_on_a_pack_task_is_refused(capsys, tmp_path) -> None:
    error = _refused(capsys, "--tasks", "vrb_sample", "--limit", "0.5", "--output_path", str(tmp_path))
    assert "--limit 0.5: a fraction is not supported on the pack's tasks (vrb_sample)" in error


def test_few_shot_on_a_pack_task_is_refused_in_one_line(capsys, tmp_path) -> None:
    error = _refused(capsys, "--tasks", "dare_sample", "--num_fewshot", "2", "--output_path", str(tmp_path))
    assert "--num_fewshot 2: the pack's tasks (dare_sample) are zero-shot" in error


@pytest.mark.parametrize("limit", ["nan", "inf"])
def test_a_limit_that_is_not_a_finite_number_is_refused(capsys, tmp_path, limit: str) -> None:
    # the host would end on int(nan) after loading the model; "inf" is no fraction either
    error = _refused(capsys, "--tasks", "tallyqa_sample", "--limit", limit, "--output_path", str(tmp_path))
    assert f"--limit {limit}: expected a whole number of documents per task" in error


def test_an_offset_on_a_pack_task_is_refused_and_recorded_when_it_gets_through(capsys, tmp_path) -> None:
    # lmms-eval 0.7.3's --offset skips the first N documents process_docs returned: it splits a question
    # pair (or a DARE question) and the report said nothing: limit null, no deviation, a "full run"
    error = _refused(
        capsys, "--tasks", "hallusionbench_sample", "--offset", "3", "--output_path", str(tmp_path)
    )
    assert "--offset 3: not supported on the pack's tasks (hallusionbench_sample)" in error
    from lmms_eval_tasks.framework.run_deviations import argument_deviations

    args = argparse.Namespace(limit=None, offset=3, model="random_guess", model_args="")
    assert any(line.startswith("--offset 3: ") for line in argument_deviations(args, "tallyqa_sample"))
    from lmms_eval_tasks.host.argument_checks import run_argument_problem

    assert run_argument_problem(["--tasks", "hallusionbench_sample", "--offset", "0"]) is None


@pytest.mark.parametrize(
    "arguments, refused",
    [
        (["--limit", "0.5"], "--limit 0.5: a fraction is not supported on the pack's tasks (hallusionbench"),
        (["--num_fewshot", "2"], "--num_fewshot 2: the pack's tasks (hallusionbench_s*) are zero-shot"),
        (["--offset", "3"], "--offset 3: not supported on the pack's tasks (hallusionbench_s*)"),
    ],
    ids=["fraction", "few-shot", "offset"],
)
def test_a_wildcard_task_pattern_is_checked_as_the_host_expands_it(arguments, refused) -> None:
    # the host expands --tasks entries with fnmatch: "hallusionbench_s*" runs hallusionbench_sample, whose
    # pairs a fraction then cut (scored as whole) and whose few-shot request ended on the host's
    # AttributeError; the checks compared names literally and let the pattern through
    from lmms_eval_tasks.host.argument_checks import run_argument_problem

    problem = run_argument_problem(["--tasks", "mme,hallusionbench_s*", *arguments])
    assert problem is not None and problem.startswith(refused), problem
    assert run_argument_problem(["--tasks", "mme*", *arguments]) is None  # the host's own tasks only


@pytest.mark.parametrize(
    "arguments, model_args, refused",
    [
        (["--device", "cuda"], "device=cpu,device_map=cpu", "lmms_eval: --device cuda: this machine has no"),
        ([], "device=cuda:0,device_map=cuda:0", "lmms_eval: device cuda:0: this machine has no CUDA"),
        ([], "device_map=cpu", "lmms_eval: llava_hf's default device cuda: this machine has no CUDA"),
        ([], "device=mps,device_map=mps", "lmms_eval: device mps: this machine has no Apple MPS device"),
        ([], "device=cpu", "lmms_eval: llava_hf needs device_map in --model_args"),
        ([], "device=cpu,device_map=cpu,dtype=fp16", "lmms_eval: --model_args dtype=fp16: not a torch dtype"),
        (["--batch_size", "4"], "device=cpu,device_map=cpu", "lmms_eval: --batch_size 4: the host's llava"),
    ],
    ids=["device-flag", "device-arg", "default-device", "mps", "no-device-map", "dtype", "batch"],
)
def test_device_dtype_and_batch_size_the_wrapper_cannot_honour_are_refused_naming_what_works(
    arguments, model_args, refused
) -> None:
    import torch

    from lmms_eval_tasks.host.argument_checks import model_settings_problem

    if torch.cuda.is_available() or torch.backends.mps.is_available():
        pytest.skip("this machine has the devices these refusals are about")
    problem = model_settings_problem(arguments, [("llava_hf", f"pretrained=x,{model_args}")])
    assert problem is not None and problem.startswith(refused), problem
    works = ("device=cpu,device_map=cpu", "float32", "--batch_size 1")  # what the line names instead
    assert "\n" not in problem and any(fix in problem for fix in works), problem
    cpu = [("llava_hf", "pretrained=x,device=cpu,device_map=cpu")]
    assert model_settings_problem(["--batch_size", "1"], cpu) is None
    assert model_settings_problem(["--batch_size", "8"], [("random_guess", "seed=0")]) is None


def test_device_choices_are_refused_only_where_they_cannot_work() -> None:
    """A model that places nothing on a device (random_guess, a server model) runs with any --device; the
    host fails on --device given twice (the flag and device= in --model_args: 'multiple values')."""
    import torch

    from lmms_eval_tasks.host.argument_checks import model_settings_problem

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    for model in ("random_guess", "openai_pipelined", "openai_compatible"):
        assert model_settings_problem(["--device", "cuda"], [(model, "model=x")]) is None, model
    cpu = [("llava_hf", "pretrained=x,device=cpu,device_map=cpu")]
    problem = model_settings_problem(["--device", "cpu"], cpu)
    assert problem is not None and "\n" not in problem, problem
    assert problem.startswith("lmms_eval: --device cpu and device=cpu in --model_args"), problem
    assert model_settings_problem(["--device", "cpu"], [("llava_hf", "pretrained=x,device_map=cpu")]) is None


def test_zero_few_shot_spelled_otherwise_is_not_refused() -> None:
    from lmms_eval_tasks.host.argument_checks import run_argument_problem

    for shots in ("0", "00", "0.0"):
        assert run_argument_problem(["--tasks", "tallyqa_sample", "--num_fewshot", shots]) is None
    assert run_argument_problem(["--tasks", "tallyqa_sample", "--num_fewshot", "1"])


def test_generation_settings_are_split_as_the_host_splits_them() -> None:
    # the host does not split at commas inside brackets or quotes: until=["a", "b"] is one setting
    from lmms_eval_tasks.framework.run_deviations import argument_deviations

    args = argparse.Namespace(
        limit=None, model="m", model_args="", gen_kwargs='until=["Q:", "\\n"],max_new_tokens=5'
    )
    (line,) = [item for item in argument_deviations(args, "tallyqa_sample") if "gen_kwargs" in item]
    assert '--gen_kwargs until=["Q:", "\\n"], max_new_tokens=5: ' in line, line


def test_limit_minus_one_is_recorded_as_a_full_run() -> None:
    from lmms_eval_tasks.framework.run_deviations import argument_deviations
    from lmms_eval_tasks.reporting.schema import provenance

    args = argparse.Namespace(limit=-1.0, model="random_guess", model_args="")
    block = provenance(args, "vrb_sample_clean")
    assert block["limit"] is None
    assert not any("--limit" in deviation for deviation in argument_deviations(args, "vrb_sample_clean"))


def test_a_limit_says_how_many_of_the_task_documents_it_kept() -> None:
    # "--limit 1000.0: only part of each task's documents were evaluated" was said of a 12-document task
    # the limit did not cut; a cut said neither the task's size nor the limit as typed (the host's float)
    from datasets import load_dataset

    from lmms_eval_tasks import TASKS_DIR
    from lmms_eval_tasks.framework.run_deviations import argument_deviations
    from lmms_eval_tasks.tasks.vrb import task_docs

    dataset = load_dataset("parquet", data_files=str(next(TASKS_DIR.glob("vrb/**/vrb_sample.parquet"))))
    dataset = dataset["train"]
    for limit, expected in (
        (1000.0, f"--limit 1000: not below the task's {len(dataset)} documents: every document was"),
        (5.0, f"--limit 5: the first 5 of the task's {len(dataset)} documents; only part of the task's"),
    ):
        args = argparse.Namespace(limit=limit, model="random_guess", model_args="")
        with host_run(args, "2026-01-01T00:00:00"):
            task_docs.process_docs_vrb_sample_clean(dataset)
        (line,) = [item for item in argument_deviations(args, "vrb_sample_clean") if "--limit" in item]
        assert line.startswith(expected), line


def test_generation_settings_that_differ_are_deviations_with_values() -> None:
    from lmms_eval_tasks.framework.run_deviations import argument_deviations

    args = argparse.Namespace(limit=None, model="random_guess", model_args="", gen_kwargs="max_new_tokens=1")
    (line,) = [item for item in argument_deviations(args, "contextual_sample") if "gen_kwargs" in item]
    assert "max_new_tokens=1" in line and "(max_new_tokens=300)" in line  # ConTextual asks for 300
    same = argparse.Namespace(
        limit=None, model="m", model_args="", gen_kwargs="max_new_tokens=300,temperature=0"
    )
    assert not any("gen_kwargs" in item for item in argument_deviations(same, "contextual_sample"))


def test_a_group_report_compares_generation_settings_with_its_member_tasks() -> None:
    # a group's report (DARE's cross-prompt numbers) said "--gen_kwargs max_new_tokens=64: generation
    # settings set for the run, not the tasks' own" when every member asks for 64; and gave no value when not
    from lmms_eval_tasks.framework.run_deviations import argument_deviations

    def lines(gen_kwargs: str, name: str) -> list[str]:
        args = argparse.Namespace(limit=None, model="m", model_args="", gen_kwargs=gen_kwargs)
        return [item for item in argument_deviations(args, name) if "gen_kwargs" in item]

    assert lines("max_new_tokens=64,temperature=0", "dare_sample") == []
    (line,) = lines("max_new_tokens=1", "dare_sample")
    assert line.startswith("--gen_kwargs max_new_tokens=1: generation settings differ from its tasks' own "
                           "(max_new_tokens=64)"), line  # fmt: skip
    (line,) = lines("max_new_tokens=64", "mme")  # not the pack's: the values only
    assert line == "--gen_kwargs max_new_tokens=64: generation settings set for the run, not the tasks' own"


# ---- HallusionBench: a --limit never splits a question pair or a figure --------------------------------


def _hallusionbench_sample():
    from datasets import load_dataset

    from lmms_eval_tasks.tasks.hallusionbench.hooks import SAMPLE_NON_IMAGE

    return load_dataset("parquet", data_files=str(SAMPLE_NON_IMAGE.parent / "image.parquet"), split="train")


def _units(docs) -> tuple[Counter, Counter]:
    pairs = Counter((d["category"], d["subcategory"], d["set_id"], d["question_id"]) for d in docs)
    figures = Counter((d["category"], d["subcategory"], d["set_id"], d["figure_id"]) for d in docs)
    return pairs, figures


@pytest.mark.parametrize("limit", [3, 7, 12])
def test_a_hallusionbench_limit_takes_whole_pairs_and_figures(limit: int) -> None:
    from lmms_eval_tasks.tasks.hallusionbench import task_docs

    full = list(task_docs.process_docs_hallusionbench_sample(_hallusionbench_sample()))
    all_pairs, all_figures = _units(full)
    with host_run(argparse.Namespace(limit=float(limit)), "2026-01-01T00:00:00"):
        docs = task_docs.process_docs_hallusionbench_sample(_hallusionbench_sample())
    taken = list(docs)[:limit]  # what the host evaluates under --limit
    assert 0 < len(taken) <= limit
    pairs, figures = _units(taken)
    assert all(count == all_pairs[key] for key, count in pairs.items()), "a question pair was split"
    assert all(count == all_figures[key] for key, count in figures.items()), "a figure was split"


def test_a_hallusionbench_cut_is_said_in_the_report_and_the_host_table() -> None:
    from lmms_eval_tasks.framework.run_deviations import argument_deviations
    from lmms_eval_tasks.host.integration import table_view
    from lmms_eval_tasks.tasks.hallusionbench import task_docs

    args = argparse.Namespace(limit=7.0, model="random_guess", model_args="")
    with host_run(args, "2026-01-01T00:00:00"):
        docs = task_docs.process_docs_hallusionbench_sample(_hallusionbench_sample())
    kept = len(docs)
    (line,) = [item for item in argument_deviations(args, "hallusionbench_sample") if "--limit" in item]
    assert line.startswith(f"--limit 7: rounded down to {kept} documents, ")
    assert "of 9 whole figure sets (qAcc needs" in line
    view = table_view(
        {"results": {"hallusionbench_sample": {"alias": "hallusionbench_sample", "aAcc,none": 50.0}}}
    )
    alias = view["results"]["hallusionbench_sample"]["alias"]
    assert alias.startswith("hallusionbench_sample [--limit 7: ") and f"{kept} documents" in alias


def test_a_user_task_including_a_vrb_level_prints_no_nan_in_the_host_table() -> None:
    """A task of the user's own (`include:` of one VRB level) has no pack name: its hooks say it is the
    pack's, so its undefined metrics print N/A like the pack task's; a host task's NaN is left alone."""
    from lmms_eval.utils import make_table

    from lmms_eval_tasks.host.integration import table_view

    hooks = "<bound method TaskHooks.process_results of <lmms_eval_tasks.framework.hook_factory.TaskHooks>>"
    row = {"alias": "my_vrb_bright", "accuracy,none": 0.075, "accuracy_clean,none": float("nan"),
           "accuracy_clean_stderr,none": "N/A"}  # fmt: skip
    host_row = {"alias": "host_task", "acc,none": float("nan"), "acc_stderr,none": "N/A"}
    results = {
        "results": {"my_vrb_bright": row, "host_task": host_row}, "versions": {}, "n-shot": {},
        "higher_is_better": {},
        "configs": {"my_vrb_bright": {"process_results": hooks}, "host_task": {"process_results": "<f>"}},
    }  # fmt: skip
    lines = str(make_table(table_view(results))).splitlines()
    mine = [line for line in lines if "my_vrb_bright" in line]
    assert mine and not any("NaN" in line for line in mine), mine
    assert any("accuracy_clean" in line and "N/A" in line for line in mine)
    assert any("host_task" in line and "NaN" in line for line in lines)


def test_a_fraction_that_reaches_a_task_with_units_is_refused_when_its_docs_are_prepared() -> None:
    # a robustness variant or a task of the user's own on a pack task is no pack name: the launcher let
    # --limit 0.5 through, the pack did not round it, and the host's fraction split question pairs
    from lmms_eval_tasks.tasks.hallusionbench import task_docs

    with host_run(argparse.Namespace(limit=0.5), "2026-01-01T00:00:00"):
        with pytest.raises(ValueError) as caught:
            task_docs.process_docs_hallusionbench_sample(_hallusionbench_sample())
        assert str(caught.value).startswith(
            "hallusionbench_sample: --limit 0.5: a fraction of the documents would split its figure sets"
        ), caught.value
        from datasets import load_dataset

        from lmms_eval_tasks import TASKS_DIR
        from lmms_eval_tasks.tasks.vrb import task_docs as vrb_docs

        vrb = load_dataset("parquet", data_files=str(next(TASKS_DIR.glob("vrb/**/vrb_sample.parquet"))))
        assert len(vrb_docs.process_docs_vrb_sample_clean(vrb["train"])) == len(vrb["train"])  # no units


def test_few_shot_that_reaches_a_pack_task_under_another_name_is_refused_when_its_docs_are_prepared() -> None:
    # a robustness variant (or a user's task on a pack task) is no pack name: the launcher let
    # --num_fewshot 2 through and the host ended on "'ConfigurableTask' object has no attribute 'sampler'"
    from datasets import load_dataset

    from lmms_eval_tasks import TASKS_DIR
    from lmms_eval_tasks.tasks.vrb import task_docs

    dataset = load_dataset("parquet", data_files=str(next(TASKS_DIR.glob("vrb/**/vrb_sample.parquet"))))
    with host_run(argparse.Namespace(limit=None, num_fewshot=2), "2026-01-01T00:00:00"):
        with pytest.raises(ValueError) as caught:
            task_docs.process_docs_vrb_sample_clean(dataset["train"])
    assert str(caught.value) == (
        "vrb_sample_clean: --num_fewshot 2: the pack's tasks are zero-shot, as their papers evaluate them, "
        "and define no few-shot examples; drop --num_fewshot"
    )
    with host_run(argparse.Namespace(limit=None, num_fewshot=0), "2026-01-01T00:00:00"):
        assert len(task_docs.process_docs_vrb_sample_clean(dataset["train"])) == len(dataset["train"])


def test_a_robustness_variant_of_a_cut_task_says_its_cut() -> None:
    # the variant runs its source's process_docs (rounded to whole figure sets) but reports under its own
    # name: its report said the generic "--limit 7: only part ..." and its host-table row nothing
    from lmms_eval_tasks import TASKS_DIR
    from lmms_eval_tasks.framework import task_index
    from lmms_eval_tasks.framework.cuts import cut_note, table_label
    from lmms_eval_tasks.framework.run_deviations import argument_deviations
    from lmms_eval_tasks.tasks.vrb.robustness import variant_process_docs

    entry = next(item for item in task_index.pack_tasks() if item.name == "hallusionbench_sample")
    variant = "hallusionbench_sample_vrb_fog_s3"
    args = argparse.Namespace(limit=7.0, model="random_guess", model_args="")
    with host_run(args, "2026-01-01T00:00:00"):
        docs = variant_process_docs(str(TASKS_DIR / entry.path), variant)(_hallusionbench_sample())
    assert set(docs["pack_variant"]) == {variant}
    assert cut_note(variant) == cut_note("hallusionbench_sample") is not None
    (line,) = [item for item in argument_deviations(args, variant) if "--limit" in item]
    assert line.startswith(f"--limit 7: rounded down to {len(docs)} documents, "), line
    assert table_label(variant, variant).startswith(f"{variant} [--limit 7: {len(docs)} documents")


def test_a_limit_smaller_than_the_first_unit_says_the_smallest_that_works() -> None:
    from lmms_eval_tasks.tasks.hallusionbench import task_docs

    with host_run(argparse.Namespace(limit=1.0), "2026-01-01T00:00:00"):
        smallest = r"--limit 1 is smaller than its first figure set \(2 documents: qAcc .* --limit 2 "
        with pytest.raises(ValueError, match=smallest):
            task_docs.process_docs_hallusionbench_sample(_hallusionbench_sample())


# ---- DARE: a --limit never splits a binary question's options or a single_var instance's variants --------


@pytest.mark.parametrize(
    "kind, task, key, per_unit, unit",
    [
        ("n_correct", "dare_sample_multi_binary_p1", "id", 4, "questions"),  # one document per option
        ("1_correct_var", "dare_sample_single_var_gen_p1", "instance_id", 3, "instances"),  # 3 option sets
    ],
)
def test_a_dare_limit_takes_whole_questions_and_instances(kind, task, key, per_unit, unit) -> None:
    from datasets import load_dataset

    from lmms_eval_tasks.framework.cuts import table_label
    from lmms_eval_tasks.framework.run_deviations import argument_deviations
    from lmms_eval_tasks.tasks.dare import hooks, make_sample

    dataset = load_dataset("parquet", data_files=str(make_sample.sample_path(kind)), split="train")
    full = Counter(hooks.HOOKS.process_docs_for(task)(dataset)[key])
    assert set(full.values()) == {per_unit}, full
    args = argparse.Namespace(limit=5.0, model="random_guess", model_args="")
    with host_run(args, "2026-01-01T00:00:00"):
        docs = hooks.HOOKS.process_docs_for(task)(dataset)
    taken = Counter(list(docs)[i][key] for i in range(min(5, len(docs))))  # what the host evaluates
    assert len(docs) == per_unit and all(count == per_unit for count in taken.values()), taken
    (line,) = [item for item in argument_deviations(args, task) if "--limit" in item]
    kept = f"{per_unit} documents, 1 of {len(full)} whole {unit}"
    assert line.startswith(f"--limit 5: rounded down to {kept} ("), line
    assert table_label(task, task) == f"{task} [--limit 5: {kept}]"


# ---- DARE: a partial grid says what its cross-prompt numbers are made of -------------------------------


def test_a_partial_dare_grid_warns_that_single_accuracy_is_one_prompt() -> None:
    from datasets import load_dataset

    from lmms_eval_tasks.tasks.dare import hooks, make_sample

    dataset = load_dataset("parquet", data_files=str(make_sample.sample_path("1_correct")), split="train")
    task = "dare_sample_single_gen_p1"
    docs = hooks.HOOKS.process_docs_for(task)(dataset)
    rng = random.Random(0)
    records = [hooks.make_record(doc, [rng.choice("ABCD")], task) for doc in docs]
    details = hooks.report_details(records, {}, task, None)
    warnings = details.get("warnings", [])
    assert any(
        w.startswith("single_accuracy averages prompt p1 only, not the paper's 3 prompts") for w in warnings
    )
    # two prompts over different questions (a cut binary task, a failed member): the cells are said to differ
    other = [hooks.make_record(doc, ["A"], "dare_sample_single_gen_p2") for doc in list(docs)[:3]]
    warnings = hooks.report_details(records + other, {}, "dare_sample", None)["warnings"]
    missing = len(docs) - 3
    assert any(w.startswith(f"{missing} of {len(docs)} single questions are missing") for w in warnings), (
        warnings
    )
    json.dumps(warnings)


# ---- the two dataset cases, through HallusionBench's own process_docs -----------------------------


def test_hallusionbench_without_gt_answer_details_is_refused_before_any_model() -> None:
    from lmms_eval_tasks.tasks.hallusionbench import task_docs

    with pytest.raises(ValueError) as caught:
        task_docs.process_docs_hallusionbench_sample(
            _hallusionbench_sample().remove_columns("gt_answer_details")
        )
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("hallusionbench_sample: the dataset has no column 'gt_answer_details'"), message


def test_a_null_question_is_refused_not_sent_as_none() -> None:
    from lmms_eval_tasks.tasks.hallusionbench import task_docs

    dataset = _hallusionbench_sample()
    broken = dataset.map(
        lambda row, index: {"question": None if index == 2 else row["question"]}, with_indices=True
    )
    with pytest.raises(ValueError) as caught:
        task_docs.process_docs_hallusionbench_sample(broken)
    row = dataset[2]
    identity = "/".join(
        row[name] for name in ("category", "subcategory", "set_id", "figure_id", "question_id")
    )
    assert str(caught.value) == (
        f"hallusionbench_sample: row {identity} (row 2): field 'question': null; expected non-empty text"
    )
