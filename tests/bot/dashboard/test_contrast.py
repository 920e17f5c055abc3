"""Contrast: the page's colours and the heatmaps' cell labels meet WCAG AA (4.5:1 for text)."""

from __future__ import annotations

import re

from bot.dashboard import charts
from bot.dashboard.html import static_text

AA = 4.5


def _rgb(hex_colour: str) -> tuple[float, float, float]:
    value = hex_colour.lstrip("#")
    return tuple(int(value[i:i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]


def _schemes() -> list[dict[str, str]]:
    css = static_text("dashboard.css")
    blocks = re.findall(r":root\s*{([^}]*)}", css)
    return [dict(re.findall(r"--([a-z]+):\s*(#[0-9a-f]{6})", block)) for block in blocks]


def test_the_published_ratio_is_wcags() -> None:
    assert round(charts.contrast(_rgb("#000000"), _rgb("#ffffff")), 2) == 21.0
    assert round(charts.contrast(_rgb("#767676"), _rgb("#ffffff")), 2) == 4.54  # WCAG's example


def test_text_links_and_focus_meet_aa_in_light_and_dark_mode() -> None:
    light, dark = _schemes()
    for scheme in (light, dark):
        for background in ("bg", "panel"):
            for ink in ("fg", "muted", "link"):
                ratio = charts.contrast(_rgb(scheme[ink]), _rgb(scheme[background]))
                assert ratio >= AA, (ink, background, scheme[ink], scheme[background], ratio)
        assert charts.contrast(_rgb(scheme["focus"]), _rgb(scheme["bg"])) >= 3  # non-text


def test_every_heatmap_label_meets_aa_on_its_cell() -> None:
    from matplotlib import colormaps

    values = [[n / 20 for n in range(21)]]
    chart = charts.heatmap(values, ["row"], [str(n) for n in range(21)], alt="shades", digits=2)
    labels = re.findall(r'<text ([^>]*)>([0-9]\.[0-9]{2})</text>', chart.svg)
    assert len(labels) == 21
    for attributes, text in labels:
        found = re.search(r"fill: (#[0-9a-f]{6})", attributes)
        ink = found.group(1) if found else "#000000"  # SVG's default fill
        cell = colormaps[charts.HEATMAP](float(text))[:3]
        assert charts.contrast(_rgb(ink), cell) >= AA, (text, ink)
