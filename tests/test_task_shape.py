"""The shared task shape: registry, one YAML generator, generated files in sync, safe group metrics."""

from __future__ import annotations

import importlib
import sys
import threading
from pathlib import Path

import pytest

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.framework import registry
from lmms_eval_tasks.framework.registry import Benchmark, benchmarks
from lmms_eval_tasks.framework.task_index import load_yaml, pack_tasks
from lmms_eval_tasks.framework.taskgen import (
    GroupYaml,
    TaskYaml,
    drifted,
    generated_files,
    group_metric_order,
    host_group_writer,
    render_group,
    render_task,
    stale,
    task_docs_module,
    templated_files,
)
from tests.helpers import toy_schema
from tests.skeleton import SKELETON, skeleton_folder


def _task_metrics(task: str, entries: dict) -> list[str]:
    entry = entries[task]
    if entry.kind == "group":
        return [metric for member in _members(entry) for metric in _task_metrics(member, entries)]
    config = load_yaml((TASKS_DIR / entry.path).resolve())
    return [item["metric"] for item in config.get("metric_list") or []]


def _members(entry) -> list[str]:
    return list(load_yaml((TASKS_DIR / entry.path).resolve()).get("task") or [])


def test_every_group_metric_is_written_by_its_own_config_under_the_hosts_substring_rule() -> None:
    # The host writes a group's "<key>,none" with every aggregate config whose name is a substring of it,
    # the last one winning: for each member metric that must be the metric's own config.
    entries = {entry.name: entry for entry in pack_tasks()}
    checked = 0
    for entry in entries.values():
        if entry.kind != "group":
            continue
        config = load_yaml((TASKS_DIR / entry.path).resolve())
        aggregate = [item["metric"] for item in config.get("aggregate_metric_list") or []]
        if not aggregate:
            continue
        for metric in set(_task_metrics(entry.name, entries)):
            writer = host_group_writer(f"{metric},none", aggregate)
            assert writer in (None, f"{metric},none"), f"{entry.name}: {metric} would be written by {writer}"
            checked += 1
    assert checked > 0


def test_the_host_substring_rule_is_what_the_order_defends_against() -> None:
    # "acc,none" is a substring of "rel_acc,none": in the wrong order rel_acc gets acc's value.
    assert host_group_writer("rel_acc,none", ["rel_acc,none", "acc,none"]) == "acc,none"
    ordered = [f"{key},none" for key, _ in group_metric_order([("rel_acc", True), ("acc", True)])]
    assert host_group_writer("rel_acc,none", ordered) == "rel_acc,none"
    assert host_group_writer("acc,none", ordered) == "acc,none"


def test_generated_files_are_in_sync_with_their_generators() -> None:
    files = generated_files()
    changed = drifted(files)
    assert not changed, f"run `make generate`; drifted: {[str(path) for path in changed]}"
    leftovers = stale(files)
    assert not leftovers, f"run `make generate`; no generator makes {[str(path) for path in leftovers]}"


@pytest.mark.parametrize("name", [SKELETON])
def test_make_generate_rewrites_a_benchmark_package_of_its_own(name: str, capsys, monkeypatch) -> None:
    """`python -m lmms_eval_tasks.framework.taskgen NAME` on a `new-benchmark --out` package (outside the
    pack's folder): it names the file it rewrites, where it raised ValueError after the first file."""
    from lmms_eval_tasks.framework import task_index, taskgen

    monkeypatch.setattr(task_index, "write_host_index", lambda: None)  # the pack's own index: not ours
    folder = skeleton_folder().resolve()
    stale_files = [folder / "task_docs.py", folder / "yaml" / f"{name}_sample.yaml"]
    kept = [path.read_bytes() for path in stale_files]
    for path in stale_files:
        path.write_text("# stale\n", encoding="utf-8")
    assert taskgen.main(["--check", name]) == 1 and f"drifted: {stale_files[0]}" in capsys.readouterr().out
    assert taskgen.main([name]) == 0
    assert f"wrote {stale_files[1]}" in capsys.readouterr().out
    assert [path.read_bytes() for path in stale_files] == kept


@pytest.mark.parametrize("name", [SKELETON])
def test_a_users_task_that_includes_a_pack_tasks_yaml_reports_as_itself(name: str) -> None:
    """`--include_path` YAML ``include: <pack>/NAME_sample.yaml`` + ``task: my_copy`` runs the pack task's own
    process_docs: its records were tagged NAME_sample, so its records and report overwrote that task's."""
    import types

    import datasets

    from lmms_eval_tasks.reporting import datasets_read

    process_docs = getattr(importlib.import_module(f"{name}.task_docs"), f"process_docs_{name}_sample")
    parquet = skeleton_folder() / "sample" / f"{name}_sample.parquet"
    rows = datasets.load_dataset("parquet", data_files=str(parquet), split="train")

    def docs_of(host_task: str) -> datasets.Dataset:
        config = types.SimpleNamespace(task=host_task, process_docs=process_docs)
        with datasets_read.loading(types.SimpleNamespace(config=config)):
            return process_docs(rows)

    assert "pack_variant" not in docs_of(f"{name}_sample").column_names  # the pack's own task: itself
    copy = docs_of("my_copy")
    assert set(copy["pack_task"]) == {f"{name}_sample"} and set(copy["pack_variant"]) == {"my_copy"}


@pytest.mark.parametrize("name", ["yaml", "class"])
def test_new_benchmark_refuses_a_name_python_cannot_import_as_a_benchmark(name: str, tmp_path: Path) -> None:
    """`new-benchmark yaml --out DIR` hid PyYAML (an ImportError deep in huggingface_hub) and `class` ended
    in a SyntaxError, each after writing its files: now one line, before any file is written."""
    from lmms_eval_tasks.cli.new_benchmark import write_benchmark

    with pytest.raises(ValueError, match=repr(name)):
        write_benchmark(name, out=tmp_path)
    assert not any(tmp_path.iterdir())


def test_task_yaml_lists_at_most_eight_metrics() -> None:
    spec = TaskYaml(task="toy_a", hooks="toy.hooks", metrics=[(f"m{index}", True) for index in range(9)])
    with pytest.raises(ValueError, match="at most 8"):
        render_task(spec, "toy")


def test_every_benchmark_is_registered_with_few_headline_metrics() -> None:
    every = benchmarks()
    assert {"dare", "hallusionbench"} <= set(every)
    for benchmark in every.values():
        assert 1 <= len(benchmark.headline_metrics) <= 8
        top = importlib.import_module(str(benchmark.behaviour).partition(".")[0])  # the pack, or its own
        assert (Path(str(top.__file__)).resolve().parents[1] / benchmark.docs).is_file(), benchmark.docs


def test_a_toy_benchmark_from_the_registry_interface_alone(tmp_path: Path) -> None:
    # What docs/architecture.md's walk-through does: describe, register, score, render its YAML.
    module = tmp_path / "toy_scoring.py"
    module.write_text(
        "from dataclasses import dataclass\n"
        "from lmms_eval_tasks.framework.registry import Behaviour, scorer\n"
        "@dataclass(frozen=True)\n"
        "class Options:\n"
        "    threshold: float = 0.5\n"
        "@scorer(Options)\n"
        "def score(records, options):\n"
        "    correct = [record['prediction'] == record['answer'] for record in records]\n"
        "    return {'accuracy': 100.0 * sum(correct) / len(correct)}, {}\n"
        "BEHAVIOUR = Behaviour(score=score)\n",
        encoding="utf-8",
    )
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        toy = Benchmark(
            name="toybench",
            title="Toy",
            description="a toy benchmark",
            behaviour="toy_scoring",
            record_schema=toy_schema("answer"),
            headline_metrics=("accuracy",),
        )
        registry.register(toy)
        assert registry.get_benchmark("toybench") is toy
        assert registry.benchmark_for_task("toybench_sample") is toy
        records = [{"answer": "a", "prediction": "a"}, {"answer": "b", "prediction": "c"}]
        assert toy.score(records) == ({"accuracy": 50.0}, {})  # 1 of 2 correct
        text = render_task(
            TaskYaml(task="toybench_sample", hooks="toy.hooks", metrics=[("accuracy", True)]), "toy"
        )
        assert "aggregation: !function toy.hooks.aggregate_accuracy" in text
        group_spec = GroupYaml("toybench", ["toybench_sample"], "toy.hooks", [("accuracy", True)])
        group = render_group(group_spec, "t")
        assert "aggregation: !function toy.task_docs.aggregate_toybench_accuracy" in group
        assert "weight_by_size" not in group  # the host's field keeps its meaning
    finally:
        registry.unregister("toybench")
        sys.path.remove(str(tmp_path))
    assert "toybench" not in benchmarks()


def test_task_docs_resolves_exactly_the_names_its_yaml_references(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "toydocs"
    (package / "yaml").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "hooks.py").write_text(
        "from lmms_eval_tasks.framework.hook_factory import TaskHooks\n"
        "KNOWN = frozenset({'acc', 'n'})\n"
        "HOOKS = TaskHooks('toydocs', lambda doc, results, task: {}, known_metrics=KNOWN)\n",
        encoding="utf-8",
    )
    (package / "task_docs.py").write_text(task_docs_module("toydocs.hooks", "t"), encoding="utf-8")
    metrics = [("acc", True), ("n", True)]
    for task in ("toydocs_a", "toydocs_b"):
        spec = TaskYaml(task, "toydocs.hooks", metrics, docs_module="toydocs.task_docs")
        (package / "yaml" / f"{task}.yaml").write_text(render_task(spec, "t"), encoding="utf-8")
    group = GroupYaml("toydocs_all", ["toydocs_a", "toydocs_b"], "toydocs.hooks", metrics)
    (package / "yaml" / "toydocs_all.yaml").write_text(render_group(group, "t"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    docs = importlib.import_module("toydocs.task_docs")
    named = {name for name in dir(docs) if name.startswith(("process_docs_", "aggregate_"))}
    assert named == {
        "process_docs_toydocs_a",
        "process_docs_toydocs_b",
        "aggregate_acc",
        "aggregate_n",
        "aggregate_toydocs_all_acc",
        "aggregate_toydocs_all_n",
    }
    assert "HOOKS" in dir(docs)
    assert docs.process_docs_toydocs_b.__name__ == "process_docs_toydocs_b"
    assert docs.aggregate_toydocs_all_n.__name__ == "aggregate_toydocs_all_n"  # the group's, not "all_n"
    assert docs.aggregate_acc.__name__ == "aggregate_acc" and callable(docs.aggregate_acc.pack_stderr)
    seen: list[object] = []  # one function per name, also when threads ask for it at once
    threads = [threading.Thread(target=lambda: seen.append(docs.aggregate_n)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(function) for function in seen}) == 1 and seen[0] is docs.aggregate_n
    for typo in ("process_docs_toydocs_c", "aggregate_ac", "aggregate_toydocs_al_acc", "doc_to_text"):
        with pytest.raises(AttributeError, match=typo):
            getattr(docs, typo)
    clash = tmp_path / "toyclash"  # one name given to two tasks: the first lookup says so
    clash.mkdir()
    (clash / "__init__.py").write_text("", encoding="utf-8")
    (clash / "task_docs.py").write_text(task_docs_module("toydocs.hooks", "t"), encoding="utf-8")
    for task in ("toydocs_a", "toydocs_c"):
        spec = TaskYaml(task, "toydocs.hooks", metrics, docs_module="toyclash.task_docs")
        text = render_task(spec, "t").replace("process_docs_toydocs_c", "process_docs_toydocs_a")
        (clash / f"{task}.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="process_docs_toydocs_a names both"):
        importlib.import_module("toyclash.task_docs").process_docs_toydocs_a  # noqa: B018
    for name in [name for name in sys.modules if name.partition(".")[0] in ("toydocs", "toyclash")]:
        del sys.modules[name]


def test_prepared_data_tasks_say_where_their_data_comes_from() -> None:
    """The full TDIUC/TallyQA/DVQA/VQDv1 YAML names a labelled one-row stand-in, never the sample, and its
    comment names the prepare command and the variable; the stand-in's only row says the same."""
    import datasets

    from lmms_eval_tasks import TASKS_DIR

    for name in ("tdiuc", "tallyqa", "dvqa", "vqdv1"):
        text = (TASKS_DIR / name / "yaml" / f"{name}.yaml").read_text(encoding="utf-8")
        assert f"# Data: the folder written by `lmms-eval-tasks prepare {name}`" in text
        assert f"$LMMS_EVAL_TASKS_DATA_{name.upper()}" in text
        assert 'test: "stand_in.parquet"' in text and "sample/" not in text
        rows = datasets.load_dataset(
            "parquet", data_files=str(TASKS_DIR / name / "yaml" / "stand_in.parquet"), split="train"
        )
        assert rows.column_names == ["pack_stand_in"] and len(rows) == 1
        assert f"lmms-eval-tasks prepare {name}" in rows[0]["pack_stand_in"]


def test_a_vrb_level_yaml_holds_only_what_differs() -> None:
    """Every VRB level file includes its template and stays under 12 lines (the brief's budget)."""
    from lmms_eval_tasks import TASKS_DIR

    levels = sorted((TASKS_DIR / "vrb" / "yaml" / "levels").glob("*.yaml"))
    assert len(levels) == 71
    for path in levels:
        lines = path.read_text(encoding="utf-8").splitlines()
        assert len(lines) < 12, path.name
        assert lines[1] == "include: ../_vrb_levels_template_yaml", path.name


def test_hub_data_files_stay_patterns_inside_the_hub_repository() -> None:
    """Only local builders' data_files are rewritten relative to the YAML file: a hub dataset's pattern
    (VRB's ``data/validation-*`` inside ``lmms-lab-encoder/VQAv2``) must reach `datasets` as written."""
    import yaml

    from lmms_eval_tasks import TASKS_DIR
    from lmms_eval_tasks.framework.taskgen import LOCAL_BUILDERS

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    checked = 0
    for path in sorted(item for item in TASKS_DIR.rglob("*yaml") if item.is_file()):
        config = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader) or {}
        dataset_path = config.get("dataset_path")
        files = (config.get("dataset_kwargs") or {}).get("data_files")
        if dataset_path is None or files is None or dataset_path in LOCAL_BUILDERS:
            continue
        patterns = files.values() if isinstance(files, dict) else [files]
        for pattern in patterns:
            assert not str(pattern).startswith(".."), f"{path}: hub data_files {pattern!r} made a path"
            checked += 1
    assert checked >= 1  # VRB's levels template reads validation files only


def test_a_generating_task_without_doc_to_target_is_refused_when_rendered() -> None:
    """lmms-eval 0.7.3 calls doc_to_target on the first document when it builds a task; unset, the run
    ends in a bare "TypeError: TypeError". The generator refuses such a task naming it and the fix."""
    from lmms_eval_tasks.framework.taskgen import hook_fields

    spec = TaskYaml(task="toy_sample", hooks="toy.hooks", metrics=[("accuracy", True)],
                    fields=hook_fields("toy.hooks"))  # fmt: skip
    for render in (lambda: render_task(spec, "toy"), lambda: templated_files("t", "toy", [spec], "_t", str)):
        with pytest.raises(ValueError, match=r"toy_sample: no doc_to_target; .*doc_to_target=<field name"):
            render()
    fixed = TaskYaml(task="toy_sample", hooks="toy.hooks", metrics=[("accuracy", True)],
                     fields=hook_fields("toy.hooks", doc_to_target="answer"))  # fmt: skip
    assert 'doc_to_target: "answer"' in render_task(fixed, "toy")
