"""A line chart in the terminal, as text: pure, for `pinery progress`.

Points are bucketed into the plot's columns by x (equal x ranges; a column without points stays
empty) and the mean y of each column's points is drawn as a dot on a grid of `height` rows, with the y range on the left and the x range
underneath. Unicode by default; `ascii=True` for terminals and logs that cannot show it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Glyphs:
    dot: str
    vertical: str
    corner: str
    horizontal: str


UNICODE = Glyphs("•", "│", "└", "─")
ASCII = Glyphs("*", "|", "+", "-")
MIN_WIDTH, MIN_HEIGHT = 20, 3


def number(value: float) -> str:
    """Short and exact enough for an axis: 4 significant digits, whole numbers in full."""
    if 1e3 <= abs(value) < 1e7:
        return f"{value:.0f}"
    if value == 0 or 1e-3 <= abs(value) < 1e3:
        return f"{value:.4g}"
    return f"{value:.3e}"


def columns(points: Sequence[tuple[float, float]], count: int) -> list[float | None]:
    """The mean y of the points in each of `count` equal x ranges (None for an empty one)."""
    xs = [x for x, _ in points]
    low, high = min(xs), max(xs)
    span = high - low
    sums, counts = [0.0] * count, [0] * count
    for x, y in points:
        i = 0 if span == 0 else min(count - 1, int((x - low) / span * count))
        sums[i] += y
        counts[i] += 1
    return [s / n if n else None for s, n in zip(sums, counts, strict=True)]


def line_chart(points: Sequence[tuple[float, float]], width: int = 80, height: int = 12,
               x_label: str = "", ascii: bool = False) -> list[str]:
    """The chart's lines, each at most `width` characters; [] without finite points."""
    glyphs = ASCII if ascii else UNICODE
    points = [(x, y) for x, y in points if math.isfinite(x) and math.isfinite(y)]
    if not points:
        return []
    height = max(MIN_HEIGHT, height)
    ys = [y for _, y in points]
    top, bottom = max(ys), min(ys)
    labels = [number(top), number(bottom) if bottom != top else ""]
    margin = max(len(label) for label in labels) + 1
    plot_width = max(MIN_WIDTH, width) - margin - 1
    grid = [[" "] * plot_width for _ in range(height)]
    for col, y in enumerate(columns(points, plot_width)):
        if y is not None:
            row = 0 if top == bottom else round((top - y) / (top - bottom) * (height - 1))
            grid[row][col] = glyphs.dot
    lines = []
    for r, cells in enumerate(grid):
        label = labels[0] if r == 0 else labels[1] if r == height - 1 else ""
        lines.append(f"{label:>{margin - 1}} {glyphs.vertical}{''.join(cells)}".rstrip())
    lines.append(" " * margin + glyphs.corner + glyphs.horizontal * plot_width)
    xs = [x for x, _ in points]
    left, right = number(min(xs)), number(max(xs)) if max(xs) != min(xs) else ""
    gap = max(1, plot_width - len(left) - len(right))
    middle = " " * gap
    if x_label and gap >= len(x_label) + 2:  # the label centred between the ends of the range
        before = (gap - len(x_label)) // 2
        middle = " " * before + x_label + " " * (gap - before - len(x_label))
    lines.append((" " * (margin + 1) + left + middle + right).rstrip())
    return lines
