"""How far the official VRB pipeline's JPEG artefacts move the corrupted images (profile ``vrb_official``).

Two artefacts of the official code (ishmamt/VQA-Visual-Robustness-Benchmark) are measured on scikit-image's
four colour photographs (astronaut, chelsea, coffee, rocket; 300 to 640 pixels a side, COCO-like):

1. ``jpeg_compression`` hands the RGB array to ``cv2.imwrite``, which takes it as BGR: the JPEG is encoded
   with red and blue exchanged. Per severity: PSNR between that and the correct encode (profile ``vrb``),
   and the difference of their PSNR against the clean image (their strength).
2. Every corrupted image is saved as a quality-95 OpenCV JPEG and read back by the models. Per corruption
   and severity: the relative change of the mean absolute distance from the clean image, ``vrb_official``
   against ``vrb``, over the photos and ``--seeds`` seeds.

The reference in the same run is a file-based replay of the official pipeline (``cv2.imwrite`` then
``imageio.imread``, as ``generator.py`` and ``utils.py`` call them): every ``vrb_official`` output measured
here is checked to equal it byte for byte (``replay_mismatches`` counts failures). The last line is
``RESULT jpeg_psnr_min=... jpeg_psnr_max=... jpeg_strength_diff_max_db=... noise_change_min_pct=...
noise_change_max_pct=... replay_mismatches=...``.

    .venv/bin/python benchmarks/vrb_official_differences.py [--seeds 4] [--all]
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

import cv2
import imageio.v2 as imageio
import numpy as np

from lmms_eval_tasks.corruptions import SEVERITY_TABLES, corrupt

NOISE = ("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise")


def photos() -> dict[str, np.ndarray]:
    """The four colour photographs scikit-image ships (public domain / CC0)."""
    from skimage import data

    return {name: getattr(data, name)()[..., :3] for name in ("astronaut", "chelsea", "coffee", "rocket")}


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Peak signal-to-noise ratio in dB of two uint8 images."""
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255.0**2 / mse)


def replay_official(
    rgb_result: np.ndarray, folder: Path, jpeg_quality: int | None = None, clean: np.ndarray | None = None
) -> np.ndarray:
    """What the official models read: for ``jpeg_quality``, the generator's JPEG step on ``clean`` first;
    for ``jpeg_quality=0``, the generator's grey (``COLOR_BGR2GRAY`` on the RGB array) of ``clean``."""
    if jpeg_quality == 0:
        returned = cv2.cvtColor(cv2.cvtColor(clean, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    elif jpeg_quality is not None:
        cv2.imwrite(str(folder / "parrot_saved.jpg"), clean, [int(cv2.IMWRITE_JPEG_QUALITY), jpeg_quality])
        returned = np.asarray(
            imageio.imread(folder / "parrot_saved.jpg")
        )  # BGR order, as the generator returns
    else:
        returned = cv2.cvtColor(rgb_result, cv2.COLOR_BGR2RGB)  # the generator's final RGB->BGR swap
    cv2.imwrite(str(folder / "COCO_val2014_000000000001.jpg"), returned)  # utils.saveImage (quality 95)
    return np.asarray(imageio.imread(folder / "COCO_val2014_000000000001.jpg"))  # utils.loadImage


def main() -> None:
    """Run both measurements and print the tables and the RESULT line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4, help="seeds per (photo, corruption, severity)")
    parser.add_argument("--all", action="store_true", help="also measure the non-noise corruptions")
    parser.add_argument("--quick", action="store_true", help="small run: checks the script works")
    args = parser.parse_args()
    if args.quick:
        args.seeds = 1
    images = photos()
    mismatches = 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        print("jpeg_compression: swapped-channel encode (official) vs correct encode (vrb), dB")
        print(
            "severity quality  PSNR(swapped, correct) min/mean/max"
            "   PSNR_clean(swapped) - PSNR_clean(correct) min/max"
        )
        psnrs_all, strength_all = [], []
        for severity, quality in enumerate(SEVERITY_TABLES["vrb"]["jpeg_compression"], start=1):
            between, strength = [], []
            for clean in images.values():
                correct = corrupt(clean, "jpeg_compression", severity, seed=0, profile="vrb")
                official = corrupt(clean, "jpeg_compression", severity, seed=0, profile="vrb_official")
                mismatches += not np.array_equal(official, replay_official(correct, folder, quality, clean))
                swapped = np.asarray(imageio.imread(folder / "parrot_saved.jpg"))[
                    ..., ::-1
                ]  # before the q95 save
                between.append(psnr(swapped, correct))
                strength.append(psnr(clean, swapped) - psnr(clean, correct))
            psnrs_all += between
            strength_all += strength
            print(
                f"{severity:>8} {quality:>7}  {min(between):6.2f} {np.mean(between):6.2f} {max(between):6.2f}"
                f"                       {min(strength):+5.2f} {max(strength):+5.2f}"
            )
        names = list(SEVERITY_TABLES["vrb"]) if args.all else list(NOISE)
        print("\nmean |x - clean| per value, vrb -> vrb_official (saved as q95 JPEG), change in %")
        print(
            "(grayscale*: also the official swapped grey weights;"
            " pixelate: against the clean image downscaled)"
        )
        print(f"{'corruption':<18}" + "".join(f"{'s' + str(s):>22}" for s in range(1, 6)))
        noise_changes = []
        for name in names:
            cells = []
            for severity in range(1, 6):
                plain, saved = [], []
                for clean in images.values():
                    for seed in range(args.seeds):
                        default = corrupt(clean, name, severity, seed=seed, profile="vrb")
                        official = corrupt(clean, name, severity, seed=seed, profile="vrb_official")
                        if name == "grayscale" and seed == 0:
                            mismatches += not np.array_equal(
                                official, replay_official(default, folder, 0, clean)
                            )
                        elif name not in ("jpeg_compression", "grayscale_inverse") and seed == 0:
                            mismatches += not np.array_equal(official, replay_official(default, folder))
                        if (
                            default.shape != clean.shape
                        ):  # pixelate: compare with the clean image resized alike
                            reference = cv2.resize(clean, default.shape[1::-1], interpolation=cv2.INTER_AREA)
                        else:
                            reference = clean
                        plain.append(np.abs(default.astype(np.int16) - reference).mean())
                        saved.append(np.abs(official.astype(np.int16) - reference).mean())
                change = (
                    100 * (np.mean(saved) - np.mean(plain)) / np.mean(plain) if np.mean(plain) else math.nan
                )
                if name in NOISE:
                    noise_changes.append(change)
                cells.append(f"{np.mean(plain):7.2f}->{np.mean(saved):7.2f} {change:+5.1f}%")
            print(f"{name:<18}" + "".join(f"{cell:>22}" for cell in cells))
    print(
        f"RESULT jpeg_psnr_min={min(psnrs_all):.2f} jpeg_psnr_max={max(psnrs_all):.2f} "
        f"jpeg_strength_diff_max_db={max(abs(value) for value in strength_all):.2f} "
        f"noise_change_min_pct={min(noise_changes):.1f} noise_change_max_pct={max(noise_changes):.1f} "
        f"replay_mismatches={mismatches}"
    )


if __name__ == "__main__":
    main()
