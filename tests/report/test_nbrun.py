"""evalkit.report.nbrun executes a report notebook with papermill, always with the
``python3`` kernel of this interpreter (``HereKernelManager``, IPC sockets in a private temp
folder), and turns a failing cell into :class:`ReportError` carrying the cell's index,
source, error name, value and traceback (ANSI colours stripped) and the partial notebook.

Checked here without a kernel: papermill is replaced by a stand-in, so what ``execute``
hands papermill, what it restores afterwards (the kernel manager's IPC folder, the
``PYDEVD_DISABLE_FILE_VALIDATION`` variable) and how it reports a failing cell are seen
directly; ``_error_of`` and ``_strip_ansi`` on hand-made notebooks and text. Real kernels run
in test_render.py and tests/test_notebooks_run.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nbformat
import papermill
import pytest
from hypothesis import given
from hypothesis import strategies as st
from papermill.exceptions import PapermillExecutionError

from evalkit.report import nbrun
from evalkit.report.kernel import HereKernelManager

ENV = "PYDEVD_DISABLE_FILE_VALIDATION"


def _notebook(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def _error(ename: str, evalue: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[])


def _code(source: str, *outputs: nbformat.NotebookNode) -> nbformat.NotebookNode:
    c = nbformat.v4.new_code_cell(source)
    c.outputs = list(outputs)
    return c


# --- _error_of / _strip_ansi ------------------------------------------------------------


def test_error_of_finds_the_first_code_cell_with_an_error() -> None:
    nb = _notebook(
        nbformat.v4.new_markdown_cell("# title"),
        _code("x = 1", nbformat.v4.new_output("stream", name="stdout", text="ok\n")),
        _code("raise KeyError('a')", _error("KeyError", "'a'")),
        _code("raise ValueError", _error("ValueError", "")),
    )
    idx, out, src = nbrun._error_of(nb)
    assert (idx, src) == (2, "raise KeyError('a')")  # index among all cells, markdown included
    assert out["ename"] == "KeyError"


def test_error_of_a_clean_notebook_is_nothing() -> None:
    nb = _notebook(nbformat.v4.new_markdown_cell("text"), _code("1 + 1"))
    assert nbrun._error_of(nb) == (None, None, "")


def test_strip_ansi_removes_colour_and_cursor_codes() -> None:
    text = "\x1b[0;31mValueError\x1b[0m: boom\x1b[1;32m!\x1b[K done\x1b[2J"
    assert nbrun._strip_ansi(text) == "ValueError: boom! done"


@given(st.text(alphabet=st.characters(blacklist_characters="\x1b")))
def test_strip_ansi_leaves_text_without_escapes_alone(text: str) -> None:
    assert nbrun._strip_ansi(text) == text


# --- execute with a stand-in papermill --------------------------------------------------


class _Papermill:
    """Records the call; writes ``written`` to the output path, then raises ``error``."""

    def __init__(
        self, written: nbformat.NotebookNode | None = None, error: Exception | None = None
    ):
        self.written, self.error = written, error
        self.calls: list[dict[str, Any]] = []
        self.ipc_during: str | None = None
        self.env_during: str | None = None

    def __call__(self, input_path: str, output_path: str, **kw: Any) -> Any:
        self.calls.append({"input": input_path, "output": output_path, **kw})
        self.ipc_during = HereKernelManager.ipc_dir
        self.env_during = os.environ.get(ENV)
        if self.written is not None:
            nbformat.write(self.written, output_path)
        if self.error is not None:
            raise self.error
        return self.written or "executed"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)


def test_execute_runs_this_interpreters_kernel_with_the_parameters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    fake = _Papermill()
    monkeypatch.setattr(papermill, "execute_notebook", fake)
    got = nbrun.execute(tmp_path / "in.ipynb", tmp_path / "out.ipynb", {"n": 3},
                        cwd=tmp_path, timeout=60)  # fmt: skip
    assert got == "executed"
    (call,) = fake.calls
    assert call["input"] == str(tmp_path / "in.ipynb")
    assert call["output"] == str(tmp_path / "out.ipynb")
    assert call["parameters"] == {"n": 3}
    assert call["kernel_name"] == "python3"
    assert call["kernel_manager_class"] is HereKernelManager
    assert call["cwd"] == str(tmp_path) and call["execution_timeout"] == 60
    assert call["progress_bar"] is False and call["log_output"] is False


def test_execute_without_cwd_passes_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Papermill()
    monkeypatch.setattr(papermill, "execute_notebook", fake)
    nbrun.execute("in.ipynb", tmp_path / "out.ipynb", {})
    assert fake.calls[0]["cwd"] is None and fake.calls[0]["execution_timeout"] == 1800


def test_the_kernel_folder_and_debugger_variable_exist_only_during_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    fake = _Papermill()
    monkeypatch.setattr(papermill, "execute_notebook", fake)
    nbrun.execute("in.ipynb", tmp_path / "out.ipynb", {})
    assert fake.env_during == "1"
    assert fake.ipc_during is not None and Path(fake.ipc_during).name.startswith("evalkit-kernel-")
    assert ENV not in os.environ  # unset before, unset after
    assert HereKernelManager.ipc_dir is None
    assert not Path(fake.ipc_during).exists()  # the private socket folder is removed


def test_a_users_debugger_variable_is_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "0")
    fake = _Papermill(error=RuntimeError("kernel died"))
    monkeypatch.setattr(papermill, "execute_notebook", fake)
    with pytest.raises(RuntimeError, match="kernel died"):  # not a cell error: as raised
        nbrun.execute("in.ipynb", tmp_path / "out.ipynb", {})
    assert fake.env_during == "1" and os.environ[ENV] == "0"
    assert HereKernelManager.ipc_dir is None


def test_a_failing_cell_becomes_a_report_error_with_the_partial_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    partial = _notebook(
        nbformat.v4.new_markdown_cell("# report"),
        _code("setup()"),
        _code("raise ValueError('boom')", _error("ValueError", "boom")),
    )
    err = PapermillExecutionError(
        cell_index=2,
        exec_count=7,
        source="raise ValueError('boom')",
        ename="ValueError",
        evalue="boom",
        traceback=["\x1b[0;31mTraceback\x1b[0m", "\x1b[1mValueError\x1b[0m: boom"],
    )
    monkeypatch.setattr(papermill, "execute_notebook", _Papermill(partial, err))
    with pytest.raises(nbrun.ReportError) as e:
        nbrun.execute("in.ipynb", tmp_path / "out.ipynb", {})
    r = e.value
    assert str(r) == "cell 2 failed: ValueError: boom"
    assert (r.cell, r.ename, r.evalue) == (2, "ValueError", "boom")
    assert r.source == "raise ValueError('boom')"
    assert r.traceback == "Traceback\nValueError: boom"
    assert [c.cell_type for c in r.notebook.cells] == ["markdown", "code", "code"]
    assert e.value.__cause__ is None and e.value.__suppress_context__  # raised "from None"


def test_a_failure_without_a_written_notebook_names_the_execution_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = PapermillExecutionError(0, 4, "x", "NameError", "name 'x' is not defined", [])
    monkeypatch.setattr(papermill, "execute_notebook", _Papermill(None, err))
    with pytest.raises(nbrun.ReportError) as e:
        nbrun.execute("in.ipynb", tmp_path / "never-written.ipynb", {})
    r = e.value
    assert str(r) == "cell 4 failed: NameError: name 'x' is not defined"
    assert r.cell is None and r.notebook is None and r.source == "" and r.traceback == ""
