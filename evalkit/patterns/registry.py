"""The detector registry and the ``@detector`` decorator.

A detector is a pure function ``fn(ctx: Context) -> pl.DataFrame`` returning one row per
finding with (at least) ``trial_id`` and ``step_start``; it may also return ``step_end``,
``severity``, ``confidence`` and ``evidence`` (defaults: step_end = step_start, 'medium', 0.5,
''). :func:`evalkit.patterns.detect` adds detector, rule_version, source, mode, redacts and
cuts the evidence, and conforms the result to the findings columns.

Register your own::

    from evalkit.patterns import detector

    @detector("slow_start", params={"min_calls": 5})
    def slow_start(ctx):
        '''Five read-only calls before the first edit.'''
        ...

Registering a name again for the same mode replaces the earlier detector.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from evalkit.patterns.context import Context

MODES = ("structural", "trainerd")

DetectorFn = Callable[["Context"], "pl.DataFrame"]


@dataclass(frozen=True)
class Detector:
    """A registered detector."""

    name: str
    mode: str
    fn: DetectorFn
    version: int = 1
    #: default parameters (the ``config[name]`` section)
    params: dict[str, Any] = field(default_factory=dict)
    #: one-line meaning (the function docstring's first line when not given)
    description: str = ""
    #: True for evalkit's own detectors (documented in docs/patterns.md)
    builtin: bool = False

    @property
    def rule_version(self) -> str:
        return f"{self.mode}-{self.version}"


_REGISTRY: dict[tuple[str, str], Detector] = {}


def detector(
    name: str,
    *,
    modes: Iterable[str] = ("structural",),
    version: int = 1,
    params: dict[str, Any] | None = None,
    description: str | None = None,
    _builtin: bool = False,
) -> Callable[[DetectorFn], DetectorFn]:
    """Register ``fn`` as detector ``name`` for each of ``modes``.

    ``params`` are the detector's default parameters; callers override them with
    ``config={name: {...}}``. ``version`` goes into ``rule_version`` ('<mode>-<version>'): bump
    it whenever the rule changes so rates stay comparable across runs.
    """
    modes = tuple(modes)
    for m in modes:
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}; modes are {MODES}")

    def deco(fn: DetectorFn) -> DetectorFn:
        doc = description or ((fn.__doc__ or "").strip().splitlines() or [""])[0]
        for m in modes:
            _REGISTRY[(name, m)] = Detector(name, m, fn, version, dict(params or {}), doc, _builtin)
        return fn

    return deco


def unregister(name: str, mode: str | None = None) -> None:
    """Remove a detector (every mode when ``mode`` is None)."""
    for key in [k for k in _REGISTRY if k[0] == name and (mode is None or k[1] == mode)]:
        del _REGISTRY[key]


def registered(mode: str | None = None) -> list[Detector]:
    """Registered detectors (of one mode), in registration order."""
    return [d for (n, m), d in _REGISTRY.items() if mode is None or m == mode]


def list_detectors(mode: str | None = None) -> list[dict[str, Any]]:
    """name, mode, rule_version and description of every registered detector."""
    return [
        {
            "name": d.name,
            "mode": d.mode,
            "rule_version": d.rule_version,
            "description": d.description,
        }
        for d in registered(mode)
    ]
