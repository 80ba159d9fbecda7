"""Server-side SVG bar charts: the geometry is computed here, the template draws it.

A chart is a title, day labels and one or more series stacked per day (an optional
horizontal reference line, e.g. a budget cap). Every bar carries its series, day and
value as data attributes and a <title> (a hover tooltip, read by screen readers), and the
same numbers are offered as a table in a <details> below the chart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

WIDTH, HEIGHT = 520, 230
LEFT, RIGHT, TOP, BOTTOM = 52, 12, 12, 34
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

PALETTE = ["#1f5fbf", "#0e9384", "#b54708", "#7a5af8", "#c11574", "#5a6472", "#067647",
           "#b42318", "#3e4784"]
STATUS_COLORS = {
    "delivered": "#067647", "sent": "#1f5fbf", "queued": "#7a8fb3", "scheduled": "#9aa4b2",
    "received": "#0e9384", "failed": "#b42318", "undelivered": "#d92d20",
    "expired": "#b54708", "canceled": "#5a6472",
    "verified": "#067647", "not verified": "#d0d5dd",
}


@dataclass(frozen=True)
class Series:
    name: str
    values: list[float]
    color: str = ""


@dataclass
class Bar:
    series: str
    day: str
    value: float
    label: str
    x: float
    y: float
    width: float
    height: float
    color: str


@dataclass
class Chart:
    id: str
    title: str
    description: str
    days: list[str]
    series: list[Series]
    unit: str = ""
    reference: float | None = None
    reference_label: str = ""
    bars: list[Bar] = field(default_factory=list)
    ticks: list[tuple[float, str]] = field(default_factory=list)
    x_labels: list[tuple[float, str]] = field(default_factory=list)
    reference_y: float | None = None
    width: int = WIDTH
    height: int = HEIGHT
    plot_left: int = LEFT
    plot_right: int = WIDTH - RIGHT
    plot_bottom: int = HEIGHT - BOTTOM

    @property
    def rows(self) -> list[tuple[str, list[str], str]]:
        """The data table: (day, each series' value, the day's total)."""
        return [(day, [self.format(s.values[i]) for s in self.series],
                 self.format(sum(s.values[i] for s in self.series)))
                for i, day in enumerate(self.days)]

    @property
    def center(self) -> float:
        return self.width / 2

    @property
    def is_empty(self) -> bool:
        return not any(v for s in self.series for v in s.values)

    def format(self, value: float) -> str:
        return format_value(value, self.unit)


def format_value(value: float | None, unit: str = "") -> str:
    if value is None:
        return "n/a"
    if unit == "%":
        return f"{value:g}%"
    if unit == "cents":
        return f"{value / 100:,.2f}"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"


def nice_ceiling(value: float) -> tuple[float, float]:
    """(axis maximum, tick step): a 1-2-5 step giving at most 5 ticks above zero."""
    if value <= 0:
        return 1.0, 1.0
    raw = value / 4
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    return step * math.ceil(value / step), step


def build(chart: Chart, *, maximum: float | None = None) -> Chart:
    """Lay out the stacked bars, the y ticks, the day labels and the reference line."""
    totals = [sum(s.values[i] for s in chart.series) for i in range(len(chart.days))]
    top = max([*totals, chart.reference or 0, 0])
    axis_max, step = (maximum, maximum / 4) if maximum else nice_ceiling(top)
    scale = PLOT_H / axis_max
    count = max(len(chart.days), 1)
    slot = PLOT_W / count
    width = max(slot * 0.7, 1.0)
    every = 1 if count <= 10 else math.ceil(count / 8)
    for index, day in enumerate(chart.days):
        x = LEFT + index * slot + (slot - width) / 2
        base = float(HEIGHT - BOTTOM)
        for position, series in enumerate(chart.series):
            value = series.values[index]
            if not value:
                continue
            height = value * scale
            base -= height
            chart.bars.append(Bar(
                series=series.name, day=day, value=value, label=chart.format(value),
                x=round(x, 2), y=round(base, 2), width=round(width, 2),
                height=round(height, 2),
                color=series.color or PALETTE[position % len(PALETTE)]))
        if index % every == 0 or index == count - 1:
            chart.x_labels.append((round(LEFT + index * slot + slot / 2, 2), day[5:]))
    ticks, value = [], 0.0
    while value <= axis_max + 1e-9:
        ticks.append((round(HEIGHT - BOTTOM - value * scale, 2), chart.format(value)))
        value += step
    chart.ticks = ticks
    if chart.reference:
        chart.reference_y = round(HEIGHT - BOTTOM - min(chart.reference, axis_max) * scale, 2)
    return chart


def colored(names: list[str], values: dict[str, list[float]]) -> list[Series]:
    """Series in `names` order with the status colors, else the palette's."""
    return [Series(name, values[name], STATUS_COLORS.get(name, PALETTE[i % len(PALETTE)]))
            for i, name in enumerate(names)]
