"""Severity tables as plain data: one row of parameters per severity 1..5, per profile and corruption (the
profiles ``vrb``, ``vrb_official`` and ``imagenet_c`` are described in docs/corruptions.md)."""

from __future__ import annotations

from typing import Any

PROFILES: tuple[str, ...] = ("vrb", "imagenet_c", "vrb_official")

# Parameters shared by both profiles (the official VRB generator copied them from ImageNet-C).
_GAUSSIAN_NOISE = (0.08, 0.12, 0.18, 0.26, 0.38)  # sigma of N(0, sigma) added to x in [0, 1]
_IMPULSE_NOISE = (0.03, 0.06, 0.09, 0.17, 0.27)  # salt-and-pepper amount, salt_vs_pepper = 0.5
_SPECKLE_NOISE = (0.15, 0.20, 0.35, 0.45, 0.60)  # sigma of x * N(0, sigma) added to x
_DEFOCUS_BLUR = ((3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5))  # (disk radius, alias blur sigma)
_GLASS_BLUR = (
    (0.7, 1, 2),
    (0.9, 2, 1),
    (1.0, 2, 3),
    (1.1, 3, 2),
    (1.5, 4, 2),
)  # (sigma, max delta, iterations)
# Zoom factors as numpy.arange(start, stop, step) arguments.
_ZOOM_BLUR = ((1.0, 1.11, 0.01), (1.0, 1.16, 0.01), (1.0, 1.21, 0.02), (1.0, 1.26, 0.02), (1.0, 1.31, 0.03))
# (mean, std, zoom, threshold, motion radius, motion sigma, blend) of the snow layer.
_SNOW = (
    (0.1, 0.3, 3.0, 0.5, 10, 4, 0.8),
    (0.2, 0.3, 2.0, 0.5, 12, 4, 0.7),
    (0.55, 0.3, 4.0, 0.9, 12, 8, 0.7),
    (0.55, 0.3, 4.5, 0.85, 12, 8, 0.65),
    (0.55, 0.3, 2.5, 0.85, 12, 12, 0.55),
)
_BRIGHTNESS = (0.1, 0.2, 0.3, 0.4, 0.5)  # added to the HSV value channel
_CONTRAST = (0.4, 0.3, 0.2, 0.1, 0.05)  # (x - mean) * c + mean
_SATURATE = ((0.3, 0.0), (0.1, 0.0), (2.0, 0.0), (5.0, 0.1), (20.0, 0.2))  # S * c0 + c1 in HSV
_JPEG_QUALITY = (25, 18, 15, 10, 7)
# (mean, std, blur sigma, threshold, intensity or mud blur sigma, mode: 0 water, 1 mud) of the liquid layer.
_SPATTER = (
    (0.65, 0.3, 4, 0.69, 0.6, 0),
    (0.65, 0.3, 3, 0.68, 0.6, 0),
    (0.65, 0.3, 2, 0.68, 0.5, 0),
    (0.65, 0.3, 1, 0.65, 1.5, 1),
    (0.67, 0.4, 1, 0.65, 1.5, 1),
)
_NO_PARAMETER = (None, None, None, None, None)

# The taxonomy's extras: their output does not depend on the severity (documented, accepted at 1..5).
SEVERITY_INDEPENDENT: frozenset[str] = frozenset({"grayscale", "grayscale_inverse", "color_inversion"})

SEVERITY_TABLES: dict[str, dict[str, tuple[Any, ...]]] = {
    "vrb": {
        # Official code: clip(x + poisson(lam=c)), so any non-zero count saturates the channel.
        "shot_noise": (0.08, 0.2, 0.5, 0.8, 1.2),
        "gaussian_noise": _GAUSSIAN_NOISE,
        "impulse_noise": _IMPULSE_NOISE,
        "speckle_noise": _SPECKLE_NOISE,
        "defocus_blur": _DEFOCUS_BLUR,
        "zoom_blur": _ZOOM_BLUR,
        "snow": _SNOW,
        "brightness": _BRIGHTNESS,
        "contrast": _CONTRAST,
        "saturate": _SATURATE,
        # Hendrycks' original elastic (alpha, sigma, affine) with 244 where 224 was meant (sic, as official).
        "elastic_transform": (
            (244 * 2, 244 * 0.7, 244 * 0.1),
            (244 * 2, 244 * 0.08, 244 * 0.2),
            (244 * 0.05, 244 * 0.01, 244 * 0.02),
            (244 * 0.07, 244 * 0.01, 244 * 0.02),
            (244 * 0.12, 244 * 0.01, 244 * 0.02),
        ),
        "spatter": _SPATTER,
        # Official code only downsizes (INTER_AREA): the output is smaller than the input.
        "pixelate": (0.6, 0.5, 0.4, 0.3, 0.15),
        "jpeg_compression": _JPEG_QUALITY,
        # In the official generator but not among the paper's 14.
        "glass_blur": _GLASS_BLUR,
        "grayscale": _NO_PARAMETER,
        "grayscale_inverse": _NO_PARAMETER,
        "color_inversion": _NO_PARAMETER,
    },
    "imagenet_c": {
        "gaussian_noise": _GAUSSIAN_NOISE,
        "shot_noise": (60, 25, 12, 5, 3),  # poisson(x * c) / c
        "impulse_noise": _IMPULSE_NOISE,
        "defocus_blur": _DEFOCUS_BLUR,
        "glass_blur": _GLASS_BLUR,
        "motion_blur": ((10, 3), (15, 5), (15, 8), (15, 12), (20, 15)),  # (radius, sigma), angle ~ U(-45, 45)
        "zoom_blur": _ZOOM_BLUR,
        "snow": _SNOW,
        "frost": ((1.0, 0.4), (0.8, 0.6), (0.7, 0.7), (0.65, 0.7), (0.6, 0.75)),  # image, frost weights
        "fog": ((1.5, 2.0), (2.0, 2.0), (2.5, 1.7), (2.5, 1.5), (3.0, 1.4)),  # (strength, wibble decay)
        "brightness": _BRIGHTNESS,
        "contrast": _CONTRAST,
        # imagecorruptions 1.1.2's size-relative elastic: alpha; sigma = 1% of each side, max shift 0.5%.
        "elastic_transform": (250 * 0.05, 250 * 0.065, 250 * 0.085, 250 * 0.1, 250 * 0.12),
        "pixelate": (0.6, 0.5, 0.4, 0.3, 0.25),  # box down, nearest back up
        "jpeg_compression": _JPEG_QUALITY,
        "speckle_noise": _SPECKLE_NOISE,
        "gaussian_blur": (1, 2, 3, 4, 6),  # sigma
        "spatter": _SPATTER,
        "saturate": _SATURATE,
        "grayscale": _NO_PARAMETER,
        "grayscale_inverse": _NO_PARAMETER,
        "color_inversion": _NO_PARAMETER,
    },
}

# Same definitions and tables as ``vrb``; only the pipeline's storage artefacts differ (engine.py).
SEVERITY_TABLES["vrb_official"] = dict(SEVERITY_TABLES["vrb"])

# The 14 corruptions of the VRB paper, in its order (the `vrb` profile adds glass blur and the extras).
VRB_PAPER_CORRUPTIONS: tuple[str, ...] = tuple(
    name for name in SEVERITY_TABLES["vrb"] if name != "glass_blur" and name not in SEVERITY_INDEPENDENT
)
# The 15 ImageNet-C benchmark corruptions followed by its 4 validation ones (imagecorruptions' order).
IMAGENET_C_CORRUPTIONS: tuple[str, ...] = tuple(
    name for name in SEVERITY_TABLES["imagenet_c"] if name not in SEVERITY_INDEPENDENT
)

CATEGORIES: dict[str, str] = {
    name: category
    for category, names in {
        "noise": ("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"),
        "blur": ("defocus_blur", "glass_blur", "motion_blur", "zoom_blur", "gaussian_blur"),
        "weather": ("snow", "frost", "fog"),
        "attribute": ("brightness", "contrast", "saturate"),
        "physical": ("elastic_transform", "spatter"),
        "digital": ("pixelate", "jpeg_compression"),
        "color": ("grayscale", "grayscale_inverse", "color_inversion"),
    }.items()
    for name in names
}


def severity_parameters(profile: str, name: str, severity: int) -> Any:
    """The table row for one (profile, corruption, severity), for recording next to results."""
    return SEVERITY_TABLES[profile][name][severity - 1]
