"""`lmms-eval-tasks robustness`: corrupted variants of a host task and a pack task.

The host task is the host's own `vqav2_val` (its YAML, hooks and scoring) with the hub download replaced
by the pack's bundled VQAv2-format sample (the one thing that cannot exist offline). Checks: the variants'
images are exactly `corrupt()` of the source task's images, the launcher runs the group (`--limit 2`), and
`lmms-eval-tasks vre` reads the run folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lmms_eval_tasks.corruptions import corrupt, image_seed
from lmms_eval_tasks.tasks.vrb.robustness import find_task_yamls, plan_variants, write_robustness_tasks
from tests.helpers import REPO_ROOT, results_json, run_launcher

HOST_TASK = "vqav2_val_local"
PACK_TASK = "dare_sample_single_gen_p1"
CORRUPTIONS = ["gaussian_noise", "brightness"]
SAMPLE = REPO_ROOT / "lmms_eval_tasks" / "tasks" / "vrb" / "sample" / "vrb_sample.parquet"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import lmms_eval

    root = tmp_path_factory.mktemp("robustness")
    source = root / "source"
    source.mkdir()
    host_yaml = Path(lmms_eval.__file__).parent / "tasks" / "vqav2" / "vqav2_val.yaml"
    (source / f"{HOST_TASK}.yaml").write_text(
        f"include: {host_yaml}\ntask: {HOST_TASK}\ndataset_path: parquet\n"
        f"dataset_kwargs:\n  data_files:\n    validation: {SAMPLE}\n",
        encoding="utf-8",
    )
    out = root / "corrupted"
    group, variants, files = write_robustness_tasks(
        out, [HOST_TASK, PACK_TASK], corruptions=CORRUPTIONS, include_path=[str(source)], seed=7
    )
    return {"source": source, "out": out, "group": group, "variants": variants, "files": files, "root": root}


def test_files_and_names(generated: dict) -> None:
    names = [variant.task for variant in generated["variants"]]
    assert len(names) == 2 * (1 + len(CORRUPTIONS) * 5)
    assert f"{HOST_TASK}_vrb_clean" in names and f"{PACK_TASK}_vrb_gaussian_noise_s3" in names
    assert generated["group"] == "vrb_robustness"
    text = (generated["out"] / f"{PACK_TASK}_vrb_brightness_s4.yaml").read_text()
    assert "include:" in text and "severity: 4" in text and 'source_task: "dare_sample_single_gen_p1"' in text


def test_variant_images_are_corrupt_of_the_source_images(generated: dict) -> None:
    from lmms_eval.tasks import TaskManager, get_task_dict

    from lmms_eval_tasks.host.integration import with_pack_dir

    manager = TaskManager(
        verbosity="WARNING", include_path=with_pack_dir([str(generated["source"]), str(generated["out"])])
    )
    names = [variant.task for variant in generated["variants"]] + [HOST_TASK, PACK_TASK]
    tasks = get_task_dict(names, manager)
    checked = 0
    for variant in generated["variants"]:
        source, task = tasks[variant.source], tasks[variant.task]
        for index in range(2):
            clean = source.config.doc_to_visual(source.eval_docs[index])
            seen = task.config.doc_to_visual(task.eval_docs[index])
            assert len(clean) == len(seen) == 1
            clean_pixels = np.asarray(clean[0].convert("RGB"))
            if variant.severity == 0:
                assert np.array_equal(np.asarray(seen[0]), clean_pixels)
                continue
            expected = corrupt(
                clean_pixels,
                variant.corruption,
                variant.severity,
                seed=image_seed(7, clean_pixels),
                profile="vrb",
            )
            assert np.array_equal(np.asarray(seen[0]), expected), variant.task
            assert not np.array_equal(expected, clean_pixels), variant.task
            checked += 1
    assert checked == 2 * 2 * len(CORRUPTIONS) * 5


@pytest.mark.slow
def test_launcher_runs_the_group_and_vre_reads_the_run(generated: dict, tmp_path: Path, capsys) -> None:
    output = tmp_path / "run"
    completed = run_launcher(
        "--include_path", str(generated["source"]), "--include_path", str(generated["out"]),
        "--tasks", generated["group"], "--model", "random_guess", "--model_args", "seed=0",
        "--limit", "2", "--output_path", str(output),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = results_json(output)
    for variant in generated["variants"]:
        assert results["n-samples"][variant.task]["effective"] == 2, variant.task
        metric = "exact_match,none" if variant.source == HOST_TASK else "single_accuracy,none"
        assert isinstance(results["results"][variant.task][metric], int | float)
        assert results["configs"][variant.task]["metadata"]["vrb_level"]["severity"] == variant.severity
    # Each variant of the pack task keeps its own pack report (none overwrites another): reported under the
    # variant's name, scored with the source task's settings.
    from lmms_eval_tasks.reporting import schema as reports

    pack_variants = [variant for variant in generated["variants"] if variant.source == PACK_TASK]
    for variant in pack_variants:
        report = reports.read_report(next(output.rglob(f"lmms_eval_tasks/*/{variant.task}_report.json")))
        assert report["task"] == variant.task and report["details"]["variant_of"] == PACK_TASK
        assert report["metrics"]["single_accuracy"] == pytest.approx(
            results["results"][variant.task]["single_accuracy,none"], nan_ok=True
        )
    assert not list(output.rglob(f"lmms_eval_tasks/*/{PACK_TASK}_report.json"))

    from lmms_eval_tasks.cli import main

    plots = tmp_path / "plots"
    arguments = [
        "vre",
        str(output),
        "--metric",
        "single_accuracy,exact_match",
        "--scale",
        f"100,{HOST_TASK}=1",
    ]
    assert main([*arguments, "--plots", str(plots)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["models"]) == {f"random_guess:seed=0/{HOST_TASK}", f"random_guess:seed=0/{PACK_TASK}"}
    assert set(printed["corruptions"]) == set(CORRUPTIONS)
    for model, entry in printed["models"].items():
        clean = results["results"][f"{model.split('/')[1]}_vrb_clean"]
        value = clean.get("exact_match,none", clean.get("single_accuracy,none", 0) / 100)
        assert entry["accuracy_clean"] == pytest.approx(value)
    assert (plots / "radar_models.png").is_file()


def test_bad_requests_are_refused() -> None:
    index = {
        "t": {"type": "task", "yaml_path": "/x/t.yaml"},
        "g": {"type": "group", "yaml_path": "/x/g.yaml"},
    }
    with pytest.raises(KeyError, match="unknown task"):
        find_task_yamls(["nope"], index)
    with pytest.raises(ValueError, match="not a task"):
        find_task_yamls(["g"], index)
    sources = find_task_yamls(["t"], index)
    with pytest.raises(ValueError, match="unknown corruption"):
        plan_variants(sources, ["fog"], [1], profile="vrb")  # fog is ImageNet-C only
    with pytest.raises(ValueError, match="severity"):
        plan_variants(sources, ["snow"], [6])
    assert len(plan_variants(sources, ["fog"], [1, 2], profile="imagenet_c")) == 3
