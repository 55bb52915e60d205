"""evalkit.report.kernel: a kernelspec manager that knows only ``python3`` = the running
interpreter, and an async kernel manager that uses it over IPC sockets in ``ipc_dir``. Checked
without starting a kernel: the spec (argv, language, debugger off), the unknown-name error,
that user kernelspec folders are never read, and the manager's defaults (spec manager,
``ipc`` transport, the socket path under ``ipc_dir`` or the temp folder)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from jupyter_client.kernelspec import NoSuchKernel

from evalkit.report import kernel
from evalkit.report.kernel import KERNEL_NAME, HereKernelManager, HereKernelSpecManager

KERNEL_DIR = str(Path(kernel.__file__).parent)


def test_python3_is_this_interpreter_with_ipykernel() -> None:
    spec = HereKernelSpecManager().get_kernel_spec("python3")
    assert KERNEL_NAME == "python3"
    assert spec.argv == [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    assert spec.language == "python"
    assert spec.display_name == f"Python 3 ({sys.prefix})"
    assert spec.metadata == {"debugger": False}
    assert spec.resource_dir == KERNEL_DIR


@pytest.mark.parametrize("name", ["python", "python2", "ir", "Python3", ""])
def test_any_other_kernel_name_is_unknown(name: str) -> None:
    with pytest.raises(NoSuchKernel):
        HereKernelSpecManager().get_kernel_spec(name)


def test_only_python3_is_listed_and_user_kernelspecs_are_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "kernels" / "python3"
    other.mkdir(parents=True)
    (other / "kernel.json").write_text(
        '{"argv": ["/bin/false", "{connection_file}"], "display_name": "x", "language": "python"}'
    )
    (tmp_path / "kernels" / "julia").mkdir()
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    ksm = HereKernelSpecManager()
    assert ksm.find_kernel_specs() == {"python3": KERNEL_DIR}
    assert ksm.get_kernel_spec("python3").argv[0] == sys.executable


def test_the_manager_uses_the_here_spec_manager_and_ipc() -> None:
    km = HereKernelManager()
    assert isinstance(km.kernel_spec_manager, HereKernelSpecManager)
    assert km.transport == "ipc"
    assert km.kernel_spec.argv[0] == sys.executable


def test_socket_path_is_under_ipc_dir_when_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(HereKernelManager, "ipc_dir", str(tmp_path))
    assert HereKernelManager().ip == os.path.join(str(tmp_path), "evalkit-kernel")


def test_socket_path_falls_back_to_the_temp_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(HereKernelManager, "ipc_dir", None)
    assert HereKernelManager().ip == os.path.join(tempfile.gettempdir(), "evalkit-kernel")
