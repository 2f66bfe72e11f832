"""The corruptions: (RGB uint8 image, severity row, noise source) -> a float image in [0, 255], quantised by
the caller, or a final uint8 one; profile differences are keyword arguments that ``engine.py`` binds."""

from __future__ import annotations

import io
from functools import lru_cache
from typing import Any

import numpy as np

from lmms_eval_tasks.corruptions import primitives
from lmms_eval_tasks.corruptions.primitives import cv2_module

_INV255 = 1.0 / 255.0


def _float(image: np.ndarray, noise: Any) -> np.ndarray:
    return image.astype(getattr(noise, "dtype", np.float32))


def impulse_noise(image: np.ndarray, amount: float, noise: Any) -> np.ndarray:
    """Salt and pepper (scikit-image ``s&p``): each value flips with probability ``amount``, to salt (255) or
    pepper (0) with equal odds; one uniform draw decides both."""
    draw = noise.random(image.shape)
    out = image.copy()
    out[draw < amount] = 0
    out[draw < amount * 0.5] = 255
    return out


_GUIDE_BITS = 12
_AMBIGUOUS = 0x8000


def _guide_tables(cdf: np.ndarray, outcomes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tables to sample, per grey level v, the outcome distribution ``cdf[v]`` (256 x n): ``guide[v, bucket]``
    (2^12 buckets) is each draw's outcome, or (flagged 0x8000) the first candidate if a CDF step is inside."""
    size = 1 << _GUIDE_BITS
    lower = np.arange(size, dtype=np.float64) / size
    upper = np.arange(1, size + 1, dtype=np.float64) / size
    steps = cdf[:, :-1]  # the last outcome takes whatever is left
    first = np.stack([np.searchsorted(row, lower, side="right") for row in steps])
    last = np.stack([np.searchsorted(row, upper, side="left") for row in steps])
    guide = np.where(first == last, first, first | _AMBIGUOUS).astype(np.uint16)
    bounds = np.concatenate([steps, np.full((256, 1), np.inf)], axis=1)
    for table in (bounds, guide, outcomes):
        table.setflags(write=False)
    return bounds.ravel(), guide.ravel(), outcomes


def _sample_levels(
    image: np.ndarray, tables: tuple[np.ndarray, np.ndarray, np.ndarray], noise: Any
) -> np.ndarray:
    """Draw each value's outcome from its grey level's distribution: one uniform draw per value."""
    bounds, guide, outcomes = tables
    width = bounds.size // 256
    draw = noise.random(image.shape).ravel()
    index = image.ravel().astype(np.uint32) << _GUIDE_BITS
    index |= (draw * np.float32(1 << _GUIDE_BITS)).astype(np.uint32)
    found = np.take(guide, index)
    pending = np.flatnonzero(found >= _AMBIGUOUS)
    if pending.size:
        rows = (index[pending] >> _GUIDE_BITS).astype(np.int64) * width
        chosen = (found[pending] & (_AMBIGUOUS - 1)).astype(np.int64)
        active = np.flatnonzero(draw[pending] >= bounds[rows + chosen])
        while active.size:
            chosen[active] += 1
            active = active[draw[pending[active]] >= bounds[rows[active] + chosen[active]]]
        found[pending] = chosen
    return np.take(outcomes, found).reshape(image.shape)


@lru_cache(maxsize=32)
def _additive_normal_tables(sigma: float, multiplicative: bool, rounding: str) -> tuple:
    """Output distribution of ``quantise(clip(v + s * z, 0, 255))``, z ~ N(0, 1), per grey level v, with
    ``s = 255 sigma`` (gaussian noise) or ``v sigma`` (speckle); outcome k's upper edge k + 1 or k + 0.5."""
    from scipy.special import ndtr

    levels = np.arange(256, dtype=np.float64)[:, None]
    edges = np.arange(256, dtype=np.float64)[None, :] + (1.0 if rounding == "truncate" else 0.5)
    scale = levels * sigma if multiplicative else np.full_like(levels, 255.0 * sigma)
    with np.errstate(divide="ignore", invalid="ignore"):
        standardised = np.where(scale > 0, (edges - levels) / np.where(scale > 0, scale, 1), np.inf)
    cdf = np.where(scale > 0, ndtr(standardised), (edges > levels).astype(np.float64))
    cdf[:, -1] = 1.0
    return _guide_tables(cdf, np.arange(256, dtype=np.uint8))


@lru_cache(maxsize=8)
def _poisson_tables(scale: int) -> tuple:
    """Output distribution of ImageNet-C shot noise ``uint8(clip(poisson(v / 255 * c) / c, 0, 1) * 255)``."""
    lam = (np.arange(256, dtype=np.float64) / 255.0) * scale
    pmf = np.empty((256, scale + 1), dtype=np.float64)
    pmf[:, 0] = np.exp(-lam)
    for count in range(1, scale + 1):
        pmf[:, count] = pmf[:, count - 1] * lam / count
    cdf = np.cumsum(pmf, axis=1)
    cdf[:, -1] = 1.0  # counts >= c all saturate to 255
    outcomes = (np.clip(np.arange(scale + 1, dtype=np.float64) / float(scale), 0, 1) * 255).astype(np.uint8)
    return _guide_tables(cdf, outcomes)


def shot_noise_imagenet_c(image: np.ndarray, scale: int, noise: Any) -> np.ndarray:
    """ImageNet-C shot noise ``poisson(x * c) / c``, sampled by table inversion (exact distribution)."""
    return _sample_levels(image, _poisson_tables(int(scale)), noise)


def normal_noise(image: np.ndarray, sigma: float, noise: Any, *, multiplicative: bool, rounding: str) -> Any:
    """Gaussian noise ``x + N(0, sigma)`` on [0, 1] or, ``multiplicative``, speckle ``x + x * N(0, sigma)``,
    clipped and quantised, drawn exactly by table inversion."""
    return _sample_levels(image, _additive_normal_tables(float(sigma), multiplicative, rounding), noise)


def shot_noise_vrb(image: np.ndarray, lam: float, noise: Any) -> np.ndarray:
    """VRB's additive shot noise ``clip(x + poisson(lam))``: any count >= 1 saturates the channel value."""
    draw = noise.random(image.shape)
    out = image.copy()
    out[draw < -np.expm1(-lam)] = 255
    return out


def defocus_blur(image: np.ndarray, params: tuple[int, float], noise: Any) -> np.ndarray:
    """Convolution with an antialiased disk (OpenCV's default reflect-101 border, as the reference)."""
    cv2 = cv2_module()
    radius, alias_blur = params
    kernel = primitives.disk_kernel(int(radius), float(alias_blur))
    dtype = getattr(noise, "dtype", np.float32)
    source = image if dtype == np.float32 else image.astype(dtype)  # uint8 in, float32 out is fastest
    out = cv2.filter2D(source, cv2.CV_32F if dtype == np.float32 else -1, kernel)
    return np.clip(out, 0, 255, out=out)


def gaussian_blur(image: np.ndarray, sigma: float, noise: Any) -> np.ndarray:
    """scikit-image ``gaussian(sigma)``: nearest border, truncate 4."""
    out = primitives.gaussian_filter(_float(image, noise), float(sigma), mode="nearest", truncate=4.0)
    return np.clip(out, 0, 255, out=out)


@lru_cache(maxsize=8)
def _glass_tables(height: int, width: int, delta: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat index of every visited position, and the flat step of every (dx, dy) int8 pair as a uint16."""
    rows = np.arange(delta + 1, height - delta + 1, dtype=np.int32)[:, None]
    base = rows * width + np.arange(delta + 1, width - delta + 1, dtype=np.int32)[None, :]
    pairs = np.arange(1 << 16, dtype=np.uint16)
    high, low = (pairs >> 8).astype(np.uint8).view(np.int8), (pairs & 0xFF).astype(np.uint8).view(np.int8)
    steps = high * np.int32(width) + low
    for table in (base, steps):
        table.setflags(write=False)
    return base, steps


def _glass_sources(height: int, width: int, delta: int, iterations: int, noise: Any) -> np.ndarray:
    """ImageNet-C glass blur's local shuffle: per flat position, the source pixel. The reference's "swap" on
    an HxWx3 array copies (in reverse raster order): pointer chains, followed at once by pointer doubling."""
    size = height * width
    identity = np.arange(size, dtype=np.int32).reshape(height, width)
    first, last_row, last_col = delta + 1, height - delta, width - delta
    region_rows, region_cols = last_row - first + 1, last_col - first + 1
    if region_rows <= 0 or region_cols <= 0:
        return identity.ravel()
    region = (slice(first, last_row + 1), slice(first, last_col + 1))
    base, steps = _glass_tables(height, width, delta)
    source_of, chained_of = identity.copy(), np.zeros((height, width), dtype=bool)
    edge = min(delta, region_rows, region_cols)
    mapping = None
    for _ in range(iterations):
        # Drawn in visiting order (rows and columns descending), read in ascending order.
        pairs = np.ascontiguousarray(noise.integers(-delta, delta, (region_rows * region_cols, 2)), np.int8)
        step = np.take(steps, pairs.view("<u2")[::-1, 0]).reshape(region_rows, region_cols)
        sources = step + base
        # A source later in raster order (inside the visited region) was visited earlier in this pass.
        chained = step > 0
        chained[-edge:] &= sources[-edge:] < (last_row + 1) * width
        chained[:, :edge] &= sources[:, :edge] % width >= first
        chained[:, -edge:] &= sources[:, -edge:] % width <= last_col
        source_of[region], chained_of[region] = sources, chained
        stop = np.where(chained_of, source_of, identity).ravel()  # to the chain's first unchained position
        while not np.array_equal(further := np.take(stop, stop), stop):
            stop = further
        resolved = np.take(source_of.ravel(), stop)
        mapping = resolved if mapping is None else np.take(mapping, resolved)
    return mapping


def glass_blur(image: np.ndarray, params: tuple[float, int, int], noise: Any) -> np.ndarray:
    """Gaussian blur, local pixel shuffle, Gaussian blur (ImageNet-C glass blur)."""
    sigma, delta, iterations = params
    height, width = image.shape[:2]
    blurred = primitives.gaussian_filter(_float(image, noise), float(sigma), mode="nearest", truncate=4.0)
    blurred = np.clip(blurred, 0, 255, out=blurred).astype(np.uint8)
    source = _glass_sources(height, width, int(delta), int(iterations), noise)
    shuffled = np.take(blurred.reshape(-1, 3), source, axis=0).reshape(image.shape)
    out = primitives.gaussian_filter(_float(shuffled, noise), float(sigma), mode="nearest", truncate=4.0)
    return np.clip(out, 0, 255, out=out)


def motion_blur(image: np.ndarray, params: tuple[int, float], noise: Any) -> np.ndarray:
    """Blur along a random direction in [-45, 45] degrees with ImageMagick-style one-sided taps."""
    radius, sigma = params
    angle = noise.uniform(-45, 45)
    taps = primitives.motion_taps(int(radius), float(sigma), angle, image.shape[:2])
    out = primitives.motion_blur(_float(image, noise), taps)
    return np.clip(out, 0, 255, out=out)


def zoom_blur(image: np.ndarray, params: tuple[float, float, float], noise: Any, *, trim: str) -> np.ndarray:
    """Average of the image and its centre zooms by the factors ``numpy.arange(*params)``."""
    cv2 = cv2_module()
    factors = np.arange(*params)
    height, width = image.shape[:2]
    source = _float(image, noise)  # three channels: OpenCV 5 warps them twice as fast as four
    total = source.copy()
    for factor in factors:
        cv2.accumulate(primitives.zoom_layer(source, float(factor), (height, width), trim), total)
    total *= 1.0 / (len(factors) + 1)
    return np.clip(total, 0, 255, out=total)


def snow(image: np.ndarray, params: tuple, noise: Any, *, trim: str, quantize_layer: bool) -> np.ndarray:
    """ImageNet-C snow: zoomed thresholded noise, motion blurred, added twice (flipped) to a paled image;
    ``trim`` as ``zoom_layer``, ``quantize_layer`` truncates it to 8 bits first (VRB's PNG round trip)."""
    mean, std, zoom, threshold, radius, sigma, blend = params
    height, width = image.shape[:2]
    layer = noise.normal(mean, std, (height, width))
    layer_shape = (
        primitives.zoomed_shape((height, width), float(zoom)) if trim == "top_left" else (height, width)
    )
    layer = primitives.zoom_layer_exact(layer, float(zoom), layer_shape, trim)
    layer[layer < threshold] = 0
    layer = np.clip(layer, 0, 1, out=layer)
    angle = noise.uniform(-135, -45)
    if quantize_layer:
        layer = (layer * 255).astype(np.uint8).astype(layer.dtype) * _INV255
    taps = primitives.motion_taps(int(radius), float(sigma), angle, layer.shape)
    layer = primitives.motion_blur(layer, taps)
    layer = (np.round(layer * 255) * _INV255).astype(layer.dtype)[:height, :width]
    cv2 = cv2_module()
    pixels = image.astype(np.float32)
    pixels *= np.float32(_INV255)
    lifted = cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY) * np.float32(1.5) + np.float32(0.5)
    paled = cv2.max(pixels, cv2.merge([lifted, lifted, lifted]))
    pixels *= np.float32(blend)
    paled *= np.float32(1 - blend)
    pixels += paled
    flakes = (layer + np.rot90(layer, k=2)).astype(np.float32)
    pixels += cv2.merge([flakes, flakes, flakes])
    np.clip(pixels, 0, 1, out=pixels)
    pixels *= np.float32(255)
    return pixels


def fog(image: np.ndarray, params: tuple[float, float], noise: Any) -> np.ndarray:
    """Plasma-fractal fog added to the image, then rescaled by max / (max + strength)."""
    strength, decay = params
    height, width = image.shape[:2]
    map_size = primitives.next_power_of_two(max(height, width, 3))
    pixels = _float(image, noise) * _INV255
    peak = pixels.max()
    pixels += strength * primitives.plasma_fractal(map_size, float(decay), noise)[:height, :width][..., None]
    return np.clip(pixels * (peak / (peak + strength)), 0, 1) * 255


def _value_noise(height: int, width: int, cell: int, noise: Any) -> np.ndarray:
    """Smooth random field in [0, 1]: a random grid of step ``cell`` pixels, cubic-interpolated."""
    cv2 = cv2_module()
    grid_rows, grid_cols = height // cell + 3, width // cell + 3
    grid = np.asarray(noise.random((grid_rows, grid_cols)), dtype=np.float32)
    big = cv2.resize(grid, (grid_cols * cell, grid_rows * cell), interpolation=cv2.INTER_CUBIC)
    top, left = (int(value) for value in noise.integers(0, cell, (2,)))
    return big[top : top + height, left : left + width]


def frost_texture(height: int, width: int, noise: Any) -> np.ndarray:
    """A procedural frost texture (float RGB in [0, 255]) for ImageNet-C's frost photos: needles along six
    directions over a hazy ice sheet and a fine grain, on a grey-blue to white ramp."""
    cv2 = cv2_module()
    half_rows, half_cols = (height + 1) // 2, (width + 1) // 2
    sheet = (
        4 * _value_noise(height, width, 64, noise)
        + 2 * _value_noise(height, width, 24, noise)
        + _value_noise(height, width, 8, noise)
    )
    sheet = (sheet - sheet.mean()) / (sheet.std() + 1e-6)

    seeds = np.asarray(noise.random((half_rows, half_cols)), dtype=np.float32)
    seeds = np.where(seeds < 0.06, seeds * np.float32(1 / 0.06), 0).astype(np.float32)
    orientation = _value_noise(half_rows, half_cols, 24, noise) * np.float32(2 * np.pi)
    needles = np.zeros((half_rows, half_cols), dtype=np.float32)
    padded = cv2.copyMakeBorder(seeds, 7, 7, 7, 7, cv2.BORDER_REFLECT)
    for index in range(6):
        angle = np.pi * index / 6
        # A 15-pixel needle through each seed: sum of shifted copies along the direction.
        response = np.zeros_like(seeds)
        for step in range(-7, 8):
            dx, dy = int(round(step * np.cos(angle))), int(round(step * np.sin(angle)))
            response = cv2.add(response, padded[7 + dy : 7 + dy + half_rows, 7 + dx : 7 + dx + half_cols])
        weight = np.clip(np.cos(2 * (orientation - np.float32(angle))), 0, 1)
        needles += weight * weight * weight * response
    needles = cv2.resize(needles, (width, height), interpolation=cv2.INTER_LINEAR)
    needles = np.clip(needles * np.float32(0.35), 0, 1.5)
    grain = cv2.GaussianBlur(np.asarray(noise.random((height, width)), dtype=np.float32), (3, 3), 0.7)

    level = np.clip(0.45 + 0.1 * sheet + 0.45 * needles + 0.4 * (grain - 0.5), 0, 1)
    dark = (40.0, 66.0, 84.0)
    light = (240.0, 246.0, 252.0)
    channels = [
        level * np.float32(high - low) + np.float32(low) for low, high in zip(dark, light, strict=True)
    ]
    return cv2.merge(channels)


def frost(image: np.ndarray, params: tuple[float, float], noise: Any) -> np.ndarray:
    """``clip(a * x + b * frost)`` with a procedural frost texture (see ``frost_texture``)."""
    image_weight, frost_weight = params
    height, width = image.shape[:2]
    texture = frost_texture(height, width, noise)
    out = np.float32(image_weight) * image.astype(np.float32) + np.float32(frost_weight) * texture
    return np.clip(out, 0, 255, out=out)


def _to_uint8(values: np.ndarray, rounding: str) -> np.ndarray:
    """Float levels to uint8; ``round`` as the VRB generator: a float32 cast, then half to even."""
    if rounding == "round":
        values = np.rint(np.asarray(values, dtype=np.float32))
    return np.clip(values, 0, 255).astype(np.uint8)


@lru_cache(maxsize=16)
def _brightness_table(add: float, rounding: str) -> np.ndarray:
    """Output level for (HSV value, channel level): channels scale by new_value / value; black turns grey."""
    value = np.arange(256, dtype=np.float64)[:, None]
    level = np.arange(256, dtype=np.float64)[None, :]
    new_value = np.minimum(value / 255.0 + add, 1.0) * 255.0
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(value > 0, level * new_value / np.maximum(value, 1), new_value)
    table = _to_uint8(scaled, rounding)
    table.setflags(write=False)
    return table.ravel()


def brightness(image: np.ndarray, add: float, noise: Any, *, rounding: str) -> np.ndarray:
    """HSV value + c (hue and saturation kept), as a table over (value, channel level)."""
    cv2 = cv2_module()
    red, green, blue = cv2.split(image)
    value = cv2.max(cv2.max(red, green), blue)
    index = image.astype(np.uint16)
    index |= (value.astype(np.uint16) << 8)[..., None]
    return _brightness_table(float(add), rounding)[index]


def contrast(image: np.ndarray, factor: float, noise: Any, *, rounding: str) -> np.ndarray:
    """``(x - mean) * c + mean`` per channel, as a per-channel lookup table (the mean is per image)."""
    cv2 = cv2_module()
    means = np.asarray(cv2.mean(image)[:3], dtype=np.float64) * _INV255
    levels = np.arange(256, dtype=np.float64)[:, None] * _INV255
    table = _to_uint8(np.clip((levels - means) * factor + means, 0, 1) * 255, rounding)
    return cv2.LUT(image, np.ascontiguousarray(table.reshape(1, 256, 3)))


def saturate(image: np.ndarray, params: tuple[float, float], noise: Any) -> np.ndarray:
    """HSV saturation ``S * c0 + c1`` (clipped to [0, 1]), hue and value kept: x becomes V - (V - x) * S' / S;
    grey pixels have hue 0 (red) in scikit-image's convention, so a positive c1 tints them red."""
    cv2 = cv2_module()
    factor, offset = params
    dtype = np.float64  # as scikit-image's HSV; a float32 ratio is amplified by c0 (up to 20) past a level
    red, green, blue = cv2.split(image)
    value = cv2.max(cv2.max(red, green), blue).astype(dtype)
    delta = value - cv2.min(cv2.min(red, green), blue).astype(dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        saturation = delta / value
        new_saturation = np.clip(saturation * dtype(factor) + dtype(offset), 0, 1)
        ratio = np.where(delta > 0, new_saturation / saturation, 0).astype(dtype)
    value = value[..., None]
    out = value - (value - image.astype(dtype)) * ratio[..., None]
    if offset > 0:
        grey = delta <= 0
        out[grey, 1:] = (value[grey] * (1 - min(float(offset), 1.0))).astype(dtype)
    return np.clip(out, 0, 255, out=out)


def elastic_imagenet_c(image: np.ndarray, alpha: float, noise: Any) -> np.ndarray:
    """imagecorruptions 1.1.2 elastic: smoothed uniform displacements scaled to the image size."""
    cv2 = cv2_module()
    height, width = image.shape[:2]
    shift = height * 0.005
    return _displace(cv2, image.astype(np.float32), noise, shift, (height * 0.01, width * 0.01), alpha)


def _displace(cv2: Any, pixels: np.ndarray, noise: Any, shift: float, sigma: Any, alpha: float) -> np.ndarray:
    """Remap by smoothed uniform(-shift, shift) displacements (columns drawn first) times ``alpha``."""
    height, width = pixels.shape[:2]
    shift_cols, shift_rows = (
        primitives.gaussian_filter(
            noise.uniform(-shift, shift, (height, width)), sigma, mode="reflect", truncate=3
        )
        * alpha
        for _ in range(2)
    )
    map_cols = (shift_cols + np.arange(width, dtype=np.float32)[None, :]).astype(np.float32)
    map_rows = (shift_rows + np.arange(height, dtype=np.float32)[:, None]).astype(np.float32)
    four = pixels if pixels.shape[2] == 4 else primitives.to_four_channels(pixels)  # faster in OpenCV
    out = cv2.remap(four, map_cols, map_rows, interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    out = primitives.from_four_channels(out)
    return np.clip(out, 0, 255, out=out)


def elastic_vrb(image: np.ndarray, params: tuple[float, float, float], noise: Any) -> np.ndarray:
    """Hendrycks' original elastic: a random affine warp, then smoothed uniform(-1, 1) displacements."""
    cv2 = cv2_module()
    alpha, sigma, affine = params
    height, width = image.shape[:2]
    centre = np.float32((height, width)) // 2
    square = min(height, width) // 3
    points = np.float32([centre + square, [centre[0] + square, centre[1] - square], centre - square])
    moved = points + np.asarray(noise.uniform(-affine, affine, points.shape), dtype=np.float32)
    matrix = cv2.getAffineTransform(points, moved)
    pixels = cv2.warpAffine(
        primitives.to_four_channels(image.astype(np.float32)),
        matrix,
        (width, height),
        borderMode=cv2.BORDER_REFLECT_101,
    )
    return _displace(cv2, pixels, noise, 1, sigma, alpha)


def spatter(image: np.ndarray, params: tuple, noise: Any) -> np.ndarray:
    """ImageNet-C spatter: water drops (mode 0, pale turquoise highlights) or mud (mode 1, brown)."""
    cv2 = cv2_module()
    mean, std, sigma, threshold, intensity, mode = params
    height, width = image.shape[:2]
    pixels = image.astype(np.float32) * np.float32(_INV255)
    liquid = noise.normal(mean, std, (height, width))
    liquid = primitives.gaussian_filter(liquid, float(sigma), mode="nearest", truncate=4.0)
    liquid[liquid < threshold] = 0
    if mode == 0:
        liquid_levels = np.clip(liquid * 255, 0, 255).astype(np.uint8)
        distance = 255 - cv2.Canny(liquid_levels, 50, 150)
        distance = cv2.distanceTransform(distance, cv2.DIST_L2, 5)
        _, distance = cv2.threshold(distance, 20, 20, cv2.THRESH_TRUNC)
        distance = cv2.blur(distance, (3, 3)).astype(np.uint8)
        distance = cv2.equalizeHist(distance)
        emboss = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]], dtype=np.float32)
        distance = cv2.filter2D(distance, cv2.CV_8U, emboss)
        distance = cv2.blur(distance, (3, 3)).astype(np.float32)
        mask = liquid_levels.astype(np.float32) * distance
        peak = float(mask.max())
        mask = mask * np.float32(intensity / peak) if peak > 0 else np.zeros_like(mask)
        colour = np.array([175, 238, 238], dtype=np.float32) * np.float32(_INV255)
        out = pixels + mask[..., None] * colour
    else:
        mask = (liquid > threshold).astype(np.float32)
        mask = primitives.gaussian_filter(mask, float(intensity), mode="nearest", truncate=4.0)
        mask[mask < 0.8] = 0
        colour = np.array([63, 42, 20], dtype=np.float32) * np.float32(_INV255)
        out = pixels * (1 - mask[..., None]) + mask[..., None] * colour
    return np.clip(out, 0, 1) * 255


def pixelate_imagenet_c(image: np.ndarray, factor: float, noise: Any) -> np.ndarray:
    """PIL box downscale by ``factor``, nearest-neighbour upscale back to the input size."""
    from PIL import Image

    height, width = image.shape[:2]
    small = Image.fromarray(image).resize(
        (max(1, int(width * factor)), max(1, int(height * factor))), Image.BOX
    )
    return np.asarray(small.resize((width, height), Image.NEAREST))


def pixelate_vrb(image: np.ndarray, factor: float, noise: Any) -> np.ndarray:
    """VRB's pixelate: only the OpenCV area downscale, so the output is smaller than the input."""
    cv2 = cv2_module()
    height, width = image.shape[:2]
    return cv2.resize(
        image, (max(1, int(width * factor)), max(1, int(height * factor))), interpolation=cv2.INTER_AREA
    )


def jpeg_imagenet_c(image: np.ndarray, quality: int, noise: Any) -> np.ndarray:
    """PIL JPEG round trip at ``quality``, in memory."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "JPEG", quality=int(quality))
    return _pillow_decode(buffer.getvalue())


def jpeg_vrb(image: np.ndarray, quality: int, noise: Any) -> np.ndarray:
    """OpenCV JPEG encode at ``quality`` (as the official ``cv2.imwrite``), decoded in memory."""
    cv2 = cv2_module()
    encoded = _cv2_jpeg(cv2.cvtColor(image, cv2.COLOR_RGB2BGR), quality)
    return cv2.cvtColor(cv2.imdecode(encoded, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


def _pillow_decode(encoded: Any) -> np.ndarray:
    """Decode JPEG bytes with Pillow, as ``imageio.imread`` (the official code's reader) does: RGB order."""
    from PIL import Image

    decoded = Image.open(io.BytesIO(bytes(encoded)))
    return np.array(decoded if decoded.mode == "RGB" else decoded.convert("RGB"))


def _cv2_jpeg(pixels: np.ndarray, quality: int) -> np.ndarray:
    """``cv2.imwrite``'s JPEG bytes for ``pixels`` (taken as BGR, as OpenCV does) at ``quality``."""
    cv2 = cv2_module()
    ok, encoded = cv2.imencode(".jpg", pixels, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("OpenCV failed to encode the image as JPEG")
    return encoded


def jpeg_vrb_official(image: np.ndarray, quality: int, noise: Any) -> np.ndarray:
    """The official code's JPEG step: the RGB array encoded as if BGR (other artefacts than a correct encode),
    read back by imageio in BGR order, which the pipeline's next ``cv2.imwrite`` turns back into RGB."""
    return np.ascontiguousarray(_pillow_decode(_cv2_jpeg(image, quality))[..., ::-1])


OFFICIAL_SAVE_QUALITY = 95
"""``cv2.imwrite``'s default JPEG quality: the official pipeline saves every corrupted image with it."""


def official_save_bytes(image: np.ndarray) -> bytes:
    """The file the official pipeline saves for the RGB array ``image``: ``cv2.imwrite``'s quality-95 JPEG."""
    cv2 = cv2_module()
    return _cv2_jpeg(cv2.cvtColor(image, cv2.COLOR_RGB2BGR), OFFICIAL_SAVE_QUALITY).tobytes()


def official_save_reload(image: np.ndarray) -> np.ndarray:
    """The official pipeline's storage, as its models see it: ``official_save_bytes`` read back as RGB."""
    return _pillow_decode(official_save_bytes(image))


def grayscale(image: np.ndarray, _: Any, noise: Any, *, official: bool = False, inverse: bool = False) -> Any:
    """OpenCV BT.601 grey on three channels (``inverse``: 255 - grey); ``official``: ``COLOR_BGR2GRAY`` on RGB
    data as the official code does, so red weighs 0.114 and blue 0.299."""
    cv2 = cv2_module()
    source = np.ascontiguousarray(image[..., ::-1]) if official else image
    grey = cv2.cvtColor(cv2.cvtColor(source, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)
    return 255 - grey if inverse else grey


def color_inversion(image: np.ndarray, _: Any, noise: Any) -> np.ndarray:
    """255 - x per channel."""
    return 255 - image
