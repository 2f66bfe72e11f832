"""``corrupt(image, name, severity, *, seed, profile)``: validation, seeding, dispatch, quantisation."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from lmms_eval_tasks import environment
from lmms_eval_tasks.corruptions import algorithms
from lmms_eval_tasks.corruptions.primitives import FastNoise
from lmms_eval_tasks.corruptions.tables import PROFILES, SEVERITY_TABLES

MIN_SIDE = 16
"""Smallest accepted height or width: below it several kernels (glass blur, pixelate) lose meaning."""

Corruption = Callable[[np.ndarray, Any, Any], np.ndarray]

_SHARED: dict[str, Corruption] = {
    "impulse_noise": algorithms.impulse_noise,
    "defocus_blur": algorithms.defocus_blur,
    "glass_blur": algorithms.glass_blur,
    "spatter": algorithms.spatter,
    "saturate": algorithms.saturate,
    "grayscale": algorithms.grayscale,
    "grayscale_inverse": partial(algorithms.grayscale, inverse=True),
    "color_inversion": algorithms.color_inversion,
}
_REGISTRY: dict[str, dict[str, Corruption]] = {
    "imagenet_c": {
        **_SHARED,
        "gaussian_noise": partial(algorithms.normal_noise, multiplicative=False, rounding="truncate"),
        "shot_noise": algorithms.shot_noise_imagenet_c,
        "motion_blur": algorithms.motion_blur,
        "zoom_blur": partial(algorithms.zoom_blur, trim="top_left"),
        "snow": partial(algorithms.snow, trim="top_left", quantize_layer=False),
        "frost": algorithms.frost,
        "fog": algorithms.fog,
        "brightness": partial(algorithms.brightness, rounding="truncate"),
        "contrast": partial(algorithms.contrast, rounding="truncate"),
        "elastic_transform": algorithms.elastic_imagenet_c,
        "pixelate": algorithms.pixelate_imagenet_c,
        "jpeg_compression": algorithms.jpeg_imagenet_c,
        "speckle_noise": partial(algorithms.normal_noise, multiplicative=True, rounding="truncate"),
        "gaussian_blur": algorithms.gaussian_blur,
    },
    "vrb": {
        **_SHARED,
        "shot_noise": algorithms.shot_noise_vrb,
        "gaussian_noise": partial(algorithms.normal_noise, multiplicative=False, rounding="round"),
        "speckle_noise": partial(algorithms.normal_noise, multiplicative=True, rounding="round"),
        "zoom_blur": partial(algorithms.zoom_blur, trim="center"),
        "snow": partial(algorithms.snow, trim="center", quantize_layer=True),
        "brightness": partial(algorithms.brightness, rounding="round"),
        "contrast": partial(algorithms.contrast, rounding="round"),
        "elastic_transform": algorithms.elastic_vrb,
        "pixelate": algorithms.pixelate_vrb,
        "jpeg_compression": algorithms.jpeg_vrb,
    },
}

# ``vrb`` plus the official pipeline's artefacts: its JPEG step and grey on RGB data taken as BGR.
_REGISTRY["vrb_official"] = {
    **_REGISTRY["vrb"],
    "jpeg_compression": algorithms.jpeg_vrb_official,
    "grayscale": partial(algorithms.grayscale, official=True),
    "grayscale_inverse": partial(algorithms.grayscale, official=True, inverse=True),
}
SAVED_AS_JPEG: frozenset[str] = frozenset({"vrb_official"})
"""Profiles whose results are passed through the official pipeline's quality-95 OpenCV JPEG file."""

# Float results to uint8: imagecorruptions' np.uint8 truncates, the VRB generator's cv2.imwrite rounds.
_ROUNDING = {"imagenet_c": "truncate", "vrb": "round", "vrb_official": "round"}


def corruption_names(profile: str = "vrb") -> list[str]:
    """The corruptions a profile defines, in its table order."""
    _check_profile(profile)
    return list(SEVERITY_TABLES[profile])


def _check_profile(profile: str) -> None:
    if profile not in PROFILES:
        raise ValueError(f"unknown corruption profile {profile!r}; expected one of {list(PROFILES)}")


def check_request(name: str, severity: int, profile: str) -> None:
    """Raise a ValueError naming the problem for an unknown profile or name, or a severity outside 1..5."""
    _check_profile(profile)
    if name not in SEVERITY_TABLES[profile]:
        raise ValueError(
            f"unknown corruption {name!r} for profile {profile!r}; "
            f"expected one of {corruption_names(profile)}"
        )
    if isinstance(severity, bool) or not isinstance(severity, int | np.integer) or not 1 <= severity <= 5:
        raise ValueError(f"severity must be an integer from 1 to 5, got {severity!r}")


MAX_SEED = 2**128 - 1
"""Largest seed: per-image seeds hash the run seed as 16 bytes."""


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be a non-negative integer below 2**128, got {seed!r}")
    return int(seed)


def to_rgb_image(image: Any) -> Any:
    """A PIL image as 8-bit RGB, ``I;16*``/``I`` in 0..65535 and ``F`` in [0, 1] scaled (PIL's ``convert``
    clips them: a 16-bit photo turns white); other ``I``/``F`` images refused with a ValueError."""
    from PIL import Image

    mode = image.mode
    if mode == "I" or mode.startswith("I;"):
        values = np.asarray(image).astype(np.int64)
        low, high = (int(values.min()), int(values.max())) if values.size else (0, 0)
        if low < 0 or high > 65535:
            raise ValueError(
                f"{mode!r} image with values {low}..{high}: only 16-bit ranges (0..65535) can be scaled to "
                "8 bits; convert the image to 8-bit RGB first"
            )
        grey = ((values + 128) // 257).astype(np.uint8)  # round(v / 257), no ties possible
    elif mode == "F":
        values = np.asarray(image, dtype=np.float64)
        finite = bool(np.isfinite(values).all())
        low, high = (float(values.min()), float(values.max())) if values.size and finite else (0.0, 0.0)
        if not finite or low < 0.0 or high > 1.0:
            shown = f"{low:g}..{high:g}" if finite else "NaN or infinite values"
            raise ValueError(
                f"float ('F') image with {shown}: float images must lie in [0, 1]; "
                "convert the image to 8-bit RGB first"
            )
        grey = np.rint(values * 255.0).astype(np.uint8)
    else:
        return image.convert("RGB")
    return Image.fromarray(np.repeat(grey[..., None], 3, axis=2))


def as_rgb_uint8(image: Any) -> np.ndarray:
    """A contiguous HxWx3 uint8 RGB array from a PIL image (``to_rgb_image``) or a uint8 array (HxW, HxWx1,
    HxWx3, HxWx4: grey repeated on three channels, alpha dropped)."""
    if hasattr(image, "convert") and hasattr(image, "mode"):
        image = np.asarray(to_rgb_image(image))
    if not isinstance(image, np.ndarray):
        raise TypeError(f"image must be a PIL image or a numpy array, got {type(image).__name__}")
    if image.dtype != np.uint8:
        raise TypeError(f"image array must have dtype uint8 (values 0..255), got {image.dtype}")
    if image.ndim == 2:
        image = image[..., None]
    if image.ndim != 3 or image.shape[2] not in (1, 3, 4):
        raise ValueError(f"image must be HxW, HxWx1, HxWx3 or HxWx4, got shape {image.shape}")
    if image.shape[0] < MIN_SIDE or image.shape[1] < MIN_SIDE:
        raise ValueError(
            f"image is {image.shape[0]}x{image.shape[1]}; height and width must be >= {MIN_SIDE}"
        )
    if image.shape[2] == 1:
        image = np.repeat(image, 3, axis=2)
    elif image.shape[2] == 4:
        image = image[..., :3]
    return np.ascontiguousarray(image)


def make_generator(seed: int, name: str, severity: int) -> np.random.Generator:
    """The PCG64 generator for one (seed, corruption, severity); the profile is deliberately not mixed in,
    so corruptions defined identically in several profiles draw identical noise."""
    name_key = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng(np.random.SeedSequence([_check_seed(seed), name_key, int(severity)]))


MAX_PIXELS_ENV = "LMMS_EVAL_TASKS_CORRUPT_MAX_PIXELS"
DEFAULT_MAX_PIXELS = 4096 * 4096
"""Largest image (height x width) corrupted unless raised: peak memory is up to ~27x the RGB array."""


def max_pixels_limit(max_pixels: int | None = None) -> int:
    """The pixel limit in force: ``max_pixels`` if given, else ``$LMMS_EVAL_TASKS_CORRUPT_MAX_PIXELS``, else
    ``DEFAULT_MAX_PIXELS``; 0 means no limit."""
    source, limit = "max_pixels", max_pixels
    if max_pixels is None:
        source, text = MAX_PIXELS_ENV, environment.text(MAX_PIXELS_ENV)
        limit = DEFAULT_MAX_PIXELS if not text else int(text) if text.isdigit() else text
    if isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 0:
        raise ValueError(f"{source}={limit!r}: expected a non-negative integer (0 = no limit)")
    return int(limit)


def _image_size(image: Any) -> tuple[int, int] | None:
    if hasattr(image, "convert") and hasattr(image, "size"):
        width, height = image.size
        return int(height), int(width)
    if isinstance(image, np.ndarray) and image.ndim >= 2:
        return int(image.shape[0]), int(image.shape[1])
    return None


def check_size(image: Any, max_pixels: int | None = None) -> None:
    """Refuse, with a ValueError naming the size, the limit and how to raise it, an image above the limit."""
    limit = max_pixels_limit(max_pixels)
    size = _image_size(image)
    if not limit or size is None or size[0] * size[1] <= limit:
        return
    height, width = size
    raise ValueError(
        f"image is {height}x{width} = {height * width:,} pixels, above the corruption limit of {limit:,} "
        f"(peak memory up to ~27x the image array); raise it with corrupt(..., max_pixels=N) or "
        f"{MAX_PIXELS_ENV}=N (0 = no limit), or downscale the image"
    )


def corrupt(
    image: Any, name: str, severity: int, *, seed: int, profile: str = "vrb", max_pixels: int | None = None
) -> np.ndarray:
    """Corrupt one image (uint8 RGB or PIL in, uint8 RGB out, of the input's size except ``vrb`` pixelate),
    deterministically; images above ``max_pixels`` (default ``max_pixels_limit()``) refused."""
    out = _corrupted(image, name, severity, seed, profile, max_pixels)
    return algorithms.official_save_reload(out) if profile in SAVED_AS_JPEG else out


def saved_file(
    image: Any, name: str, severity: int, *, seed: int, profile: str, max_pixels: int | None = None
) -> bytes:
    """The quality-95 JPEG file the official pipeline saves (profiles in ``SAVED_AS_JPEG``): its pixels."""
    if profile not in SAVED_AS_JPEG:
        raise ValueError(f"profile {profile!r} saves no file; profiles that do: {sorted(SAVED_AS_JPEG)}")
    return algorithms.official_save_bytes(_corrupted(image, name, severity, seed, profile, max_pixels))


def _corrupted(
    image: Any, name: str, severity: int, seed: int, profile: str, max_pixels: int | None
) -> np.ndarray:
    """The corruption as uint8 RGB, before any storage step of the profile."""
    check_request(name, severity, profile)
    seed = _check_seed(seed)
    check_size(image, max_pixels)
    pixels = as_rgb_uint8(image)
    parameters = SEVERITY_TABLES[profile][name][int(severity) - 1]
    noise = FastNoise(make_generator(seed, name, int(severity)))
    return quantize(_REGISTRY[profile][name](pixels, parameters, noise), profile)


def quantize(out: np.ndarray, profile: str) -> np.ndarray:
    """Float results in [0, 255] to uint8 the profile's way; uint8 results pass through."""
    if out.dtype == np.uint8:
        return np.ascontiguousarray(out)
    if _ROUNDING[profile] == "round":
        out = np.asarray(out, dtype=np.float32)  # the generator's np.float32(...) before cv2.imwrite rounds
        if out.ndim == 3 and out.shape[2] <= 4:
            import cv2

            return cv2.convertScaleAbs(out)  # saturating, round half to even, one pass
        out = np.rint(out)
    return np.clip(out, 0, 255).astype(np.uint8)


def implementation(profile: str, name: str) -> Corruption:
    """The raw algorithm (image, severity row, noise source) -> float or uint8 image, for tests and tools."""
    _check_profile(profile)
    return _REGISTRY[profile][name]
