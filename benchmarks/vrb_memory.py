"""Memory over VRB's 71 levels: RSS and anonymous memory per sample, with and without shared file mappings.

A VRB-shaped dataset (``--images`` synthetic 640x480 JPEG photos of about 55 KB with ``--questions``
questions each, VQAv2's columns) is written as parquet; the pack's 71 VRB level tasks read it through a
user task folder (``include:`` of each level's YAML, ``dataset_path: parquet``: what docs/vrb.md tells users
to do). In a fresh process per variant, the host's TaskManager loads every level, builds its requests and
reads every request's document and image as the hooks do (not corrupted: the memo of corrupted images is
bounded); VmRSS and RssAnon are read before and after.
The variants: the launcher's patches (each dataset file mapped once, ``framework/shared_mappings.py``) and
the same without the shared mapping (what `datasets` does by itself: one mapping per level).
Per sample = the growth between ``--images`` and twice as many images over the difference in samples (71
levels x questions; a task's own set-up is not per sample); the full VRB (71 levels x 16,000 questions,
1.136 M samples) is extrapolated from it. Exits 1 above ``TARGET_KIB`` per sample (not with ``--quick``,
two levels in this process).
Last line: ``RESULT rss_kib_per_sample=<x> anon_kib_per_sample=<y> full_vrb_rss_gb=<z>
reference_rss_kib_per_sample=<x0> reference_full_vrb_rss_gb=<z0> samples=<n>``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_KIB = 8.0  # issue #40: RSS per sample over the 71 levels
FULL_VRB_SAMPLES = 71 * 16_000  # 71 levels x the questions on VRB's 3,000 images (1.136 M requests)


def photo(index: int) -> bytes:
    """A distinct 640x480 photo (scikit-image sample, shifted and tinted per index) as JPEG bytes (~55 KB)."""
    import numpy as np
    from PIL import Image
    from skimage import data

    sources = (data.astronaut, data.chelsea, data.coffee, data.rocket)
    image = Image.fromarray(sources[index % len(sources)]()).convert("RGB").resize((640, 480))
    pixels = np.roll(np.asarray(image, dtype=np.int16), index * 7, axis=1)
    pixels = np.clip(pixels + (index * 13) % 31 - 15, 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def write_dataset(folder: Path, images: int, questions: int) -> Path:
    """VQAv2's columns, ``questions`` rows per image, as one parquet file."""
    import datasets

    rows: dict[str, list[Any]] = {name: [] for name in ("question_id", "question", "image", "image_id")}
    for name in ("multiple_choice_answer", "question_type", "answer_type", "answers"):
        rows[name] = []
    for image in range(images):
        data = photo(image)
        for question in range(questions):
            rows["question_id"].append(image * 1000 + question)
            rows["question"].append(f"What is in picture {image}, question {question}?")
            rows["image"].append({"bytes": data, "path": None})
            rows["image_id"].append(100_000 + image)
            rows["multiple_choice_answer"].append("yes")
            rows["question_type"].append("is the")
            rows["answer_type"].append("yes/no")
            rows["answers"].append(
                [{"answer": "yes", "answer_confidence": "yes", "answer_id": k + 1} for k in range(10)]
            )
    features = datasets.Features(
        {
            "question_id": datasets.Value("int64"),
            "question": datasets.Value("string"),
            "image": datasets.Image(),
            "image_id": datasets.Value("int64"),
            "multiple_choice_answer": datasets.Value("string"),
            "question_type": datasets.Value("string"),
            "answer_type": datasets.Value("string"),
            "answers": [
                {
                    "answer": datasets.Value("string"),
                    "answer_confidence": datasets.Value("string"),
                    "answer_id": datasets.Value("int64"),
                }
            ],
        }
    )
    path = folder / "vqav2_validation.parquet"
    datasets.Dataset.from_dict(rows, features=features).to_parquet(str(path))
    return path


def write_tasks(folder: Path, parquet: Path, levels: list[str]) -> None:
    """A user task folder: each level task of the pack, reading ``parquet``."""
    from lmms_eval_tasks import TASKS_DIR

    folder.mkdir(parents=True, exist_ok=True)
    for level in levels:
        pack_yaml = Path(TASKS_DIR) / "vrb" / "yaml" / "levels" / f"{level}.yaml"
        (folder / f"{level}.yaml").write_text(
            f"include: {json.dumps(str(pack_yaml))}\ntask: {level}\ndataset_path: parquet\n"
            f"dataset_kwargs:\n  data_files:\n    validation: {json.dumps(str(parquet))}\n",
            encoding="utf-8",
        )


def memory_kib() -> tuple[int, int]:
    """(VmRSS, RssAnon) of this process in KiB."""
    fields = dict(
        line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line
    )
    return int(fields["VmRSS"].split()[0]), int(fields["RssAnon"].split()[0])


def measure(task_folder: str, levels: list[str], shared: bool) -> dict[str, Any]:
    """In this (fresh) process: load every level, build its requests, read every document's image."""
    import gc

    from lmms_eval.tasks import TaskManager, get_task_dict

    from lmms_eval_tasks.framework.dataset_contract import image_of
    from lmms_eval_tasks.host import patches

    for name in ("pack_task_index", "libyaml_task_index", "task_index_cache", "task_dataset_context"):
        patches.apply_patch(name)
    if not shared:  # the reference: `datasets` maps each file once per dataset loaded from it
        import datasets.table

        mapped = datasets.table._memory_mapped_arrow_table_from_file
        datasets.table._memory_mapped_arrow_table_from_file = getattr(mapped, "__wrapped__", mapped)
    manager = TaskManager(include_path=task_folder)
    gc.collect()
    before = memory_kib()
    tasks = get_task_dict(levels, manager, task_type="chat")
    samples = 0
    for task in tasks.values():
        task.build_all_requests(limit=None, rank=0, world_size=1)
        docs = task.test_docs()
        for instance in task.instances:
            doc = docs[instance.doc_id]  # a model's read of the row and its image (decoded as the hooks do)
            image_of("vrb", doc, "image", doc["question_id"])
            samples += 1
    gc.collect()
    after = memory_kib()
    return {"samples": samples, "rss_kib": after[0] - before[0], "anon_kib": after[1] - before[1]}


def measured(folder: Path, levels: list[str], images: int, questions: int, shared: bool) -> dict[str, Any]:
    """``measure`` in a fresh process on a dataset of ``images`` x ``questions`` rows written here."""
    import datasets

    data = folder / f"{images}x{questions}"
    if not data.exists():
        data.mkdir()
        parquet = write_dataset(data, images, questions)
        write_tasks(data / "tasks", parquet, levels)
        datasets.load_dataset("parquet", data_files={"validation": str(parquet)}, split="validation")
    command = [sys.executable, __file__, "--measure", str(data / "tasks"), ",".join(levels), str(int(shared))]
    environment = {**os.environ, "LMMS_EVAL_TASKS_VRB_IMAGES": str(images)}
    finished = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        sys.exit(f"vrb_memory: the measuring process failed:\n{finished.stderr[-3000:]}")
    return json.loads(finished.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=40, help="distinct 640x480 images (and twice as many)")
    parser.add_argument("--questions", type=int, default=5, help="questions per image (VQAv2: about 5)")
    parser.add_argument("--quick", action="store_true", help="small run in this process: checks the script")
    parser.add_argument("--measure", nargs=3, metavar=("TASKS", "LEVELS", "SHARED"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.measure:
        folder, levels, shared = arguments.measure
        print(json.dumps(measure(folder, levels.split(","), shared == "1")))
        return
    from lmms_eval_tasks.tasks.vrb.generate import TASKS

    with tempfile.TemporaryDirectory(prefix="vrb_memory_") as scratch:
        os.environ["HF_DATASETS_CACHE"] = str(Path(scratch, "hf_datasets"))
        os.environ["LMMS_EVAL_TASKS_JUDGE"] = "rule"
        if arguments.quick:  # two levels, six rows, this process: the numbers say nothing
            os.environ["LMMS_EVAL_TASKS_VRB_IMAGES"] = "3"
            parquet = write_dataset(Path(scratch), 3, 2)
            write_tasks(Path(scratch, "tasks"), parquet, TASKS[:2])
            result = measure(str(Path(scratch, "tasks")), TASKS[:2], shared=True)
            print(f"RESULT rss_kib_per_sample={result['rss_kib'] / result['samples']:.2f} samples=12")
            return
        # the growth between a dataset and one twice its size: per-sample memory, not per-task set-up
        small, large = arguments.images, 2 * arguments.images
        runs = {
            (size, shared): measured(Path(scratch), TASKS, size, arguments.questions, shared)
            for shared in (True, False)
            for size in (small, large)
        }

    def per_sample(shared: bool, key: str) -> float:
        grown = runs[(large, shared)][key] - runs[(small, shared)][key]
        return grown / (runs[(large, shared)]["samples"] - runs[(small, shared)]["samples"])

    rss, anon = per_sample(True, "rss_kib"), per_sample(True, "anon_kib")
    reference_rss, reference_anon = per_sample(False, "rss_kib"), per_sample(False, "anon_kib")
    full_gb, reference_full_gb = (value * FULL_VRB_SAMPLES / 1024**2 for value in (rss, reference_rss))
    print(
        f"71 VRB levels x {small} and {large} images x {arguments.questions} questions of 640x480 JPEG "
        f"({runs[(small, True)]['samples']} and {runs[(large, True)]['samples']} samples); per sample: "
        f"RSS {rss:.2f} KiB (anonymous {anon:.2f}) with one mapping per file, RSS {reference_rss:.2f} KiB "
        f"(anonymous {reference_anon:.2f}) with one per level; full VRB ({FULL_VRB_SAMPLES} samples): "
        f"{full_gb:.1f} GB of RSS vs {reference_full_gb:.1f} GB"
    )
    print(
        f"RESULT rss_kib_per_sample={rss:.2f} anon_kib_per_sample={anon:.2f} full_vrb_rss_gb={full_gb:.1f} "
        f"reference_rss_kib_per_sample={reference_rss:.2f} reference_full_vrb_rss_gb={reference_full_gb:.1f} "
        f"samples={runs[(large, True)]['samples']}"
    )
    if rss > TARGET_KIB:
        sys.exit(f"vrb_memory: {rss:.2f} KiB of RSS per sample is above {TARGET_KIB:g}")


if __name__ == "__main__":
    main()
