"""Corruptions engine: API, validation, every (profile, name, severity), determinism, hand-checked values."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from lmms_eval_tasks.corruptions import (
    IMAGENET_C_CORRUPTIONS,
    PROFILES,
    SEVERITY_INDEPENDENT,
    SEVERITY_TABLES,
    VRB_PAPER_CORRUPTIONS,
    corrupt,
    corruption_names,
)

ALL_CASES = [
    (profile, name, severity)
    for profile in PROFILES
    for name in SEVERITY_TABLES[profile]
    for severity in range(1, 6)
]


def _image(height: int, width: int, seed: int = 0) -> np.ndarray:
    """A smooth gradient plus texture, so blurs, noise and colour edits all have something to change."""
    rng = np.random.default_rng(seed)
    rows, cols = np.mgrid[0:height, 0:width]
    base = np.stack(
        [rows * 255 / max(height - 1, 1), cols * 255 / max(width - 1, 1), (rows + cols) % 64 * 4], -1
    )
    return np.clip(base + rng.integers(-20, 21, base.shape), 0, 255).astype(np.uint8)


@pytest.fixture(scope="module")
def astronaut_mid() -> np.ndarray:
    import cv2
    from skimage import data

    return cv2.resize(data.astronaut(), (128, 96), interpolation=cv2.INTER_AREA)


def test_profiles_cover_the_issue_lists() -> None:
    vrb = corruption_names("vrb")
    imagenet_c = corruption_names("imagenet_c")
    assert set(VRB_PAPER_CORRUPTIONS) <= set(vrb) and len(VRB_PAPER_CORRUPTIONS) == 14
    assert set(IMAGENET_C_CORRUPTIONS) <= set(imagenet_c) and len(IMAGENET_C_CORRUPTIONS) == 19
    for names in (vrb, imagenet_c):
        assert {"grayscale", "grayscale_inverse", "color_inversion"} <= set(names)
    for profile in PROFILES:
        for name, rows in SEVERITY_TABLES[profile].items():
            assert len(rows) == 5, (profile, name)


def test_vrb_table_matches_spec() -> None:
    table = SEVERITY_TABLES["vrb"]
    assert table["shot_noise"] == (0.08, 0.2, 0.5, 0.8, 1.2)
    assert table["pixelate"] == (0.6, 0.5, 0.4, 0.3, 0.15)
    assert table["jpeg_compression"] == (25, 18, 15, 10, 7)
    assert table["elastic_transform"][0] == pytest.approx((488, 170.8, 24.4))
    assert table["elastic_transform"][4] == pytest.approx((29.28, 2.44, 4.88))
    assert table["saturate"][4] == (20.0, 0.2)
    assert SEVERITY_TABLES["imagenet_c"]["shot_noise"] == (60, 25, 12, 5, 3)
    assert SEVERITY_TABLES["imagenet_c"]["pixelate"][4] == 0.25


@pytest.mark.parametrize("shape", [(24, 32), (48, 64), (17, 31), (64, 16)])
@pytest.mark.parametrize(("profile", "name", "severity"), ALL_CASES)
def test_every_corruption_runs_and_returns_uint8(
    profile: str, name: str, severity: int, shape: tuple
) -> None:
    image = _image(*shape)
    out = corrupt(image, name, severity, seed=3, profile=profile)
    assert out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3 and out.flags.c_contiguous
    if profile in ("vrb", "vrb_official") and name == "pixelate":
        factor = SEVERITY_TABLES["vrb"]["pixelate"][severity - 1]
        assert out.shape[:2] == (max(1, int(shape[0] * factor)), max(1, int(shape[1] * factor)))
    else:
        assert out.shape == image.shape


@pytest.mark.parametrize("profile", PROFILES)
def test_grayscale_rgba_and_pil_inputs(profile: str) -> None:
    rgb = _image(33, 40)
    grey = rgb[..., 0]
    rgba = np.concatenate([rgb, np.full(rgb.shape[:2] + (1,), 7, np.uint8)], axis=2)
    for name in corruption_names(profile):
        from_grey = corrupt(grey, name, 2, seed=1, profile=profile)
        assert np.array_equal(
            from_grey, corrupt(np.repeat(grey[..., None], 3, 2), name, 2, seed=1, profile=profile)
        )
        assert np.array_equal(corrupt(grey[..., None], name, 2, seed=1, profile=profile), from_grey)
        from_rgba = corrupt(rgba, name, 2, seed=1, profile=profile)
        assert np.array_equal(from_rgba, corrupt(rgb, name, 2, seed=1, profile=profile))
        assert np.array_equal(corrupt(Image.fromarray(rgba), name, 2, seed=1, profile=profile), from_rgba)
        assert np.array_equal(corrupt(Image.fromarray(grey), name, 2, seed=1, profile=profile), from_grey)


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (np.zeros((32, 32, 3), np.float32), "dtype uint8"),
        (np.zeros((32, 32, 3), np.int16), "dtype uint8"),
        (np.zeros((1, 1, 3), np.uint8), "height and width"),
        (np.zeros((15, 40, 3), np.uint8), "height and width"),
        (np.zeros((32, 32, 2), np.uint8), "shape"),
        (np.zeros((2, 32, 32, 3), np.uint8), "shape"),
        ([[1, 2], [3, 4]], "PIL image or a numpy array"),
    ],
)
def test_bad_images_are_rejected(image: object, message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        corrupt(image, "gaussian_noise", 1, seed=0)


@pytest.mark.parametrize("severity", [0, 6, -1, 2.0, True, "3"])
def test_bad_severity_is_rejected(severity: object) -> None:
    with pytest.raises(ValueError, match="severity must be an integer from 1 to 5"):
        corrupt(_image(32, 32), "gaussian_noise", severity, seed=0)


def test_unknown_names_profiles_and_seeds_are_rejected() -> None:
    image = _image(32, 32)
    with pytest.raises(ValueError, match="unknown corruption 'gausian_noise'.*gaussian_noise"):
        corrupt(image, "gausian_noise", 1, seed=0)
    with pytest.raises(ValueError, match="unknown corruption 'fog' for profile 'vrb'"):
        corrupt(image, "fog", 1, seed=0, profile="vrb")
    with pytest.raises(ValueError, match="unknown corruption profile 'imagenet-c'"):
        corrupt(image, "fog", 1, seed=0, profile="imagenet-c")
    for seed in (None, -1, 1.5):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            corrupt(image, "fog", 1, seed=seed, profile="imagenet_c")
    with pytest.raises(TypeError):
        corrupt(image, "fog", 1, 0)  # the seed is keyword-only


@pytest.mark.parametrize("profile", PROFILES)
def test_deterministic_and_no_global_random_state(profile: str) -> None:
    image = _image(40, 52)
    np.random.seed(123)
    legacy_before = np.random.get_state()[1].copy()
    for name in corruption_names(profile):
        first = corrupt(image, name, 4, seed=11, profile=profile)
        np.random.random(5)  # moving the global state must not matter
        assert np.array_equal(first, corrupt(image, name, 4, seed=11, profile=profile)), name
    np.random.seed(123)
    assert np.array_equal(np.random.get_state()[1], legacy_before)
    # Different seeds give different noise.
    assert not np.array_equal(
        corrupt(image, "gaussian_noise", 3, seed=1, profile=profile),
        corrupt(image, "gaussian_noise", 3, seed=2, profile=profile),
    )


def test_input_is_not_modified() -> None:
    image = _image(40, 52)
    copy = image.copy()
    for profile in PROFILES:
        for name in corruption_names(profile):
            corrupt(image, name, 5, seed=0, profile=profile)
    assert np.array_equal(image, copy)


def test_identical_definitions_draw_identical_noise_across_profiles() -> None:
    image = _image(40, 52)
    for name in ("gaussian_noise", "impulse_noise", "speckle_noise", "spatter", "glass_blur"):
        vrb = corrupt(image, name, 3, seed=5, profile="vrb").astype(int)
        imagenet_c = corrupt(image, name, 3, seed=5, profile="imagenet_c").astype(int)
        # Same draws; only the final rounding differs (round vs truncate): at most one grey level.
        assert np.abs(vrb - imagenet_c).max() <= 1, name


# vrb_official (vrb plus the official JPEG artefacts) is checked in test_corruptions_official_profile.py.
@pytest.mark.parametrize("profile", ["vrb", "imagenet_c"])
def test_severity_independent_extras(profile: str) -> None:
    image = _image(30, 45)
    grey = (0.299 * image[..., 0] + 0.587 * image[..., 1] + 0.114 * image[..., 2]).round()
    outputs = {
        name: [corrupt(image, name, s, seed=s, profile=profile) for s in range(1, 6)]
        for name in SEVERITY_INDEPENDENT
    }
    for name, results in outputs.items():
        assert all(np.array_equal(results[0], other) for other in results[1:]), name
    assert np.array_equal(outputs["color_inversion"][0], 255 - image)
    gray_out = outputs["grayscale"][0].astype(int)
    assert np.array_equal(gray_out[..., 0], gray_out[..., 2])
    assert np.abs(gray_out[..., 0] - grey).max() <= 1  # BT.601 luma
    assert np.array_equal(outputs["grayscale_inverse"][0], 255 - outputs["grayscale"][0])


def test_contrast_by_hand() -> None:
    # Channel 0 is [0, 100] (mean 50 / 255), severity 1 factor 0.4:
    # 0 -> (0 - 50) * 0.4 + 50 = 30; 100 -> (100 - 50) * 0.4 + 50 = 70 (in 0..255 units).
    image = np.zeros((16, 16, 3), np.uint8)
    image[:, 8:, 0] = 100
    out = corrupt(image, "contrast", 1, seed=0, profile="vrb")
    assert set(np.unique(out[..., 0])) == {30, 70}
    assert set(np.unique(out[..., 1])) == {0}


def test_brightness_by_hand() -> None:
    # RGB (100, 50, 0), severity 2 adds 0.2 to V = 100/255: V' = 100 + 51 = 151, channels scale by 151/100.
    image = np.zeros((16, 16, 3), np.uint8)
    image[...] = (100, 50, 0)
    image[:4] = 0  # black turns grey at V' = 51
    vrb = corrupt(image, "brightness", 2, seed=0, profile="vrb")
    assert tuple(vrb[8, 8]) == (151, 76, 0)  # 50 * 1.51 = 75.5 rounds (half to even) to 76
    assert tuple(vrb[0, 0]) == (51, 51, 51)
    imagenet_c = corrupt(image, "brightness", 2, seed=0, profile="imagenet_c")
    assert tuple(imagenet_c[8, 8]) in {(151, 75, 0), (150, 75, 0)}  # truncation (float noise at .0)


def test_saturate_by_hand() -> None:
    # (200, 100, 100): V = 200, S = 0.5. Severity 1 (S * 0.3): S' = 0.15 -> min = 200 * 0.85 = 170.
    # A grey pixel at severity 5 (S * 20 + 0.2) takes hue 0: (V, 0.8 V, 0.8 V).
    image = np.zeros((16, 16, 3), np.uint8)
    image[...] = (200, 100, 100)
    image[:4] = (100, 100, 100)
    out = corrupt(image, "saturate", 1, seed=0, profile="vrb")
    assert tuple(out[8, 8]) == (200, 170, 170)
    assert tuple(out[0, 0]) == (100, 100, 100)
    out = corrupt(image, "saturate", 5, seed=0, profile="vrb")
    assert tuple(out[0, 0]) == (100, 80, 80)


def test_vrb_shot_noise_is_additive_poisson() -> None:
    # clip(x + Poisson(lam)): a channel value is untouched (count 0, probability e^-lam) or becomes 255.
    image = np.full((200, 200, 3), 60, np.uint8)
    out = corrupt(image, "shot_noise", 5, seed=0, profile="vrb")
    assert set(np.unique(out)) == {60, 255}
    saturated = float((out == 255).mean())
    expected = 1 - np.exp(-1.2)  # 0.6988; sd of the mean over 120000 draws ~ 0.0013
    assert abs(saturated - expected) < 0.006


def test_imagenet_c_shot_noise_mean_and_variance() -> None:
    # poisson(x * c) / c with x = 100/255, c = 60: mean x, variance x / c (in [0, 1] units), truncated to
    # uint8 afterwards (mean drops by about half a grey level).
    image = np.full((200, 200, 3), 100, np.uint8)
    out = corrupt(image, "shot_noise", 1, seed=0, profile="imagenet_c").astype(float) / 255
    x = 100 / 255
    assert abs(out.mean() - (x - 0.5 / 255)) < 0.002
    assert abs(out.var() - x / 60) < 0.03 * x / 60


def test_impulse_noise_rates() -> None:
    image = np.full((200, 200, 3), 128, np.uint8)
    out = corrupt(image, "impulse_noise", 5, seed=0, profile="vrb")
    # amount 0.27 split evenly: 13.5% salt, 13.5% pepper (sd ~ 0.001 each).
    assert abs((out == 255).mean() - 0.135) < 0.005
    assert abs((out == 0).mean() - 0.135) < 0.005


@pytest.mark.parametrize(
    ("name", "profile", "level", "severity"),
    [
        ("gaussian_noise", "imagenet_c", 100, 1),
        ("gaussian_noise", "vrb", 30, 5),
        ("speckle_noise", "imagenet_c", 200, 3),
        ("speckle_noise", "vrb", 100, 5),
        ("shot_noise", "imagenet_c", 100, 2),
    ],
)
def test_noise_output_levels_follow_the_definition(
    name: str, profile: str, level: int, severity: int
) -> None:
    """Histogram of a flat image's output levels vs the definition's probabilities (chi-square test).

    Gaussian: out = q(clip(v + 255 sigma z)); speckle: q(clip(v + v sigma z)); q = floor (imagenet_c) or
    round (vrb). Shot (imagenet_c): floor(clip(Poisson(v / 255 c) / c, 0, 1) * 255).
    """
    from math import erf, exp, factorial, sqrt

    def phi(value: float) -> float:
        return 0.5 * (1 + erf(value / sqrt(2)))

    out = corrupt(np.full((300, 300, 3), level, np.uint8), name, severity, seed=4, profile=profile)
    counts = np.bincount(out.ravel(), minlength=256).astype(float)
    parameter = SEVERITY_TABLES[profile][name][severity - 1]
    expected = np.zeros(256)
    if name == "shot_noise":
        lam = level / 255 * parameter
        for count in range(parameter):
            expected[int(count / parameter * 255)] += exp(-lam) * lam**count / factorial(count)
        expected[255] += 1 - expected.sum()
    else:
        scale = 255 * parameter if name == "gaussian_noise" else level * parameter
        upper = 1.0 if profile == "imagenet_c" else 0.5  # the edge between output k and k + 1 is k + upper
        cdf = np.array([phi((k + upper - level) / scale) for k in range(255)] + [1.0])
        expected = np.diff(np.concatenate([[0.0], cdf]))
    expected *= out.size
    keep = expected > 5
    assert counts[~keep].sum() <= max(20, 3 * expected[~keep].sum())
    chi_square = float((((counts[keep] - expected[keep]) ** 2) / expected[keep]).sum())
    dof = int(keep.sum()) - 1
    assert chi_square < dof + 5 * np.sqrt(2 * dof), (chi_square, dof)  # ~5 sigma of a chi-square


def test_gaussian_noise_statistics() -> None:
    image = np.full((200, 200, 3), 128, np.uint8)
    out = corrupt(image, "gaussian_noise", 1, seed=0, profile="vrb").astype(float)
    # sigma 0.08 * 255 = 20.4 grey levels; no clipping this far from 0 and 255.
    assert abs(out.mean() - 128) < 0.3
    assert abs(out.std() - 20.4) < 0.3


def test_vrb_pixelate_downscales_with_area_average() -> None:
    image = np.zeros((20, 20, 3), np.uint8)
    image[::2, ::2] = 200  # one lit pixel per 2x2 block
    out = corrupt(image, "pixelate", 2, seed=0, profile="vrb")  # factor 0.5 -> 10x10, each block's mean
    assert out.shape == (10, 10, 3)
    assert np.all(out == 50)


MONOTONE = {
    "vrb": [
        "shot_noise",
        "gaussian_noise",
        "impulse_noise",
        "speckle_noise",
        "defocus_blur",
        "zoom_blur",
        "brightness",
        "contrast",
        "jpeg_compression",
    ],
    "vrb_official": [
        "shot_noise",
        "gaussian_noise",
        "impulse_noise",
        "speckle_noise",
        "defocus_blur",
        "zoom_blur",
        "brightness",
        "contrast",
        "jpeg_compression",
    ],
    "imagenet_c": [
        "gaussian_noise",
        "shot_noise",
        "impulse_noise",
        "speckle_noise",
        "defocus_blur",
        "motion_blur",
        "zoom_blur",
        "gaussian_blur",
        "brightness",
        "contrast",
        "elastic_transform",
        "pixelate",
        "jpeg_compression",
    ],
}


@pytest.mark.parametrize("profile", PROFILES)
def test_severity_ordering(profile: str, astronaut_mid: np.ndarray) -> None:
    """Mean distance from the clean image grows with severity where the parameters grow monotonically."""
    clean = astronaut_mid.astype(float)
    for name in MONOTONE[profile]:
        distances = [
            np.mean(
                [
                    np.abs(corrupt(astronaut_mid, name, s, seed=k, profile=profile) - clean).mean()
                    for k in (0, 1)
                ]
            )
            for s in range(1, 6)
        ]
        assert all(later > earlier for earlier, later in zip(distances, distances[1:], strict=False)), (
            name,
            distances,
        )
    if profile in ("vrb", "vrb_official"):
        areas = [corrupt(astronaut_mid, "pixelate", s, seed=0, profile=profile).size for s in range(1, 6)]
        assert areas == sorted(areas, reverse=True) and len(set(areas)) == 5
