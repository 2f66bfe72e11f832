"""host.patches: every host patch tied to the host versions it was written for, with a probe."""

from __future__ import annotations

import tomllib
from pathlib import Path

# Imported first: importing either removes every loguru handler (a warnings_logged sink too).
import lmms_eval.llm_judge.launcher  # noqa: F401
import lmms_eval.models  # noqa: F401
import pytest

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.framework.task_index import host_task_entries
from lmms_eval_tasks.host import host_bug_fixes as fixes
from lmms_eval_tasks.host import model_availability
from lmms_eval_tasks.host import patches as host
from lmms_eval_tasks.host import version as host_versions
from lmms_eval_tasks.host.patch_kit import unwrapped

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget which patches already warned, so each test sees its own warning."""
    monkeypatch.setattr(host, "_warned", set())


def test_supported_range_is_the_pyproject_bound() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (requirement,) = [dep for dep in project["dependencies"] if dep.startswith("lmms-eval")]
    assert requirement == f"lmms-eval{host_versions.SUPPORTED_HOST_VERSIONS}"
    assert host_versions.host_version() == "0.7.3" and host_versions.host_supported()


@pytest.mark.parametrize(
    ("version", "specifier", "expected"),
    [
        ("0.7.3", ">=0.7.3,<0.8", True),
        ("0.7.10", ">=0.7.3,<0.8", True),
        ("0.8.0", ">=0.7.3,<0.8", False),
        ("0.7.2", ">=0.7.3,<0.8", False),
        ("0.7.4", "==0.7.3", False),
        (None, "==0.7.3", False),
        ("not a version", "==0.7.3", False),
    ],
)
def test_version_in(version: str | None, specifier: str, expected: bool) -> None:
    assert host_versions.version_in(version, specifier) is expected


def test_every_patch_applies_to_the_installed_host() -> None:
    statuses = {status.name: status for status in host.check_patches()}
    assert set(statuses) == set(host.PATCHES)
    assert all(status.state in ("applies", "applied") for status in statuses.values()), statuses
    assert host_versions.host_tested()


def test_patches_for_a_run_depend_on_its_models() -> None:
    common = [
        "pack_task_index",
        "libyaml_task_index",
        "task_index_cache",
        "task_dataset_context",
        "failure_recorder",
        "pack_stderr",
        "group_only_metrics",
        "table_na",
        "predict_only_records",
        "host_outputs",
        "run_context",
        "loglikelihood_result",
        "no_text_result",
        "cache_no_failures",
        "cache_checkpoints",
        "cache_no_secrets",
        "cache_pack_version",
        "cache_request_settings",
        "cut_replies",
        "cache_version",
    ]
    assert host.patches_for(["random_guess"]) == common
    server = host.patches_for(["openai"])
    assert server == [*common[:-1], "server_timeouts", common[-1]]  # only with a server model
    assert host.patches_for(["llava_hf"]) == [
        *common,
        "llava_hf_loglikelihood",
        "llava_hf_text_only",
        "llava_hf_simple_text_only",
        "chat_loglikelihood",
    ]


def test_another_host_version_gets_every_patch_whose_probe_passes(
    monkeypatch: pytest.MonkeyPatch, warnings_logged: list[str], fresh_warnings: None
) -> None:
    """The version gates nothing: on an untested release a patch applies when its probe passes."""
    import lmms_eval.evaluator as evaluator

    original = unwrapped(evaluator.unwrap_generation_output)
    monkeypatch.setattr(evaluator, "unwrap_generation_output", original)
    monkeypatch.setattr(host_versions, "host_version", lambda: "0.7.9")
    assert not host_versions.host_tested()
    status = host.apply_patch("loglikelihood_result")
    assert (status.state, status.ok) == ("applied", True)
    assert evaluator.unwrap_generation_output((-1.5, False)) == ((-1.5, False), None)
    assert warnings_logged == []


def test_patches_that_do_not_apply_are_named_in_one_line(
    monkeypatch: pytest.MonkeyPatch, warnings_logged: list[str], fresh_warnings: None
) -> None:
    """On an untested host two patches whose probes fail: one warning line, each patch with its reason and
    what a run loses; the host is left alone; the report's provenance records it."""
    import lmms_eval.evaluator as evaluator
    from lmms_eval.tasks import TaskManager

    def initialize_tasks(self, include_path=None, include_defaults=True, extra=None):  # noqa: ANN001
        return {}

    def unwrap_generation_output(output):  # noqa: ANN001, ANN202 - a host that raises on pairs
        raise TypeError("no pairs here")

    monkeypatch.setattr(TaskManager, "initialize_tasks", initialize_tasks)
    monkeypatch.setattr(evaluator, "unwrap_generation_output", unwrap_generation_output)
    monkeypatch.setattr(host_versions, "host_version", lambda: "0.7.9")
    monkeypatch.setattr(host, "_APPLIED", {})
    statuses = host.apply_patches(names=["pack_task_index", "loglikelihood_result", "table_na"])
    assert [status.state for status in statuses] == ["skipped", "skipped", "applied"]
    assert TaskManager.initialize_tasks is initialize_tasks
    assert evaluator.unwrap_generation_output is unwrap_generation_output
    assert len(warnings_logged) == 1 and len(warnings_logged[0].strip().splitlines()) == 1
    line = warnings_logged[0]
    assert "on lmms-eval 0.7.9, a version the pack's patches were not tested on (tested on lmms-eval" in line
    assert "2 host patch(es) did not apply: pack_task_index (TaskManager.initialize_tasks takes " in line
    assert "--include_path $(lmms-eval-tasks tasks-dir)" in line  # the way around it
    assert (
        "loglikelihood_result (unwrap_generation_output((-1.5, False)) raised TypeError: no pairs here"
        in line
    )
    assert "too many values to unpack" in line
    host.apply_patches(names=["pack_task_index"])
    assert len(warnings_logged) == 1  # warned once per patch
    assert host.patches_of_this_run() == {
        "applied": ["table_na"],
        "not_needed": [],
        "skipped": {
            "pack_task_index": statuses[0].detail,
            "loglikelihood_result": statuses[1].detail,
        },
        "host_tested": False,
    }


def test_a_probe_mismatch_skips_the_patch(
    monkeypatch: pytest.MonkeyPatch, warnings_logged: list[str], fresh_warnings: None
) -> None:
    """Same version, but the patched method changed shape (as a host hot-fix could): no blind patching."""
    from lmms_eval.tasks import TaskManager

    def initialize_tasks(self, include_path=None, include_defaults=True, extra=None):  # noqa: ANN001
        return {}

    monkeypatch.setattr(TaskManager, "initialize_tasks", initialize_tasks)
    status = host.apply_patch("pack_task_index")
    assert status.state == "skipped"
    assert status.detail == (
        "TaskManager.initialize_tasks takes (self, include_path, include_defaults, extra), "
        "expected (self, include_path, include_defaults)"
    )
    assert TaskManager.initialize_tasks is initialize_tasks
    assert "not tested on" not in warnings_logged[0]  # 0.7.3 is a tested release
    assert "--include_path $(lmms-eval-tasks tasks-dir)" in warnings_logged[0]  # the way around it


def test_no_probe_reads_source_text() -> None:
    """Probes check behaviour (calls, signatures, compiled code's names), never the host's source text."""
    import ast

    readers = {"getsource", "getsourcelines", "findsource", "getsourcefile", "getfile", "linecache"}
    from lmms_eval_tasks.host import host_bug_fixes, patch_kit

    for module in (host, host_bug_fixes, patch_kit):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        used |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        used |= {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        assert not readers & used, (module.__name__, readers & used)


def test_a_fix_the_host_no_longer_needs_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import lmms_eval.evaluator as evaluator

    def unwrap_generation_output(output):  # noqa: ANN001, ANN202 - a host that keeps pairs itself
        return output, None

    monkeypatch.setattr(evaluator, "unwrap_generation_output", unwrap_generation_output)
    status = host.apply_patch("loglikelihood_result")
    assert (status.state, status.ok) == ("not needed", True)
    assert evaluator.unwrap_generation_output is unwrap_generation_output


def test_loglikelihood_patch_keeps_pairs_and_is_idempotent(monkeypatch: pytest.MonkeyPatch) -> None:
    import lmms_eval.evaluator as evaluator

    original = getattr(evaluator.unwrap_generation_output, "__wrapped__", evaluator.unwrap_generation_output)
    monkeypatch.setattr(evaluator, "unwrap_generation_output", original)
    assert isinstance(original((-1.5, False))[0], str)  # the 0.7.3 bug the patch is for
    assert host.apply_patch("loglikelihood_result").state == "applied"
    patched = evaluator.unwrap_generation_output
    assert patched((-1.5, False)) == ((-1.5, False), None)
    assert patched("text") == original("text")
    assert host.apply_patch("loglikelihood_result").state == "applied"
    assert evaluator.unwrap_generation_output is patched and patched.__wrapped__ is original


def test_pack_task_index_patch_adds_the_pack_after_user_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lmms_eval.tasks import TaskManager

    monkeypatch.setattr(TaskManager, "initialize_tasks", TaskManager.initialize_tasks)  # undone afterwards
    host.apply_patch("pack_task_index")
    manager = TaskManager(include_path=str(tmp_path), include_defaults=False)
    assert manager.include_path == [str(tmp_path), str(TASKS_DIR)]
    assert "hallusionbench_sample" in manager.all_tasks


def test_host_task_entries_index_a_folder(tmp_path: Path) -> None:
    (tmp_path / "toy.yaml").write_text("task: toy_task\ndataset_path: json\noutput_type: generate_until\n")
    entries = host_task_entries(tmp_path)
    assert entries["toy_task"]["type"] == "task"
    assert Path(entries["toy_task"]["yaml_path"]) == tmp_path / "toy.yaml"


def test_the_task_index_fingerprint_includes_the_host_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from lmms_eval_tasks.framework.task_index import load_host_index, write_host_index, yaml_fingerprint

    copy = tmp_path / "tasks"
    shutil.copytree(TASKS_DIR / "hallusionbench", copy / "hallusionbench")
    index_file = write_host_index(copy, tmp_path / "index.json")
    written_for = yaml_fingerprint(copy)
    assert load_host_index(copy, index_file) is not None
    from lmms_eval_tasks.reporting import schema

    monkeypatch.setattr(schema, "host_version", lambda: "0.7.4")
    assert yaml_fingerprint(copy) != written_for
    assert load_host_index(copy, index_file) is None  # another host: the launcher lets it parse the YAML


def test_wrapper_status_on_this_machine() -> None:
    """llava_hf and the pack's baseline can run; llava imports but its LLaVA code is missing."""
    assert model_availability.wrapper_status("llava_hf").ok
    baseline = model_availability.wrapper_status("random_guess")
    assert baseline.ok and baseline.class_path == "lmms_eval_tasks.models.random_guess.RandomGuess"
    llava = model_availability.wrapper_status("llava")
    assert not llava.ok and llava.missing == ("llava",)
    assert llava.class_path == "lmms_eval.models.simple.llava.Llava"
    assert "No module named 'llava'" in llava.reason and "get_model_name_from_path" in llava.reason
    unknown = model_availability.wrapper_status("no_such_model")
    assert not unknown.ok and "not in the host's model registry" in unknown.reason


def test_unbound_guarded_names_finds_names_a_failed_try_import_left_undefined(tmp_path: Path) -> None:
    import importlib.util
    import sys

    source = (
        "try:\n"
        "    from surely_not_installed_pkg.core import build_model, Tokenizer as Tok\n"
        "except ImportError:\n"
        "    pass\n"
        "try:\n"
        "    import json\n"
        "except ImportError:\n"
        "    pass\n"
        "class Wrapper:\n"
        "    def __init__(self):\n"
        "        self.model = build_model()\n"
        "        self.text = json.dumps({})\n"
        "    def tokenizer(self):\n"
        "        return Tok\n"
    )
    path = tmp_path / "toy_wrapper.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("toy_wrapper", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["toy_wrapper"] = module
    try:
        spec.loader.exec_module(module)
        assert model_availability.unbound_guarded_names(module.Wrapper) == {
            "Tok": "surely_not_installed_pkg.core",
            "build_model": "surely_not_installed_pkg.core",
        }
    finally:
        del sys.modules["toy_wrapper"]


def test_llava_message_names_what_is_missing_and_both_ways_out() -> None:
    status = model_availability.wrapper_status("llava")
    message = model_availability.unavailable_model_message(
        status, "pretrained=liuhaotian/llava-v1.6-vicuna-13b,device=cpu"
    )
    assert message.startswith("lmms_eval: --model llava cannot run on this machine")
    assert "needs the module(s) llava" in message
    assert "--model llava_hf --model_args pretrained=llava-hf/llava-v1.6-vicuna-13b-hf" in message
    assert "haotian-liu/LLaVA" in message and "transformers==4.37.2" in message
    default = model_availability.unavailable_model_message(status)
    assert "pretrained=llava-hf/llava-1.5-7b-hf" in default  # the wrapper's default checkpoint, mapped


@pytest.fixture
def host_saves(monkeypatch: pytest.MonkeyPatch) -> list:
    """The tracker's save methods and the record of host outputs, restored after the test."""
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    for name in ("save_results_aggregated", "save_results_samples"):
        monkeypatch.setattr(EvaluationTracker, name, unwrapped(getattr(EvaluationTracker, name)))
    outputs: list = []
    monkeypatch.setattr(fixes, "HOST_OUTPUTS", outputs)
    return outputs


def _tracker(folder: Path) -> object:
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    tracker = EvaluationTracker(output_path=str(folder))
    tracker.general_config_tracker.model_name_sanitized = "model"
    return tracker


def test_host_outputs_are_the_files_the_host_wrote_under_the_names_it_chose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_saves: list
) -> None:
    """A host release that renames its results file: the pack checks the file the host wrote (no false
    failure), and still catches a cut one."""
    import json

    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    def save_results_aggregated(self, results, samples, datetime_str):  # noqa: ANN001, ANN202 - renamed file
        self.date_id = datetime_str.replace(":", "-")
        path = Path(self.output_path) / f"results-{self.date_id}.json"
        path.open("w", encoding="utf-8").write(json.dumps(results))

    monkeypatch.setattr(EvaluationTracker, "save_results_aggregated", save_results_aggregated)
    assert host.apply_patch("host_outputs").state == "applied"
    tracker = _tracker(tmp_path)
    tracker.save_results_aggregated({"results": {}}, {}, "2026-12-01T10:00:00")
    sample = {"arguments": [["q"]], "resps": [["a"]], "filtered_resps": ["a"], "target": "a", "doc": {}}
    tracker.save_results_samples("toy", [dict(sample), dict(sample)])
    renamed = tmp_path / "results-2026-12-01T10-00-00.json"
    samples_file = tmp_path / "model" / "2026-12-01T10-00-00_samples_toy.jsonl"
    assert host_saves == [("results file", renamed, 0, None), ("samples file of toy", samples_file, 0, 2)]
    assert fixes.host_output_problems() == []
    renamed.write_text('{"results": {', encoding="utf-8")  # cut, as a full disk leaves it
    (problem,) = fixes.host_output_problems()
    assert problem.startswith(f"{renamed}: the host's results file is incomplete (13 bytes")


def test_a_host_save_that_writes_nothing_is_a_problem(tmp_path: Path, host_saves: list) -> None:
    """The host swallows its save errors (a folder it cannot create): no file written fails the run."""
    assert host.apply_patch("host_outputs").state == "applied"
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("", encoding="utf-8")
    tracker = _tracker(blocker)
    tracker.save_results_aggregated({"results": {}}, {}, "2026-12-01T10:00:00")
    assert host_saves == [("results file", None, 0, None)]
    assert fixes.host_output_problems() == [
        "the host's results file was not written (the host opened no file for it; its log says why)"
    ]


def test_the_text_only_fix_swaps_nothing_on_the_shared_wrapper(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two calls in flight at once on one chat llava_hf (held together at the processor by a barrier): each
    passes images=None for its text-only request, and the wrapper's own processor stays in place throughout
    (the old fix swapped self._image_processor for the length of each call)."""
    import threading
    import types
    from concurrent.futures import ThreadPoolExecutor

    from lmms_eval.api.instance import Instance
    from lmms_eval.models.chat.llava_hf import LlavaHf

    monkeypatch.setattr(LlavaHf, "generate_until", unwrapped(LlavaHf.generate_until))
    assert host.apply_patch("llava_hf_text_only").state == "applied"
    both_inside = threading.Barrier(2, timeout=30)
    seen: list[tuple[object, object]] = []

    class Stop(Exception):
        pass

    class Processor:
        def apply_chat_template(self, *args, **kwargs) -> str:  # noqa: ANN002, ANN003
            return "user: question?"

        def __call__(self, **kwargs) -> None:  # noqa: ANN003
            both_inside.wait()
            seen.append((kwargs["images"], wrapper.__dict__["_image_processor"]))
            both_inside.wait()
            raise Stop

    processor = Processor()
    wrapper = LlavaHf.__new__(LlavaHf)
    for name, value in {
        "_rank": 1,
        "batch_size_per_gpu": 1,
        "accelerator": types.SimpleNamespace(is_main_process=False),
        "_image_processor": processor,
        "task_dict": {"t": {"test": {0: {}}}},
    }.items():
        setattr(wrapper, name, value)
    messages = [{"role": "user", "content": [{"type": "text", "text": "question?"}]}]
    metadata = {"task": "t", "doc_id": 0, "repeats": 1}
    arguments = ("q", lambda doc: messages, {}, 0, "t", "test")
    request = Instance("generate_until", arguments, idx=0, metadata=metadata)

    def call() -> str:
        with pytest.raises(Stop):
            wrapper.generate_until([request])
        return "stopped at the processor"

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(lambda _: call(), range(2))) == ["stopped at the processor"] * 2
    assert seen == [(None, processor), (None, processor)]


def test_datasets_loaded_from_one_file_share_its_mapping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets
    import datasets.table

    from lmms_eval_tasks.framework.shared_mappings import share_file_mappings

    mapped = datasets.table._memory_mapped_arrow_table_from_file  # maybe shared already by an earlier test
    monkeypatch.setattr(  # the library's own reader; undone after the test
        datasets.table, "_memory_mapped_arrow_table_from_file", getattr(mapped, "__wrapped__", mapped)
    )
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(f'{{"id": {index}, "text": "row {index}"}}\n' for index in range(50)))

    def load() -> datasets.Dataset:
        return datasets.load_dataset("json", data_files=str(source), split="train")

    def address(dataset: datasets.Dataset) -> int:
        return dataset.data.table.column("text").chunk(0).buffers()[2].address  # where its bytes are mapped

    first, second = load(), load()  # `datasets` alone: a mapping (and its RSS) per load
    assert address(first) != address(second)
    share_file_mappings()
    share_file_mappings()  # idempotent
    third, fourth = load(), load()
    assert address(third) == address(fourth) and third[:] == first[:]
    assert fourth.select([3, 1])["text"] == ["row 3", "row 1"]  # shared, and read as before
    source.write_text('{"id": 7, "text": "changed"}\n')  # another file (a new cache entry): its own table
    assert load()["text"] == ["changed"]
