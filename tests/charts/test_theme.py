"""evalkit.charts.theme: the ``evalkit`` Altair theme (system fonts, no web font, white
background) and ``enable_theme``, which registers it once and makes it active. Checked: the
theme becomes active, its config reaches a chart's spec, calling it twice is harmless, and the
font stack names no web font (nothing to fetch, per the module docstring)."""

from __future__ import annotations

from collections.abc import Iterator

import altair as alt
import polars as pl
import pytest

from evalkit.charts import theme


@pytest.fixture
def restore_theme() -> Iterator[None]:
    before = alt.theme.active
    yield
    alt.theme.enable(before)


def test_enable_theme_registers_and_activates_evalkit(restore_theme) -> None:
    alt.theme.enable("default")
    theme.enable_theme()
    assert alt.theme.active == "evalkit" == theme.THEME
    assert "evalkit" in alt.theme.names()


def test_enabling_twice_keeps_one_registration_and_stays_active(restore_theme) -> None:
    theme.enable_theme()
    theme.enable_theme()
    assert alt.theme.names().count("evalkit") == 1
    assert alt.theme.active == "evalkit"


def test_a_chart_carries_the_theme_config(restore_theme) -> None:
    theme.enable_theme()
    spec = alt.Chart(pl.DataFrame({"x": [1, 2]})).mark_bar().encode(x="x:Q").to_dict()
    cfg = spec["config"]
    assert cfg["font"] == theme.FONT
    assert cfg["background"] == "white"
    assert cfg["title"]["anchor"] == "start" and cfg["title"]["fontSize"] == 15
    assert cfg["axis"]["labelLimit"] == 320 and cfg["legend"]["labelLimit"] == 320


def test_another_theme_does_not_carry_the_evalkit_font(restore_theme) -> None:
    theme.enable_theme()
    alt.theme.enable("default")
    spec = alt.Chart(pl.DataFrame({"x": [1]})).mark_bar().encode(x="x:Q").to_dict()
    assert spec.get("config", {}).get("font") != theme.FONT


def test_the_font_stack_is_system_fonts_only() -> None:
    fonts = [f.strip().strip("'") for f in theme.FONT.split(",")]
    assert fonts[0] == "system-ui" and fonts[-1] == "sans-serif"
    assert "url(" not in theme.FONT and "@import" not in theme.FONT
