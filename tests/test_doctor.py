"""`lmms-eval-tasks doctor`: a good setup passes; each broken one gives its line, fix and exit code."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_eval_tasks import doctor
from lmms_eval_tasks.cli import main as cli_main
from lmms_eval_tasks.doctor import JUDGE_CHECK, benchmark_sources, check_datasets, check_judge, check_models
from lmms_eval_tasks.host import version as host_versions
from tests.fake_openai import FakeOpenAIServer
from tests.helpers import COMMIT, REPO_ROOT, build_hub_cache, offline_environment

SECRET = "sk-doctor-test-9f8e7d6c5b4a"
JUDGE_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_API_URL",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "LMMS_EVAL_TASKS_JUDGE_BASE_URL",
    "LMMS_EVAL_TASKS_JUDGE_API_KEY",
    "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_ENDPOINT",
    "API_TYPE",
)


@pytest.fixture
def no_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in JUDGE_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _doctor_json(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, dict]:
    code = cli_main(["doctor", "--json", *arguments])
    return code, json.loads(capsys.readouterr().out)


def _by_name(payload: dict) -> dict[str, dict]:
    return {check["name"]: check for check in payload["checks"]}


def _closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_good_setup_passes(capsys: pytest.CaptureFixture[str], tiny_llava_dir: Path, no_judge: None) -> None:
    code = cli_main(["doctor", "--tiny-llava", str(tiny_llava_dir)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert text.splitlines()[-1] == "all required checks pass"
    for line in (
        "✓ lmms-eval version",
        "✓ patch pack_task_index",
        "✓ patch llava_hf_text_only",
        "✓ torch",
        "✓ transformers",
        "✓ wordnet (tdiuc)",
        "✓ tiny llava",
        "✓ pack models",
        "✓ llava_hf",
        "✓ llava ",  # `--model llava` runs here: the launcher serves it with the pack's LLaVA
    ):
        assert any(row.lstrip().startswith(line) for row in text.splitlines()), (line, text)
    [llava] = [row for row in text.splitlines() if row.lstrip().startswith("✓ llava ")]
    assert "llava_transformers" in llava and "llava-hf/llava-1.5-7b-hf" in llava, llava
    # informational failures (no judge, datasets not cached here) do not change the exit code
    assert "benchmarks (informational):" in text and "not configured" in text
    assert "development (informational):" in text
    code, payload = _doctor_json(capsys, "--tiny-llava", str(tiny_llava_dir))
    assert code == 0 and payload["ok"] is True
    checks = _by_name(payload)
    assert all(check["ok"] for check in payload["checks"] if check["required"])
    assert checks[JUDGE_CHECK]["required"] is False and checks[JUDGE_CHECK]["ok"] is False
    supported = host_versions.SUPPORTED_HOST_VERSIONS
    assert checks["lmms-eval version"]["summary"] == f"lmms-eval 0.7.3 (supported: {supported})"


def test_unsupported_host_version(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny_llava_dir: Path, no_judge: None
) -> None:
    """Outside the supported range the version check fails; the patches are still judged by their probes."""
    monkeypatch.setattr(host_versions, "host_version", lambda: "0.8.1")
    code = cli_main(["doctor", "--tiny-llava", str(tiny_llava_dir)])
    text = capsys.readouterr().out
    assert code == 1
    supported = host_versions.SUPPORTED_HOST_VERSIONS
    lines = [" ".join(line.split()) for line in text.splitlines()]  # the label column's width varies
    assert f"✗ lmms-eval version lmms-eval 0.8.1 (supported: {supported})" in lines
    assert f"fix: pip install 'lmms-eval{supported}'" in text
    assert any(
        line.startswith("✓ patch loglikelihood_result applies: the host stringifies (log_prob, is_greedy)")
        for line in lines
    )
    assert text.splitlines()[-1].startswith("1 required check(s) failed: lmms-eval version")


def test_an_untested_host_version_lists_the_patches_that_do_not_apply(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny_llava_dir: Path, no_judge: None
) -> None:
    """A release in the supported range the patches were not tested on, where one probe fails (the host
    changed what the patch wraps): that patch fails, with what a run loses and the tested release."""
    import lmms_eval.utils as host_utils

    def make_table(result_dict, column="results"):  # noqa: ANN001, ANN202 - a changed host function
        return ""

    monkeypatch.setattr(host_utils, "make_table", make_table)
    monkeypatch.setattr(host_versions, "SUPPORTED_HOST_VERSIONS", ">=0.7.2,<0.9")
    monkeypatch.setattr(host_versions, "host_version", lambda: "0.8.4")
    code, payload = _doctor_json(capsys, "--tiny-llava", str(tiny_llava_dir))
    checks = _by_name(payload)
    assert code == 1 and checks["lmms-eval version"]["ok"] is True
    failed = [name for name, check in checks.items() if check["required"] and not check["ok"]]
    assert failed == ["patch table_na"]
    assert checks["patch table_na"]["summary"] == (
        "skipped: lmms_eval.utils.make_table takes (result_dict, column), expected (result_dict, column, "
        "sort_results)"
    )
    fix = checks["patch table_na"]["fix"]
    assert "print NaN in the host's table" in fix  # what a run loses without it
    tested = host_versions.TESTED_HOST_VERSIONS[-1]
    way_back = f"the patches were {host_versions.TESTED_HOST_TEXT}: pip install 'lmms-eval=={tested}'"
    assert fix.endswith(way_back)


def test_missing_tiny_llava_fails_only_the_development_checks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, no_judge: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tiny LLaVA is the test suite's fixture: a user install without it passes; `--dev` requires it."""
    code, payload = _doctor_json(capsys, "--tiny-llava", str(tmp_path / "nowhere"))
    check = _by_name(payload)["tiny llava"]
    assert code == 0 and check["ok"] is False and check["required"] is False
    assert check["section"] == "development"
    code, payload = _doctor_json(capsys, "--dev", "--tiny-llava", str(tmp_path / "nowhere"))
    check = _by_name(payload)["tiny llava"]
    assert code == 1 and check["ok"] is False and check["required"] is True
    assert "make tiny-llava" in check["fix"]
    # a pip install has no Makefile: the fix is the pack's own command alone
    monkeypatch.setattr(doctor, "CHECKOUT", tmp_path)
    code, payload = _doctor_json(capsys, "--dev", "--tiny-llava", str(tmp_path / "nowhere"))
    fix = _by_name(payload)["tiny llava"]["fix"]
    assert fix == f"`lmms-eval-tasks build-tiny-llava --output {tmp_path / 'nowhere'}`"


def test_a_pip_install_is_never_told_a_make_target_or_a_clone_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pip install has no Makefile and no source folder: no fix names `make` or `pip install -e .`."""
    from lmms_eval_tasks.host import model_availability

    monkeypatch.setattr(doctor, "CHECKOUT", tmp_path)
    no_torchvision = model_availability.WrapperStatus(
        "internvl2", False, "x.Y", "ModuleNotFoundError: No module named 'torchvision'", ("torchvision",)
    )  # internvl2 and idefics2 in the make setup venv, as doctor's model list shows them
    fixes = {"internvl2": model_availability.install_hint(no_torchvision)}
    broken = model_availability.WrapperStatus("random_guess", False, "x.Y", "ImportError: no x", ())
    monkeypatch.setattr(model_availability, "wrapper_status", lambda model: broken)
    fixes["pack models"] = doctor.check_pack_models().fix
    for name, fix in fixes.items():
        assert "make " not in fix and "pip install -e" not in fix, (name, fix)


def test_unreachable_judge_is_reported_without_the_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny_llava_dir: Path, no_judge: None
) -> None:
    port = _closed_port()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    code = cli_main(["doctor", "--tiny-llava", str(tiny_llava_dir)])
    text = capsys.readouterr().out
    assert code == 0  # informational: the rule judge still works
    (line,) = [row for row in text.splitlines() if JUDGE_CHECK in row]
    assert line.lstrip().startswith(f"✗ {JUDGE_CHECK}")
    assert f"openai endpoint http://127.0.0.1:{port}/v1 (from OPENAI_BASE_URL + OPENAI_API_KEY)" in line
    assert "is not reachable" in line and "refused" in line.lower()
    assert SECRET not in text
    code, payload = _doctor_json(capsys, "--tiny-llava", str(tiny_llava_dir))
    assert code == 0 and SECRET not in json.dumps(payload)


def test_reachable_judge(monkeypatch: pytest.MonkeyPatch, no_judge: None) -> None:
    with FakeOpenAIServer() as server:
        base_url = server.base_url
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        check = check_judge()
    assert check.ok, check
    assert check.summary.startswith(f"openai endpoint {base_url} ") and "answers (HTTP" in check.summary
    assert SECRET not in repr(check)


def _doctor_subprocess(environment: dict[str, str], *arguments: str) -> tuple[int, dict]:
    """`doctor --json ARGS` as a user starts it: a fresh process in ``environment`` (its stdout must be the
    JSON alone, whatever the imports print; its exit status is the code)."""
    completed = subprocess.run(
        [sys.executable, "-m", "lmms_eval_tasks.cli", "doctor", "--json", *arguments],
        capture_output=True, text=True, env=environment, cwd=REPO_ROOT, timeout=600, check=False,
    )  # fmt: skip
    return completed.returncode, json.loads(completed.stdout)


def _doctor_in(
    environment: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *arguments: str,
) -> tuple[int, dict]:
    """`doctor --json ARGS` run in this process as in a fresh one started in ``environment``: that
    environment, nltk's search path as nltk's own module code computes it from there (``nltk.data.path``:
    $NLTK_DATA, ~/nltk_data, the system folders) and WordNet not loaded yet (a fresh ``nltk.corpus.wordnet``
    loader). The rest of doctor (the host's import, the patches' probes) is what it is in any process."""
    import importlib.util

    import nltk
    import nltk.corpus
    from nltk.corpus.reader import CorpusReader, WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    for name in set(os.environ) - set(environment):
        monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    spec = importlib.util.spec_from_file_location("nltk_data_of_a_fresh_process", nltk.data.__file__)
    assert spec is not None and spec.loader is not None
    fresh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fresh)  # nltk/data.py's top level: the search path from this environment
    assert fresh.path[0] == environment["NLTK_DATA"]
    monkeypatch.setattr(nltk.data, "path", fresh.path)
    omw = LazyCorpusLoader("omw-2.0", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8")
    monkeypatch.setattr(nltk.corpus, "wordnet", LazyCorpusLoader("wordnet", WordNetCorpusReader, omw))
    return _doctor_json(capsys, *arguments)


def test_no_wordnet_is_a_tdiuc_need_not_a_failed_install(tmp_path: Path, tiny_llava_dir: Path) -> None:
    """NLTK_DATA at an empty folder (HOME too, so ~/nltk_data cannot help), no WordNet files to copy:
    the user install still passes; the TDIUC line says what is missing and the one command that fixes it."""
    empty = tmp_path / "nltk_data"
    empty.mkdir()
    environment = offline_environment(
        NLTK_DATA=str(empty), HOME=str(tmp_path), LMMS_EVAL_TASKS_WORDNET_SOURCE=str(tmp_path / "none")
    )
    code, payload = _doctor_subprocess(environment, "--tiny-llava", str(tiny_llava_dir))  # a user's doctor
    assert code == 0, payload
    assert [check["name"] for check in payload["checks"] if check["required"] and not check["ok"]] == []
    wordnet = _by_name(payload)["wordnet (tdiuc)"]
    assert wordnet["ok"] is False and wordnet["required"] is False and wordnet["section"] == "benchmarks"
    assert wordnet["summary"].startswith("nltk cannot load WordNet (LookupError: Resource")
    assert "*" not in wordnet["summary"]  # not nltk's banner of asterisks
    assert wordnet["fix"].startswith("run `lmms-eval-tasks setup-wordnet`")


def test_wordnet_with_debian_files_is_ready_for_the_first_tdiuc_run(
    tmp_path: Path, tiny_llava_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not Path("/usr/share/wordnet/data.noun").is_file():
        pytest.fail("Debian's wordnet-base is not installed: `make setup` installs it")
    empty = tmp_path / "nltk_data"
    empty.mkdir()
    environment = offline_environment(NLTK_DATA=str(empty), HOME=str(tmp_path))
    code, payload = _doctor_in(environment, monkeypatch, capsys, "--tiny-llava", str(tiny_llava_dir))
    wordnet = _by_name(payload)["wordnet (tdiuc)"]
    assert code == 0 and wordnet["ok"] is True
    assert wordnet["summary"] == f"not in {empty} yet; the first TDIUC run copies it from /usr/share/wordnet"


def test_model_list_on_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """llava_hf and the pack's baseline import here; the original-LLaVA wrapper does not, so `--model llava`
    runs as the pack's LLaVA on transformers (what the launcher does), unless the substitution is refused."""
    monkeypatch.delenv("LMMS_EVAL_TASKS_NO_SUBSTITUTION", raising=False)
    checks = {check.name: check for check in check_models()}
    assert checks["llava_hf"].ok and checks["random_guess"].ok
    assert checks["llava"].ok and "No module named 'llava'" in checks["llava"].summary
    assert "llava_transformers" in checks["llava"].summary
    monkeypatch.setenv("LMMS_EVAL_TASKS_NO_SUBSTITUTION", "1")
    checks = {check.name: check for check in check_models()}
    assert not checks["llava"].ok
    assert "No module named 'llava'" in checks["llava"].summary
    assert "--model llava_hf --model_args pretrained=llava-hf/llava-1.5-7b-hf" in checks["llava"].fix
    assert all(not check.required for check in checks.values())
    every = {check.name for check in check_models(all_models=True)}
    assert set(checks) <= every and len(every) > 100


def test_benchmark_datasets_come_from_the_task_yaml() -> None:
    datasets = {
        benchmark: [(path, name, tasks) for (path, name, _files), tasks in found]
        for benchmark, found in benchmark_sources().items()
    }
    (hallusionbench,) = datasets["hallusionbench"]
    assert hallusionbench[:2] == ("lmms-lab-encoder/HallusionBench", None) and len(hallusionbench[2]) == 3
    (vrb,) = datasets["vrb"]
    assert vrb[:2] == ("lmms-lab-encoder/VQAv2", None)
    assert [(path, name) for path, name, _ in datasets["dare"]] == [
        ("cambridgeltl/DARE", "1_correct"),
        ("cambridgeltl/DARE", "1_correct_var"),
        ("cambridgeltl/DARE", "n_correct"),
    ]
    assert not any(name.endswith("_sample") for _, _, tasks in datasets["dare"] for name in tasks)


SAMPLE_PARQUET = REPO_ROOT / "lmms_eval_tasks" / "tasks" / "vrb" / "sample" / "vrb_sample.parquet"


def test_dataset_lines_say_what_an_offline_run_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache, hub = tmp_path / "datasets", tmp_path / "hub"
    monkeypatch.delenv("LMMS_EVAL_DATASETS_CACHE", raising=False)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    checks = {check.name: check for check in check_datasets()}
    assert not checks["hallusionbench"].ok and not checks["hallusionbench"].required
    assert checks["hallusionbench"].summary == (
        f"not in the datasets cache at {cache}: lmms-lab-encoder/HallusionBench"
    )
    # layout 1, what `datasets` writes: snake case (cambridgeltl___dare), config/version/commit folders
    build_hub_cache(cache, "cambridgeltl/DARE", {"test": SAMPLE_PARQUET}, config="n_correct")
    # the name doctor used to look for, which `datasets` never reads: <org>___<Name> as spelled on the hub
    (cache / "lmms-lab-encoder___HallusionBench" / "default" / "0.0.0" / COMMIT).mkdir(parents=True)
    # layout 2, a bare huggingface_hub snapshot: an offline load_dataset of the hub id does not read it
    snapshot = hub / "datasets--lmms-lab-encoder--VQAv2" / "snapshots" / COMMIT
    (snapshot / "data").mkdir(parents=True)
    (snapshot / "data" / "validation-00000-of-00001.parquet").write_bytes(SAMPLE_PARQUET.read_bytes())
    checks = {check.name: check for check in check_datasets()}
    dare = checks["dare"]
    assert not dare.ok  # 1_correct and 1_correct_var are not there
    entry = cache / "cambridgeltl___dare" / "n_correct" / "0.0.0" / COMMIT
    assert f"cached: cambridgeltl/DARE [n_correct] (datasets cache {entry})" in dare.summary
    assert "cambridgeltl/DARE [1_correct], cambridgeltl/DARE [1_correct_var]" in dare.summary
    assert not checks["hallusionbench"].ok
    vrb = checks["vrb"]
    assert not vrb.ok and "lmms-lab-encoder/VQAv2" in vrb.summary
    assert (
        f"lmms-lab-encoder/VQAv2 has a hub snapshot at {snapshot}, which `datasets` offline does not load"
        in (vrb.fix)
    )
    # the same cache the host's own download leaves (no data_files) does not serve VRB's validation-only load;
    # the one built with VRB's data_files does, and doctor then says so
    from lmms_eval_tasks.tasks.vrb.generate import VQAV2_DATASET, VQAV2_VALIDATION_FILES

    build_hub_cache(cache, VQAV2_DATASET, {"validation": SAMPLE_PARQUET}, VQAV2_VALIDATION_FILES)
    build_hub_cache(cache, "lmms-lab-encoder/HallusionBench", {"image": SAMPLE_PARQUET})
    checks = {check.name: check for check in check_datasets()}
    assert checks["vrb"].ok and checks["hallusionbench"].ok, (checks["vrb"], checks["hallusionbench"])
    # what the line promises is what `datasets` does: the offline load finds that folder
    import datasets

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    loaded = datasets.load_dataset(
        VQAV2_DATASET, data_files=VQAV2_VALIDATION_FILES, split="validation", cache_dir=str(cache)
    )
    assert len(loaded) == len(
        datasets.Dataset.from_parquet(str(SAMPLE_PARQUET), cache_dir=str(tmp_path / "x"))
    )


def test_a_cut_short_wordnet_copy_is_reported_damaged_not_ready(tmp_path: Path) -> None:
    # nltk loads a copy whose data.noun was cut off and still finds one synset of 'dog' (the verb): not ready
    from lmms_eval_tasks.wordnet import prepare_nltk_wordnet

    target = tmp_path / "nltk_data"
    folder = prepare_nltk_wordnet(target, source="/usr/share/wordnet")
    with open(folder / "data.noun", "r+b") as handle:
        handle.truncate(100_000)
    environment = offline_environment(NLTK_DATA=str(target), HOME=str(tmp_path))
    script = (
        "import json\nfrom lmms_eval_tasks.doctor import check_wordnet\n"
        "print(json.dumps(check_wordnet().as_dict()))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=environment,
        cwd=REPO_ROOT,
        check=True,
    )
    check = json.loads(completed.stdout)
    assert check["ok"] is False and check["required"] is False
    assert check["summary"] == (
        f"the WordNet copy in {folder} is damaged (data.noun is cut short (no whole synset at offset "
        "15300051, which index.noun names))"
    )
    assert check["fix"] == "run `lmms-eval-tasks setup-wordnet`"


def test_no_judge_says_what_a_run_does(monkeypatch: pytest.MonkeyPatch, no_judge: None) -> None:
    """doctor said judged tasks "fall back to the rule judge" while the launcher and `score` refuse them;
    now it says they stop, names the rule-judge switch, and with that switch set says the rule judge runs."""
    from lmms_eval_tasks.doctor import check_judge

    monkeypatch.delenv("LMMS_EVAL_TASKS_JUDGE", raising=False)
    check = check_judge()
    assert not check.ok and "fall back" not in check.summary
    assert "stop before the model loads" in check.summary and "hallusionbench" in check.summary
    assert "LMMS_EVAL_TASKS_JUDGE=rule" in check.fix and "_offline" in check.fix
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE", "rule")
    check = check_judge()
    assert check.ok and "offline rule judge" in check.summary
    assert "LMMS_EVAL_TASKS_JUDGE=rule" in check.summary


def test_a_torchvision_that_cannot_import_fails_doctor_naming_the_fix_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyPI's torchvision next to a CPU torch fails on import ('torchvision::nms does not exist'): a required
    check fails and the last line names the fix (the host's import fails on it too, so the others do)."""
    monkeypatch.setitem(sys.modules, "torchvision", None)  # recorded: the fake imported below never outlives
    monkeypatch.delitem(sys.modules, "torchvision")  # the test (later tests would find it, not the real one)
    fake = tmp_path / "torchvision"
    fake.mkdir()
    (fake / "__init__.py").write_text('raise RuntimeError("operator torchvision::nms does not exist")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    check = doctor.check_vision_packages()
    assert (check.ok, check.required) == (False, True)
    assert "torchvision is installed but does not import (RuntimeError: operator torch" in check.summary
    text = doctor.render([check], ascii_only=True)
    assert text.splitlines()[-1] == (
        f"1 required check(s) failed: {doctor.VISION_CHECK}; fix first: pip uninstall -y torchvision timm "
        "(transformers works without them), or install the torchvision made for your torch from the index "
        "torch came from (README, 'Using the pack')"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "nothing"))
    (fake / "__init__.py").write_text("")  # a torchvision that imports: fine
    monkeypatch.delitem(sys.modules, "torchvision", raising=False)
    assert doctor.check_vision_packages().ok


def test_doctor_checks_the_datasets_of_the_task_configs_a_run_with_include_path_uses(tmp_path):
    from lmms_eval_tasks import TASKS_DIR
    from lmms_eval_tasks.doctor import benchmark_sources

    pack_yaml = Path(TASKS_DIR) / "vrb" / "yaml" / "levels" / "vrb_clean.yaml"
    (tmp_path / "vrb_clean.yaml").write_text(
        f'include: "{pack_yaml}"\ntask: vrb_clean\ndataset_path: parquet\n'
        'dataset_kwargs:\n  data_files:\n    validation: "/data/vqav2.parquet"\n',
        encoding="utf-8",
    )

    def hub_tasks(include_paths):
        return {task for _, tasks in benchmark_sources(include_paths)["vrb"] for task in tasks}

    assert "vrb_clean" in hub_tasks([])  # the pack's: VQAv2 from the hub
    assert "vrb_clean" not in hub_tasks([str(tmp_path)])  # the local copy: no hub dataset to check
    assert "vrb_zoom_blur_s5" in hub_tasks([str(tmp_path)])
