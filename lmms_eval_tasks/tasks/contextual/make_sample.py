"""The bundled ConTextual sample: generated text-rich images with short known answers (the rule judge can
decide them), in the official schema; ``image_url`` is a ``sample://`` identifier. Deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from PIL import Image

from lmms_eval_tasks.framework.sample_data import (
    BLACK,
    COLOURS,
    WHITE,
    canvas,
    draw_bar_chart,
    draw_text,
    image_cell,
    sample_parquet,
    text_size,
)

SAMPLE_FILE = "contextual_sample.parquet"
URL_PREFIX = "sample://contextual/"


def analog_clock(hours: int, minutes: int, size: int = 140) -> Image.Image:
    """A clock face with the 12 numerals, an hour hand and a longer minute hand showing hours:minutes."""
    image, draw = canvas(size, size)
    centre = size / 2
    radius = size / 2 - 6
    draw.ellipse([6, 6, size - 6, size - 6], outline=BLACK, width=3)
    for numeral in range(1, 13):
        angle = math.radians(numeral * 30 - 90)
        label = str(numeral)
        width, height = text_size(label)
        x = centre + (radius - 14) * math.cos(angle) - width / 2
        y = centre + (radius - 14) * math.sin(angle) - height / 2
        draw_text(draw, (x, y), label)
    minute_angle = math.radians(minutes * 6 - 90)
    hour_angle = math.radians((hours % 12) * 30 + minutes * 0.5 - 90)
    for angle, length, width in ((hour_angle, radius * 0.5, 5), (minute_angle, radius * 0.8, 3)):
        end = (centre + length * math.cos(angle), centre + length * math.sin(angle))
        draw.line([(centre, centre), end], fill=BLACK, width=width)
    draw.ellipse([centre - 4, centre - 4, centre + 4, centre + 4], fill=COLOURS["red"])
    return image


def digital_clock(text: str, suffix: str) -> Image.Image:
    """A digital clock display: dark panel, large digits drawn twice the bitmap size, AM/PM suffix."""
    small, small_draw = canvas(60, 14, BLACK)
    draw_text(small_draw, (2, 2), text, fill=COLOURS["green"])
    digits = small.resize((240, 56), Image.NEAREST)
    image, draw = canvas(260, 90, BLACK)
    image.paste(digits, (10, 10))
    draw_text(draw, (200, 70), suffix, fill=COLOURS["green"])
    return image


def text_board(lines: list[str], background=WHITE, foreground=BLACK, width: int = 200) -> Image.Image:
    """A plain board with one line of text per row (price lists, signs)."""
    height = 16 * len(lines) + 16
    image, draw = canvas(width, height, background)
    draw.rectangle([2, 2, width - 3, height - 3], outline=foreground, width=2)
    for index, line in enumerate(lines):
        draw_text(draw, (10, 10 + 16 * index), line, fill=foreground)
    return image


def road_sign() -> Image.Image:
    """A green direction sign with two destinations, arrows and distances."""
    image, draw = canvas(220, 90, COLOURS["green"])
    draw.rectangle([3, 3, 216, 86], outline=WHITE, width=2)
    draw.polygon([(12, 28), (26, 18), (26, 38)], fill=WHITE)
    draw_text(draw, (34, 22), "Airport    12 km", fill=WHITE)
    draw.polygon([(206, 62), (192, 52), (192, 72)], fill=WHITE)
    draw_text(draw, (34, 56), "Harbour     3 km", fill=WHITE)
    return image


def shop_front() -> Image.Image:
    """A shop front: an awning, a sign reading BAKERY, opening hours on the door."""
    image, draw = canvas(200, 150, (200, 190, 170))
    for stripe in range(10):
        colour = COLOURS["red"] if stripe % 2 == 0 else WHITE
        draw.rectangle([stripe * 20, 0, stripe * 20 + 19, 24], fill=colour)
    draw.rectangle([40, 30, 160, 50], fill=WHITE, outline=BLACK)
    draw_text(draw, (78, 35), "BAKERY")
    draw.rectangle([80, 70, 120, 150], fill=(120, 80, 40))
    draw_text(draw, (84, 80), "OPEN", fill=WHITE)
    draw_text(draw, (84, 94), "8-18", fill=WHITE)
    return image


def street_sign() -> Image.Image:
    """A blue street-name plate on a pole."""
    image, draw = canvas(160, 160, (170, 210, 240))
    draw.rectangle([76, 50, 84, 160], fill=(90, 90, 90))
    draw.rectangle([20, 20, 140, 50], fill=COLOURS["blue"], outline=WHITE, width=2)
    draw_text(draw, (56, 30), "KING ST", fill=WHITE)
    return image


# (name, category, instruction, reference, image factory)
ITEMS: list[tuple[str, str, str, str, Callable[[], Image.Image]]] = [
    ("clock_0340", "time", "What time is shown on the clock?", "3:40", lambda: analog_clock(3, 40)),
    (
        "clock_1010",
        "time",
        "What time will it be 30 minutes after the time shown on this clock?",
        "10:40",
        lambda: analog_clock(10, 10),
    ),
    (
        "digital_0725",
        "time",
        "How many minutes are left until 8 o'clock in the morning?",
        "35 minutes",
        lambda: digital_clock("07:25", "AM"),
    ),
    (
        "price_list",
        "shopping",
        "How much do one bread and one milk cost together?",
        "$3.40",
        lambda: text_board(
            ["PRICE LIST", "Apples  $1.20", "Bread   $2.50", "Milk    $0.90", "Eggs    $3.10"]
        ),
    ),
    (
        "price_list_max",
        "shopping",
        "Which item on this price list is the most expensive?",
        "Eggs",
        lambda: text_board(["TODAY", "Tea     $2.00", "Eggs    $3.10", "Jam     $1.75"], width=180),
    ),
    ("road_sign", "navigation-transportation", "How far away is the harbour?", "3 km", road_sign),
    (
        "platform_sign",
        "navigation-transportation",
        "Which platform should I go to for a train to Oxford?",
        "Platform 4",
        lambda: text_board(
            ["Platform 2  London", "Platform 4  Oxford", "Platform 7  Bath"],
            background=COLOURS["blue"],
            foreground=WHITE,
        ),
    ),
    (
        "bar_chart",
        "infographics",
        "Which city has the tallest bar in this chart?",
        "Lima",
        lambda: draw_bar_chart({"Oslo": 12, "Lima": 30, "Pune": 18}),
    ),
    ("shop_front", "stvqa", "What kind of shop is shown in the picture?", "bakery", shop_front),
    ("street_sign", "estvqa", "What is the name of the street on the sign?", "King St", street_sign),
]


def sample_rows() -> list[dict[str, Any]]:
    """The sample's rows: official columns plus the image."""
    return [
        {
            "image_url": f"{URL_PREFIX}{name}.png",
            "instruction": instruction,
            "response": reference,
            "category": category,
            "image": image_cell(factory()),
        }
        for name, category, instruction, reference, factory in ITEMS
    ]


def sample_files() -> dict[str, bytes]:
    """{file name in sample/: bytes} of the bundled sample."""
    return sample_parquet(SAMPLE_FILE, sample_rows())
