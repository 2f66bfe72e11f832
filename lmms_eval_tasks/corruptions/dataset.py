"""Dataset-level corruption, lazily on load or materialised into a cached copy, each image seeded by the run's
seed and its pixels (``image_seed``): any path, worker count or order gives identical images."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from loguru import logger

from lmms_eval_tasks import cache_root
from lmms_eval_tasks.corruptions.engine import _check_seed, as_rgb_uint8, check_request, corrupt, to_rgb_image
from lmms_eval_tasks.corruptions.tables import SEVERITY_INDEPENDENT, severity_parameters


def image_seed(seed: int, image: Any) -> int:
    """Per-image seed: BLAKE2b of (run seed, shape, RGB pixels), as a 63-bit integer."""
    seed = _check_seed(seed)
    pixels = as_rgb_uint8(image)
    digest = hashlib.blake2b(digest_size=8)
    digest.update(seed.to_bytes(16, "little", signed=False))
    digest.update(np.asarray(pixels.shape, dtype=np.int64).tobytes())
    digest.update(pixels.tobytes())
    return int.from_bytes(digest.digest(), "little") >> 1


@dataclass(frozen=True)
class CorruptionSpec:
    """Which corruption a run applies: name, severity 1..5, base seed and profile (validated)."""

    name: str
    severity: int
    seed: int = 0
    profile: str = "vrb"

    def __post_init__(self) -> None:
        check_request(self.name, self.severity, self.profile)
        _check_seed(self.seed)

    def apply(self, image: Any) -> Any:
        """The corrupted image as a PIL RGB image (seeded per image, see ``image_seed``)."""
        return corrupt_visual(image, self.name, self.severity, self.seed, self.profile)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record for results: the spec plus the severity row and the engine version."""
        from lmms_eval_tasks.corruptions import ENGINE_VERSION

        return {
            **asdict(self),
            "parameters": json.loads(json.dumps(severity_parameters(self.profile, self.name, self.severity))),
            "severity_independent": self.name in SEVERITY_INDEPENDENT,
            "engine_version": ENGINE_VERSION,
            "per_image_seed": "blake2b(seed, shape, RGB pixels)",
        }

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> CorruptionSpec:
        """Rebuild a spec from ``to_dict`` output (extra keys ignored)."""
        missing = [key for key in ("name", "severity") if key not in record]
        if missing:
            raise KeyError(f"corruption record lacks field(s) {missing}")
        return cls(
            name=record["name"],
            severity=int(record["severity"]),
            seed=int(record.get("seed", 0)),
            profile=record.get("profile", "vrb"),
        )

    def wrap_doc_to_visual(
        self, doc_to_visual: Callable[[dict], Sequence[Any]]
    ) -> Callable[[dict], list[Any]]:
        """A ``doc_to_visual`` hook that corrupts every image the given hook returns, when it is called."""

        def corrupted_visuals(doc: dict) -> list[Any]:
            return [self.apply(image) for image in doc_to_visual(doc)]

        return corrupted_visuals


def _to_pil_rgb(image: Any) -> Any:
    from PIL import Image

    if isinstance(image, dict):  # a datasets Image feature's storage
        if image.get("bytes") is None and not image.get("path"):
            raise ValueError("image dict has neither 'bytes' nor 'path'")
        image = io.BytesIO(image["bytes"]) if image.get("bytes") is not None else str(image["path"])
    elif isinstance(image, bytes | bytearray):
        image = io.BytesIO(image)
    if isinstance(image, io.BytesIO | str | os.PathLike):
        return to_rgb_image(Image.open(image))
    return image


def corrupt_visual(image: Any, name: str, severity: int, seed: int, profile: str = "vrb") -> Any:
    """Corrupt one sample's image for a harness task (PIL/array/bytes/path in, PIL RGB out) with the seed
    ``image_seed`` derives from the run's ``seed`` and its pixels."""
    from PIL import Image

    pixels = as_rgb_uint8(_to_pil_rgb(image))
    out = corrupt(pixels, name, severity, seed=image_seed(seed, pixels), profile=profile)
    return Image.fromarray(out)


def _corrupt_value(value: Any, spec: CorruptionSpec) -> Any:
    if value is None:
        raise ValueError("image is missing (None)")
    if isinstance(value, list | tuple):
        return [spec.apply(item) for item in value]
    return spec.apply(value)


def with_corruption(dataset: Any, image_column: str, spec: CorruptionSpec) -> Any:
    """A view of a ``datasets.Dataset`` whose ``image_column`` is corrupted lazily on access."""
    if image_column not in dataset.column_names:
        raise KeyError(f"dataset has no column {image_column!r}; columns: {dataset.column_names}")

    def transform(batch: dict[str, list]) -> dict[str, list]:
        batch[image_column] = [_corrupt_value(value, spec) for value in batch[image_column]]
        return batch

    return dataset.with_transform(transform)


def _map_batch(batch: dict[str, list], image_column: str, spec_record: dict[str, Any]) -> dict[str, list]:
    spec = CorruptionSpec.from_dict(spec_record)
    corrupted = []
    for row, value in enumerate(batch[image_column]):
        try:
            corrupted.append(_corrupt_value(value, spec))
        except (ValueError, TypeError, OSError) as error:
            raise ValueError(f"row {row} of this batch, column {image_column!r}: {error}") from error
    return {image_column: corrupted}


def cache_key(dataset: Any, image_column: str, spec: CorruptionSpec) -> str:
    """Stable key of a materialised copy: the dataset's fingerprint plus everything that shapes the output."""
    record = {"dataset": dataset._fingerprint, "image_column": image_column, **spec.to_dict()}
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()[:20]


def materialize(
    dataset: Any,
    image_column: str,
    name: str,
    severity: int,
    seed: int = 0,
    profile: str = "vrb",
    num_proc: int | None = None,
    cache_dir: str | os.PathLike | None = None,
) -> Any:
    """A corrupted copy of a ``datasets.Dataset`` (or of each split) by ``Dataset.map``, memory-mapped from
    ``cache_dir/<profile>/<name>/severity_<n>/<key>`` (with a ``corruption.json`` record)."""
    import datasets

    spec = CorruptionSpec(name, severity, seed, profile)
    if isinstance(dataset, datasets.DatasetDict):
        return datasets.DatasetDict(
            {
                split: materialize(part, image_column, name, severity, seed, profile, num_proc, cache_dir)
                for split, part in dataset.items()
            }
        )
    if image_column not in dataset.column_names:
        raise KeyError(f"dataset has no column {image_column!r}; columns: {dataset.column_names}")
    feature = dataset.features[image_column]
    if isinstance(feature, datasets.Value) and feature.dtype in ("string", "large_string", "binary"):
        dataset = dataset.cast_column(image_column, datasets.Image())  # paths or encoded bytes
    key = cache_key(dataset, image_column, spec)
    root = Path(cache_dir) if cache_dir is not None else cache_root() / "corruptions"
    target = root / profile / name / f"severity_{severity}" / key
    if (target / "corruption.json").is_file():
        logger.info(f"reusing corrupted copy {target}")
        return datasets.load_from_disk(str(target))
    corrupted = dataset.map(
        _map_batch,
        batched=True,
        batch_size=16,
        fn_kwargs={"image_column": image_column, "spec_record": spec.to_dict()},
        num_proc=num_proc if num_proc and num_proc > 1 else None,
        new_fingerprint=key,
        desc=f"{profile}/{name}/severity {severity}",
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=target.parent))
    try:
        corrupted.save_to_disk(str(staging / "data"))
        record = {**spec.to_dict(), "image_column": image_column, "source_fingerprint": dataset._fingerprint}
        (staging / "data" / "corruption.json").write_text(json.dumps(record, indent=2) + "\n")
        try:
            os.replace(staging / "data", target)
        except OSError:
            if not (target / "corruption.json").is_file():  # not a concurrent writer's finished copy
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    logger.info(f"wrote corrupted copy {target}")
    return datasets.load_from_disk(str(target))


def load_any(path: str | os.PathLike, split: str | None = None) -> Any:
    """A ``load_from_disk`` folder, or a parquet / json / jsonl / csv data file, as a Dataset(Dict)."""
    import datasets

    path = Path(path)
    if path.is_dir():
        loaded = datasets.load_from_disk(str(path))
    else:
        suffix = path.suffix.lower()
        builder = {".parquet": "parquet", ".json": "json", ".jsonl": "json", ".csv": "csv"}.get(suffix)
        if builder is None:
            raise ValueError(f"{path}: expected a load_from_disk folder or a .parquet/.json/.jsonl/.csv file")
        loaded = datasets.load_dataset(builder, data_files=str(path), split="train")
    if split is not None:
        if not isinstance(loaded, datasets.DatasetDict):
            raise ValueError(f"{path} holds a single Dataset; --split applies to DatasetDict folders only")
        if split not in loaded:
            raise KeyError(f"{path} has no split {split!r}; splits: {list(loaded)}")
        loaded = loaded[split]
    return loaded
