"""Keep promptflow and azure-ai-evaluation from reaching the network, or leaving folders, on their own.

Importing either library sets up promptflow's telemetry: an Application Insights exporter whose background
worker polls ``settings.sdk.monitor.azure.com`` and sends usage events. evalkit sends judge requests to
the model the user configured and nothing else, so before those libraries load it turns off, unless the
user has set them otherwise: promptflow tracing and its local trace service, the exporter's control-plane
polling and statsbeat, and the telemetry logger (disabled through the standard ``logging`` API).

The exporter is still *built*: ``import promptflow`` runs ``TraceTelemetryHelper()`` at module level
(``promptflow/_sdk/_utilities/tracing_utils.py``), which builds ``PromptFlowSDKLogHandler`` and so an
``AzureMonitorLogExporter`` whatever the telemetry setting, and the exporter creates its offline-retry folder
``<tempdir>/Microsoft-AzureMonitor-<sha256>/opentelemetry-python-<key>`` at once. Neither promptflow nor the
exporter (azure-monitor-opentelemetry-exporter 1.0.0b45) offers a setting that stops that: the exporter's
``disable_offline_storage`` and ``storage_directory`` are constructor arguments promptflow never passes. So
evalkit imports promptflow itself, first, with Python's temporary folder (``tempfile.tempdir``, the
documented switch) pointed at a fresh ``evalkit-promptflow-*`` folder that it removes once the import is done.
The exporter never writes there afterwards (it stores telemetry only when sending fails, and with the logger
disabled it sends nothing); its maintenance thread finds the folder gone and stays silent.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator

QUIET_ENVIRONMENT = {
    "PF_DISABLE_TRACING": "true",
    "PF_TRACING_SKIP_LOCAL_SETUP": "true",
    "APPLICATIONINSIGHTS_CONTROLPLANE_DISABLED": "true",
    "APPLICATIONINSIGHTS_STATSBEAT_DISABLED_ALL": "true",
}
TELEMETRY_LOGGER = "promptflow._sdk._telemetry"
SCRATCH_PREFIX = "evalkit-promptflow-"

_lock = threading.Lock()


def quiet_llm_libraries() -> None:
    """Set the switches above (``setdefault``: a user's own choice wins) and mute promptflow telemetry.

    Cheap, and imports nothing: a run of deterministic evaluators never loads promptflow (2 s, and threads that
    would make evalkit's forked evaluator workers unsafe).
    """
    for name, value in QUIET_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    logging.getLogger(TELEMETRY_LOGGER).disabled = True


def import_promptflow_quietly() -> None:
    """:func:`quiet_llm_libraries`, then import promptflow (when installed) without leaving its exporter's
    folder in the temporary folder. Called just before something imports promptflow or azure-ai-evaluation:
    a custom LLM judge's module, evalkit's promptflow hooks, azure-ai-evaluation's evaluator objects."""
    quiet_llm_libraries()
    with _lock:
        if "promptflow" in sys.modules or importlib.util.find_spec("promptflow") is None:
            return
        with _scratch_tempdir():
            importlib.import_module("promptflow")


@contextlib.contextmanager
def _scratch_tempdir() -> Iterator[str]:
    """Within the block, ``tempfile.gettempdir()`` is a fresh private folder; it is removed afterwards."""
    scratch = tempfile.mkdtemp(prefix=SCRATCH_PREFIX)
    before = tempfile.tempdir
    tempfile.tempdir = scratch
    try:
        yield scratch
    finally:
        tempfile.tempdir = before
        shutil.rmtree(scratch, ignore_errors=True)
