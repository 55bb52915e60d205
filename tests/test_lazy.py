"""evalkit._lazy: ``scipy_stats`` / ``scipy_special`` stand in for the scipy modules and import
them only on the first attribute access. Checked here: nothing is imported by importing
``evalkit._lazy`` itself (in a fresh interpreter, via ``sys.modules``), the loader runs once and
is cached, attributes are those of the real module, and a missing attribute raises
AttributeError. (tests/test_import_graph.py checks ``import evalkit`` loads no scipy.stats.)"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types

import pytest
import scipy.special
import scipy.stats

from evalkit._lazy import _LazyModule, scipy_special, scipy_stats


def _run(code: str) -> None:
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True)


def test_importing_the_lazy_module_imports_no_scipy_until_an_attribute_is_read() -> None:
    _run(
        """
        import sys
        from evalkit._lazy import scipy_special, scipy_stats
        assert not any(m == "scipy" or m.startswith("scipy.") for m in sys.modules), sorted(
            m for m in sys.modules if m.startswith("scipy")
        )
        repr(scipy_stats)  # the repr does not load either
        assert "scipy.stats" not in sys.modules
        assert scipy_special.comb(5, 2, exact=True) == 10  # 5*4/2
        assert "scipy.special" in sys.modules and "scipy.stats" not in sys.modules
        assert abs(scipy_stats.binom.pmf(0, 2, 0.5) - 0.25) < 1e-12  # 0.5**2
        assert "scipy.stats" in sys.modules
        """
    )


def test_attributes_are_the_real_scipy_objects() -> None:
    assert scipy_stats.norm is scipy.stats.norm
    assert scipy_special.betainc is scipy.special.betainc


def test_the_loader_runs_once_and_the_module_is_cached() -> None:
    calls = []
    mod = types.ModuleType("fake")
    mod.x = 1  # type: ignore[attr-defined]
    mod.y = 2  # type: ignore[attr-defined]

    def load_fake() -> types.ModuleType:
        calls.append(1)
        return mod

    lazy = _LazyModule(load_fake)
    assert calls == []  # constructing does not load
    assert (lazy.x, lazy.y, lazy.x) == (1, 2, 1)
    assert calls == [1]


def test_repr_names_the_loader_without_loading() -> None:
    def _never() -> types.ModuleType:  # pragma: no cover - must not run
        raise AssertionError("loaded")

    assert repr(_LazyModule(_never)) == "<lazy module _never>"


def test_a_missing_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError):
        scipy_stats.no_such_distribution  # noqa: B018
