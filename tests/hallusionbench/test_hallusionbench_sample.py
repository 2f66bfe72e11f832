"""The bundled HallusionBench sample: regeneration reproduces the committed rows; official schema."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from lmms_eval_tasks.tasks.hallusionbench import make_sample, scoring


@pytest.fixture(scope="module")
def committed():
    from datasets import load_dataset

    image_split = load_dataset(
        "parquet", data_files=str(make_sample.SAMPLE_DIR / make_sample.IMAGE_FILE), split="train"
    )
    non_image_split = load_dataset(
        "parquet", data_files=str(make_sample.SAMPLE_DIR / make_sample.NON_IMAGE_FILE), split="train"
    )
    return image_split, non_image_split


def test_regeneration_reproduces_the_committed_rows(committed, tmp_path):
    make_sample.write_sample(tmp_path)
    from datasets import load_dataset

    for name, stored in zip((make_sample.IMAGE_FILE, make_sample.NON_IMAGE_FILE), committed, strict=True):
        fresh = load_dataset("parquet", data_files=str(tmp_path / name), split="train")
        assert fresh.column_names == stored.column_names
        assert len(fresh) == len(stored)
        for new_row, old_row in zip(fresh, stored, strict=True):
            for field in make_sample.STRING_FIELDS:
                assert new_row[field] == old_row[field], (name, field)
            if "image" in old_row:
                assert np.array_equal(np.asarray(new_row["image"]), np.asarray(old_row["image"]))


def test_official_schema_and_hf_split_layout(committed):
    from datasets import Image

    image_split, non_image_split = committed
    assert image_split.column_names == [*scoring.OFFICIAL_FIELDS, "image"]
    assert isinstance(image_split.features["image"], Image)
    assert non_image_split.column_names == list(scoring.OFFICIAL_FIELDS)
    assert set(image_split["visual_input"]) == {"1", "2"} and set(non_image_split["visual_input"]) == {"0"}
    assert all(filename is None for filename in non_image_split["filename"])
    for row in image_split:
        width, height = row["image"].size
        assert 96 <= width <= 160 and 96 <= height <= 160
        assert (
            row["filename"]
            == f"./{row['category']}/{row['subcategory']}/{row['set_id']}_{row['figure_id']}.png"
        )


def test_control_pairs_are_well_formed(committed):
    image_split, non_image_split = committed
    rows = [*image_split, *non_image_split]
    assert 20 <= len(rows) <= 30
    questions = scoring.parse_questions(rows)  # validates ids, categories, the VS no-image rule
    pairs = defaultdict(list)
    for question, row in zip(questions, rows, strict=True):
        pairs[question.pair_key].append((question, row))
    for key, members in pairs.items():
        assert sum(question.is_reference for question, _ in members) == 1, key
        assert len(members) >= 2, key
        # an edited figure changes the picture, and the pair holds both answers or a flipped one
        images = [np.asarray(row["image"]) for _, row in members if row.get("image") is not None]
        assert all(not np.array_equal(images[0], other) for other in images[1:]), key
    # both categories, every subcategory, VS questions without an image, edited figures flipping the answer
    assert {q.subcategory for q in questions if q.category == "VD"} == set(
        scoring.CATEGORY_SUBCATEGORIES["VD"]
    )
    assert {q.subcategory for q in questions if q.category == "VS"} == set(
        scoring.CATEGORY_SUBCATEGORIES["VS"]
    )
    flips = [key for key, members in pairs.items() if len({q.gt_answer for q, _ in members}) == 2]
    assert len(flips) == len(pairs) == 11  # every question pair has a "yes" and a "no" member
