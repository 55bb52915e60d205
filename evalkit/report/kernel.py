"""A kernel manager for reports: ``python3`` is always the running interpreter."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from jupyter_client.kernelspec import KernelSpec, KernelSpecManager, NoSuchKernel
from jupyter_client.manager import AsyncKernelManager
from traitlets import default

KERNEL_NAME = "python3"


class HereKernelSpecManager(KernelSpecManager):
    """Knows one kernel, ``python3`` = the running interpreter (no kernelspec files read)."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        if kernel_name != KERNEL_NAME:
            raise NoSuchKernel(kernel_name)
        return KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name=f"Python 3 ({sys.prefix})",
            language="python",
            resource_dir=str(Path(__file__).parent),
            metadata={"debugger": False},
        )

    def find_kernel_specs(self) -> dict[str, str]:
        return {KERNEL_NAME: str(Path(__file__).parent)}


class HereKernelManager(AsyncKernelManager):
    """An async kernel manager that uses :class:`HereKernelSpecManager` and talks to the
    kernel over IPC sockets in ``ipc_dir`` (set by the caller, removed after the run)."""

    ipc_dir: str | None = None

    @default("kernel_spec_manager")
    def _default_ksm(self) -> KernelSpecManager:
        return HereKernelSpecManager()

    @default("transport")
    def _default_transport(self) -> str:
        return "ipc"  # local sockets in a private temp folder, not TCP ports on localhost

    @default("ip")
    def _default_ip(self) -> str:
        import tempfile

        return os.path.join(type(self).ipc_dir or tempfile.gettempdir(), "evalkit-kernel")
