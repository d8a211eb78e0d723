"""The report kernel's log without ipykernel's "Kernel is running over TCP without encryption" warning.

``evalkit report`` runs its notebook on a kernel it starts itself. On POSIX the kernel listens on Unix sockets in
the run's scratch folder, and ipykernel has nothing to warn about; where that is not possible (a scratch folder
whose path is too long for a socket, or not POSIX) the kernel listens on localhost TCP ports, and ipykernel then
logs, on every run, a warning meant for kernels reachable over a network. The report's kernel is started by
evalkit, for evalkit, on loopback: :func:`kernel_arguments` gives it a config file (JSON, in the scratch folder)
that adds :class:`WithoutTcpWarning` to the kernel application's log, so that one warning is dropped and every
other kernel message still reaches stderr.

Imported by the kernel itself (by name, from the config): no import beyond the standard library.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

__all__ = ["KERNEL_TCP_WARNING", "WithoutTcpWarning", "kernel_arguments"]

#: The start of the warning ipykernel logs when its sockets are TCP without CurveZMQ keys.
KERNEL_TCP_WARNING = "Kernel is running over TCP without encryption"


class WithoutTcpWarning(logging.Filter):
    """Drops ipykernel's TCP warning (:data:`KERNEL_TCP_WARNING`), passes every other record."""

    def filter(self, record: logging.LogRecord) -> bool:
        return KERNEL_TCP_WARNING not in record.getMessage()


def kernel_arguments(folder: str | Path) -> list[str]:
    """The kernel's command-line arguments that load ``folder/kernel_log.json``, written here: the kernel
    application's logger (``IPKernelApp``) gets :class:`WithoutTcpWarning` before it opens its sockets."""
    path = Path(folder) / "kernel_log.json"
    config = {
        "IPKernelApp": {
            "logging_config": {
                "filters": {"without_tcp_warning": {"()": f"{__name__}.{WithoutTcpWarning.__name__}"}},
                "loggers": {"IPKernelApp": {"filters": ["without_tcp_warning"]}},
            }
        }
    }
    path.write_text(json.dumps(config), encoding="utf-8")
    return [f"--IPKernelApp.extra_config_file={path}"]
