"""Building blocks shared by the profiles: noise source, filters, zooms, motion blur, textures (float32, or
float64 when a test replays reference noise); OpenCV and SciPy imported lazily to keep the import cheap."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np


def cv2_module() -> Any:
    """OpenCV, imported on first use (it is heavy)."""
    import cv2

    return cv2


class FastNoise:
    """Random draws for the corruptions from a seeded ``numpy.random.Generator`` (float32 for speed); tests
    swap in the same four methods over ``numpy.random.RandomState`` to replay the reference's draws."""

    dtype = np.float32

    def __init__(self, generator: np.random.Generator) -> None:
        self.generator = generator

    def normal(self, loc: float, scale: float, size: tuple[int, ...]) -> np.ndarray:
        values = self.generator.standard_normal(size, dtype=np.float32)
        values *= np.float32(scale)
        values += np.float32(loc)
        return values

    def uniform(self, low: float, high: float, size: tuple[int, ...] | None = None) -> Any:
        if size is None:
            return float(self.generator.uniform(low, high))
        values = self.generator.random(size, dtype=np.float32)
        values *= np.float32(high - low)
        values += np.float32(low)
        return values

    def random(self, size: tuple[int, ...]) -> np.ndarray:
        return self.generator.random(size, dtype=np.float32)

    def integers(self, low: int, high: int, size: tuple[int, ...]) -> np.ndarray:
        """Integers in [low, high), like ``RandomState.randint``."""
        dtype = np.int8 if -128 <= low and high <= 128 else np.int32
        return self.generator.integers(low, high, size=size, dtype=dtype)


_BORDERS = {
    "nearest": "BORDER_REPLICATE",
    "reflect": "BORDER_REFLECT",
    "mirror": "BORDER_REFLECT_101",
    "constant": "BORDER_CONSTANT",
}
_LARGE_RADIUS = 48


def gaussian_filter(
    image: np.ndarray, sigma: float | tuple[float, float], mode: str = "nearest", truncate: float = 4.0
) -> np.ndarray:
    """Gaussian blur over the two spatial axes as ``scipy.ndimage.gaussian_filter`` (its radius, its mode
    names); ``sigma`` scalar or (rows, cols). Large reflect-mode radii on 2-D arrays go through the DCT."""
    cv2 = cv2_module()
    sigma_rows, sigma_cols = (sigma, sigma) if np.isscalar(sigma) else sigma
    radius_rows = int(truncate * float(sigma_rows) + 0.5)
    radius_cols = int(truncate * float(sigma_cols) + 0.5)
    if max(radius_rows, radius_cols) > _LARGE_RADIUS and image.ndim == 2 and mode == "reflect":
        return _gaussian_large(image, (float(sigma_rows), float(sigma_cols)), (radius_rows, radius_cols))
    return cv2.GaussianBlur(
        image,
        (2 * radius_cols + 1, 2 * radius_rows + 1),
        sigmaX=float(sigma_cols),
        sigmaY=float(sigma_rows),
        borderType=getattr(cv2, _BORDERS[mode]),
    )


@lru_cache(maxsize=16)
def _reflect_response(length: int, sigma: float, radius: int) -> np.ndarray:
    """The reflect-mode Gaussian on an axis of ``length`` is diagonal in the orthonormal DCT-II basis (its
    half-sample symmetric extension is periodic in ``2 * length``): its eigenvalues, one per frequency."""
    offsets = np.arange(-radius, radius + 1, dtype=np.float64)
    kernel = np.exp(-0.5 * (offsets / sigma) ** 2)
    folded = np.bincount(np.arange(-radius, radius + 1) % (2 * length), kernel / kernel.sum(), 2 * length)
    response = np.fft.rfft(folded).real[:length]
    response.setflags(write=False)
    return response


def _gaussian_large(image: np.ndarray, sigma: tuple[float, float], radius: tuple[int, int]) -> np.ndarray:
    """Reflect-mode Gaussian of a large radius on a 2-D array through the DCT (twice as fast as BLAS)."""
    from scipy import fft

    spectrum = fft.dctn(image, type=2, norm="ortho")
    spectrum *= _reflect_response(image.shape[0], sigma[0], radius[0]).astype(image.dtype)[:, None]
    spectrum *= _reflect_response(image.shape[1], sigma[1], radius[1]).astype(image.dtype)[None, :]
    return fft.idctn(spectrum, type=2, norm="ortho")


@lru_cache(maxsize=32)
def disk_kernel(radius: int, alias_blur: float) -> np.ndarray:
    """ImageNet-C's defocus kernel: a normalised aliased disk, slightly Gaussian-blurred to antialias."""
    cv2 = cv2_module()
    half = 8 if radius <= 8 else radius
    ksize = (3, 3) if radius <= 8 else (5, 5)
    offsets = np.arange(-half, half + 1)
    cols, rows = np.meshgrid(offsets, offsets)
    aliased = np.asarray(cols**2 + rows**2 <= radius**2, dtype=np.float32)
    aliased /= np.sum(aliased)
    kernel = cv2.GaussianBlur(aliased, ksize=ksize, sigmaX=alias_blur)
    kernel.setflags(write=False)
    return kernel


def _zoom_geometry(shape: tuple[int, ...], zoom: float, out_shape: tuple[int, int], trim: str) -> tuple:
    """Source origin and step per axis of ImageNet-C's ``clipped_zoom`` for the kept output window."""
    height, width = shape[:2]
    crop_rows = int(np.ceil(height / float(zoom)))
    crop_cols = int(np.ceil(width / float(zoom)))
    zoomed_rows = int(round(crop_rows * zoom))
    zoomed_cols = int(round(crop_cols * zoom))
    if trim == "center":
        first_row = (zoomed_rows - out_shape[0]) // 2
        first_col = (zoomed_cols - out_shape[1]) // 2
    else:
        first_row = first_col = 0
    step_rows = (crop_rows - 1) / (zoomed_rows - 1) if zoomed_rows > 1 else 0.0
    step_cols = (crop_cols - 1) / (zoomed_cols - 1) if zoomed_cols > 1 else 0.0
    top = (height - crop_rows) // 2 + first_row * step_rows
    left = (width - crop_cols) // 2 + first_col * step_cols
    return top, step_rows, left, step_cols


def zoom_layer(image: np.ndarray, zoom: float, out_shape: tuple[int, int], trim: str) -> np.ndarray:
    """ImageNet-C's ``clipped_zoom`` (a centre crop enlarged as ``scipy.ndimage.zoom(order=1)``), kept from
    the top left or (``trim="center"``) the centre; ``cv2.warpAffine`` samples on a 1/32 pixel grid."""
    cv2 = cv2_module()
    top, step_rows, left, step_cols = _zoom_geometry(image.shape, zoom, out_shape, trim)
    matrix = np.array([[step_cols, 0.0, left], [0.0, step_rows, top]], dtype=np.float64)
    return cv2.warpAffine(
        image,
        matrix,
        (out_shape[1], out_shape[0]),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )


def _linear_axis(
    length: int, start: float, step: float, count: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    positions = start + np.arange(count, dtype=np.float64) * step
    lower = np.clip(np.floor(positions).astype(np.int64), 0, length - 1)
    fraction = positions - lower
    upper = np.minimum(lower + 1, length - 1)
    return lower, upper, fraction


def zoom_layer_exact(image: np.ndarray, zoom: float, out_shape: tuple[int, int], trim: str) -> np.ndarray:
    """``zoom_layer`` for a 2-D array with exact bilinear weights (thresholded layers need them)."""
    top, step_rows, left, step_cols = _zoom_geometry(image.shape, zoom, out_shape, trim)
    lower, upper, fraction = _linear_axis(image.shape[0], top, step_rows, out_shape[0])
    fraction = fraction.astype(image.dtype)[:, None]
    rows = image[lower] * (1 - fraction) + image[upper] * fraction
    lower, upper, fraction = _linear_axis(image.shape[1], left, step_cols, out_shape[1])
    fraction = fraction.astype(image.dtype)[None, :]
    return rows[:, lower] * (1 - fraction) + rows[:, upper] * fraction


def zoomed_shape(shape: tuple[int, int], zoom: float) -> tuple[int, int]:
    """Shape of ``scipy.ndimage.zoom`` applied to the centre crop of ``clipped_zoom``."""
    return tuple(int(round(int(np.ceil(side / zoom)) * zoom)) for side in shape[:2])


def motion_taps(
    radius: int, sigma: float, angle: float, shape: tuple[int, int]
) -> list[tuple[int, int, float]]:
    """ImageMagick-style motion blur taps ``(row shift, col shift, weight)`` as ImageNet-C computes them:
    one-sided Gaussian weights, not renormalised when taps stop where a shift leaves the image."""
    width = 2 * radius + 1
    weights = np.exp(-(np.arange(width, dtype=np.float64) ** 2) / (2 * sigma**2)) / (
        np.sqrt(2 * np.pi) * sigma
    )
    weights /= weights.sum()
    point_rows = width * np.sin(np.deg2rad(angle))
    point_cols = width * np.cos(np.deg2rad(angle))
    hypot = math.hypot(point_rows, point_cols)
    taps = []
    for index in range(width):
        shift_rows = -math.ceil((index * point_rows) / hypot - 0.5)
        shift_cols = -math.ceil((index * point_cols) / hypot - 0.5)
        if abs(shift_rows) >= shape[0] or abs(shift_cols) >= shape[1]:
            break
        taps.append((shift_rows, shift_cols, float(weights[index])))
    return taps


def motion_blur(image: np.ndarray, taps: list[tuple[int, int, float]]) -> np.ndarray:
    """Weighted sum of edge-replicated shifts: output(y, x) = sum w * image(clamp(y - dy), clamp(x - dx))."""
    cv2 = cv2_module()
    height, width = image.shape[:2]
    pad_rows = max(abs(tap[0]) for tap in taps)
    pad_cols = max(abs(tap[1]) for tap in taps)
    padded = cv2.copyMakeBorder(image, pad_rows, pad_rows, pad_cols, pad_cols, cv2.BORDER_REPLICATE)
    total = np.zeros(image.shape, dtype=image.dtype)
    for shift_rows, shift_cols, weight in taps:
        top = pad_rows - shift_rows
        left = pad_cols - shift_cols
        window = padded[top : top + height, left : left + width]
        total = cv2.scaleAdd(window, weight, total)
    return total


def plasma_fractal(map_size: int, wibble_decay: float, noise: Any) -> np.ndarray:
    """Diamond-square height map in [0, 1] (ImageNet-C fog), drawn in the reference's order (squares, then the
    two diamond sets, per level) so replaying its noise reproduces its map; ``map_size`` a power of two."""
    if map_size & (map_size - 1):
        raise ValueError(f"plasma map size must be a power of two, got {map_size}")
    heights = np.empty((map_size, map_size), dtype=getattr(noise, "dtype", np.float32))
    heights[0, 0] = 0
    step = map_size
    wibble = 100.0

    def wibbled_mean(total: np.ndarray) -> np.ndarray:
        return total / 4 + wibble * noise.uniform(-wibble, wibble, total.shape)

    while step >= 2:
        half = step // 2
        corners = heights[0:map_size:step, 0:map_size:step]
        square_sum = corners + np.roll(corners, shift=-1, axis=0)
        square_sum += np.roll(square_sum, shift=-1, axis=1)
        heights[half:map_size:step, half:map_size:step] = wibbled_mean(square_sum)
        centres = heights[half:map_size:step, half:map_size:step]
        corners = heights[0:map_size:step, 0:map_size:step]
        left_sum = centres + np.roll(centres, 1, axis=0) + corners + np.roll(corners, -1, axis=1)
        heights[0:map_size:step, half:map_size:step] = wibbled_mean(left_sum)
        top_sum = centres + np.roll(centres, 1, axis=1) + corners + np.roll(corners, -1, axis=0)
        heights[half:map_size:step, 0:map_size:step] = wibbled_mean(top_sum)
        step //= 2
        wibble /= wibble_decay
    heights -= heights.min()
    return heights / heights.max()


def next_power_of_two(value: int) -> int:
    return 1 if value == 0 else 2 ** (value - 1).bit_length()


def to_four_channels(image: np.ndarray) -> np.ndarray:
    """RGB -> RGB plus a zero channel: OpenCV warps and remaps four-channel float images 2-3 times faster."""
    if image.dtype == np.float32:
        return cv2_module().cvtColor(image, cv2_module().COLOR_RGB2RGBA)
    return np.concatenate([image, np.zeros(image.shape[:2] + (1,), image.dtype)], axis=2)


def from_four_channels(image: np.ndarray) -> np.ndarray:
    if image.dtype == np.float32:
        return cv2_module().cvtColor(image, cv2_module().COLOR_RGBA2RGB)
    return np.ascontiguousarray(image[..., :3])
