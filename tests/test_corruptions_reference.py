"""Agreement of the ``imagenet_c`` profile with the reference ``imagecorruptions`` 1.1.2 package.

Deterministic corruptions are compared on the same image; random ones are run on the reference's own
draws (a ``RandomState`` seeded like the reference's global state replays them into our algorithm), so
the algorithms must agree within one grey level. Where our noise source differs by design (shot and
impulse noise sampled differently, frost without the photos) the comparison is statistical.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lmms_eval_tasks.corruptions import SEVERITY_TABLES, corrupt
from lmms_eval_tasks.corruptions.engine import implementation, quantize

if importlib.util.find_spec("imagecorruptions") is None:
    pytest.skip("reference package imagecorruptions (dev extra) not installed", allow_module_level=True)


def _load_reference() -> Any:
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "corruption_speed.py"
    spec = importlib.util.spec_from_file_location("corruption_speed_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_reference()


@pytest.fixture(scope="module")
def reference() -> Any:
    return _load_reference()


@pytest.fixture(scope="module", params=[(64, 64), (61, 97)], ids=["64x64", "61x97"])
def photo(request: pytest.FixtureRequest) -> np.ndarray:
    import cv2
    from skimage import data

    height, width = request.param
    return cv2.resize(data.astronaut(), (width, height), interpolation=cv2.INTER_AREA)


class ReplayNoise:
    """Our noise interface over ``numpy.random.RandomState``: replays the reference's global draws."""

    dtype = np.float64

    def __init__(self, seed: int) -> None:
        self.state = np.random.RandomState(seed)

    def normal(self, loc: float, scale: float, size: tuple) -> np.ndarray:
        return self.state.normal(loc=loc, scale=scale, size=size)

    def uniform(self, low: float, high: float, size: tuple | None = None) -> Any:
        return self.state.uniform(low, high, size)

    def random(self, size: tuple) -> np.ndarray:
        return self.state.random_sample(size)

    def integers(self, low: int, high: int, size: tuple) -> np.ndarray:
        return self.state.randint(low, high, size=size)


REPLAYED = [
    "defocus_blur",
    "glass_blur",
    "motion_blur",
    "zoom_blur",
    "snow",
    "fog",
    "brightness",
    "contrast",
    "elastic_transform",
    "pixelate",
    "jpeg_compression",
    "gaussian_blur",
    "spatter",
    "saturate",
]


@pytest.mark.parametrize("name", REPLAYED)
def test_same_draws_agree_within_one_grey_level(reference: Any, photo: np.ndarray, name: str) -> None:
    worst = []
    for severity in range(1, 6):
        np.random.seed(severity)
        theirs = reference.corrupt(photo, severity, corruption_name=name).astype(int)
        parameters = SEVERITY_TABLES["imagenet_c"][name][severity - 1]
        ours = quantize(
            implementation("imagenet_c", name)(photo, parameters, ReplayNoise(severity)), "imagenet_c"
        )
        difference = np.abs(ours.astype(int) - theirs)
        worst.append(int(difference.max()))
        # Off-by-one comes only from float rounding right at integer boundaries: rare.
        assert (difference > 0).mean() < 0.12, (name, severity, float((difference > 0).mean()))
    assert max(worst) <= 1, (name, worst)


def test_bit_exact_where_no_float_path_differs(reference: Any, photo: np.ndarray) -> None:
    for name in (
        "glass_blur",
        "motion_blur",
        "snow",
        "contrast",
        "pixelate",
        "jpeg_compression",
    ):
        for severity in (1, 5):
            np.random.seed(severity)
            theirs = reference.corrupt(photo, severity, corruption_name=name)
            parameters = SEVERITY_TABLES["imagenet_c"][name][severity - 1]
            ours = quantize(
                implementation("imagenet_c", name)(photo, parameters, ReplayNoise(severity)), "imagenet_c"
            )
            assert np.abs(ours.astype(int) - theirs).max() <= (1 if name == "motion_blur" else 0), (
                name,
                severity,
            )


@pytest.mark.parametrize(
    "name",
    [
        "defocus_blur",
        "zoom_blur",
        "brightness",
        "contrast",
        "pixelate",
        "jpeg_compression",
        "gaussian_blur",
        "saturate",
        "grayscale",
    ],
)
def test_public_api_matches_reference_on_deterministic_corruptions(
    reference: Any, photo: np.ndarray, name: str
) -> None:
    """``corrupt()`` itself (float32 fast paths) on corruptions without randomness: within one grey level."""
    for severity in range(1, 6):
        ours = corrupt(photo, name, severity, seed=0, profile="imagenet_c").astype(int)
        if name == "grayscale":
            import cv2

            theirs = cv2.cvtColor(cv2.cvtColor(photo, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB).astype(int)
        else:
            theirs = reference.corrupt(photo, severity, corruption_name=name).astype(int)
        difference = np.abs(ours - theirs)
        assert difference.max() <= 1 and (difference > 0).mean() < 0.12, (name, severity, difference.max())


def _distance_stats(images: list[np.ndarray], clean: np.ndarray) -> np.ndarray:
    """Per image: mean |difference| from clean, image std, mean horizontal gradient."""
    rows = []
    for image in images:
        as_float = image.astype(float)
        rows.append(
            [
                np.abs(as_float - clean).mean(),
                as_float.std(),
                np.abs(np.diff(as_float, axis=1)).mean(),
            ]
        )
    return np.asarray(rows)


@pytest.mark.parametrize("name", ["gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"])
def test_statistical_agreement_of_noise(reference: Any, name: str) -> None:
    """Our samplers draw differently from the reference's; the statistics must agree within noise.

    For each statistic the difference of the two means over 8 seeds must be below 4.5 standard errors
    plus 0.5% (slack for the reference's uint8 truncation of identity pixels, which we do not copy).
    """
    import cv2
    from skimage import data

    photo = cv2.resize(data.astronaut(), (128, 128), interpolation=cv2.INTER_AREA)
    clean = photo.astype(float)
    seeds = range(8)
    for severity in range(1, 6):
        ours = _distance_stats(
            [corrupt(photo, name, severity, seed=s, profile="imagenet_c") for s in seeds], clean
        )
        theirs = []
        for seed in seeds:
            np.random.seed(seed)
            theirs.append(reference.corrupt(photo, severity, corruption_name=name))
        theirs = _distance_stats(theirs, clean)
        for column in range(3):
            error = np.sqrt(
                ours[:, column].var(ddof=1) / len(ours) + theirs[:, column].var(ddof=1) / len(theirs)
            )
            gap = abs(ours[:, column].mean() - theirs[:, column].mean())
            assert gap < 4.5 * error + 0.005 * theirs[:, column].mean(), (name, severity, column, gap, error)


def test_frost_agrees_on_average(reference: Any) -> None:
    """Frost with our procedural texture vs the reference's photos: same darkening/whitening on average."""
    import cv2
    from skimage import data

    photo = cv2.resize(data.astronaut(), (128, 128), interpolation=cv2.INTER_AREA)
    clean = photo.astype(float)
    for severity in range(1, 6):
        ours = _distance_stats(
            [corrupt(photo, "frost", severity, seed=s, profile="imagenet_c") for s in range(5)], clean
        )
        theirs = []
        for seed in range(10):  # the reference picks one of five photos per call
            np.random.seed(seed)
            theirs.append(reference.corrupt(photo, severity, corruption_name="frost"))
        theirs = _distance_stats(theirs, clean)
        ratio = ours.mean(0) / theirs.mean(0)
        assert abs(ratio[0] - 1) < 0.1 and abs(ratio[1] - 1) < 0.1, (severity, ratio)
        assert abs(ratio[2] - 1) < 0.3, (severity, ratio)  # crystal detail: our texture is a stand-in


def test_procedural_frost_texture_resembles_the_photos() -> None:
    """Per-channel means and spreads of our texture fall within the range of the reference photos."""
    import cv2

    from lmms_eval_tasks.corruptions._functions import frost_texture
    from lmms_eval_tasks.corruptions._ops import FastNoise

    folder = Path(importlib.util.find_spec("imagecorruptions").origin).parent / "frost"
    photos = [
        cv2.imread(str(folder / file))[..., ::-1].astype(float)
        for file in ("frost1.png", "frost2.png", "frost3.png", "frost4.jpg", "frost5.jpg")  # the 5 it samples
    ]
    photo_means = np.array([photo.reshape(-1, 3).mean(0) for photo in photos])
    photo_stds = np.array([photo.reshape(-1, 3).std(0) for photo in photos])
    for seed in range(3):
        texture = frost_texture(224, 224, FastNoise(np.random.default_rng(seed)))
        assert texture.shape == (224, 224, 3)
        means = texture.reshape(-1, 3).mean(0)
        stds = texture.reshape(-1, 3).std(0)
        assert np.all(means >= photo_means.min(0)) and np.all(means <= photo_means.max(0)), means
        assert abs(means.mean() - photo_means.mean()) < 10, (means, photo_means.mean(0))
        assert np.all(stds >= photo_stds.min(0) * 0.9) and np.all(stds <= photo_stds.max(0)), stds
        assert means[2] > means[1] > means[0]  # cool tint, like the photos on average
        gradient = np.abs(np.diff(texture.mean(-1), axis=1)).mean()
        assert 5 < gradient < 20  # the photos: 7.4 to 17.4


def test_large_radius_gaussian_matches_scipy() -> None:
    """VRB elastic severities 1-2 blur with sigma 170.8 / 19.52 (radius 512 / 59): the matrix path."""
    from scipy.ndimage import gaussian_filter

    from lmms_eval_tasks.corruptions._ops import gaussian_filter as ours

    field = np.random.default_rng(0).uniform(-1, 1, (61, 97))
    for sigma in (170.8, 19.52, 2.44):
        expected = gaussian_filter(field, sigma, mode="reflect", truncate=3)
        assert np.abs(ours(field, sigma, mode="reflect", truncate=3) - expected).max() < 1e-9 * max(1, sigma)
    expected = gaussian_filter(field, (0.61, 0.97), mode="reflect", truncate=3)
    assert np.abs(ours(field, (0.61, 0.97), mode="reflect", truncate=3) - expected).max() < 1e-6
