"""Execute a report notebook with papermill in THIS Python environment.

The kernel is always ``sys.executable -m ipykernel_launcher``: papermill is given
``kernel_name="python3"`` and a kernel manager whose kernelspec lookup ignores every
installed kernelspec (``kernel.py``: a user's ``~/.local/share/jupyter/kernels/python3``
pointing at another Python cannot hijack the report). Heavy imports (papermill, nbformat)
happen on the first call, not on import.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

KERNEL_NAME = "python3"


class ReportError(RuntimeError):
    """A report cell failed: ``cell`` is its index, ``ename`` / ``evalue`` / ``traceback``
    the error as the kernel reported it, ``notebook`` the partially executed notebook."""

    def __init__(
        self,
        message: str,
        *,
        cell: int | None = None,
        ename: str = "",
        evalue: str = "",
        traceback: str = "",
        source: str = "",
        notebook: Any = None,
    ) -> None:
        super().__init__(message)
        self.cell, self.ename, self.evalue = cell, ename, evalue
        self.traceback, self.source, self.notebook = traceback, source, notebook


def _error_of(nb: Any) -> tuple[int | None, dict[str, Any] | None, str]:
    for i, c in enumerate(nb.cells):
        for o in c.get("outputs", []) if c.cell_type == "code" else []:
            if o.get("output_type") == "error":
                return i, o, c.source
    return None, None, ""


def _strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)


def execute(
    notebook: str | Path,
    output: str | Path,
    parameters: dict[str, Any],
    *,
    cwd: str | Path | None = None,
    timeout: float | None = 1800,
) -> Any:
    """Run ``notebook`` with ``parameters`` injected (papermill: repr'd values in a cell
    after the one tagged ``parameters``) and write the executed copy to ``output``.

    Returns the executed notebook. Raises :class:`ReportError` carrying the failing cell's
    error (the partial notebook is still written to ``output``).
    """
    import nbformat
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    from evalkit.report.kernel import HereKernelManager

    env_backup = os.environ.get("PYDEVD_DISABLE_FILE_VALIDATION")
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # quiets a debugger warning on stderr
    ipc = tempfile.TemporaryDirectory(prefix="evalkit-kernel-")
    HereKernelManager.ipc_dir = ipc.name
    try:
        nb = pm.execute_notebook(
            str(notebook),
            str(output),
            parameters=parameters,
            kernel_name=KERNEL_NAME,
            language="python",
            cwd=str(cwd) if cwd else None,
            progress_bar=False,
            log_output=False,
            execution_timeout=timeout,
            kernel_manager_class=HereKernelManager,
        )
    except PapermillExecutionError as e:
        part = nbformat.read(str(output), as_version=4) if Path(output).exists() else None
        idx, _, src = _error_of(part) if part is not None else (None, None, "")
        tb = _strip_ansi("\n".join(e.traceback or []))
        raise ReportError(
            f"cell {idx if idx is not None else e.exec_count} failed: {e.ename}: {e.evalue}",
            cell=idx,
            ename=e.ename,
            evalue=e.evalue,
            traceback=tb,
            source=src,
            notebook=part,
        ) from None
    finally:
        HereKernelManager.ipc_dir = None
        ipc.cleanup()
        if env_backup is None:
            os.environ.pop("PYDEVD_DISABLE_FILE_VALIDATION", None)
        else:
            os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = env_backup
    return nb
