"""Keep promptflow and azure-ai-evaluation from reaching the network on their own.

Importing either library sets up promptflow's telemetry: an Application Insights exporter whose background
worker polls ``settings.sdk.monitor.azure.com`` and sends usage events. evalkit sends judge requests to
the model the user configured and nothing else, so before those libraries load it turns off, unless the
user has set them otherwise: promptflow tracing and its local trace service, the exporter's control-plane
polling and statsbeat, and the telemetry logger (disabled through the standard ``logging`` API).
"""

from __future__ import annotations

import logging
import os

QUIET_ENVIRONMENT = {
    "PF_DISABLE_TRACING": "true",
    "PF_TRACING_SKIP_LOCAL_SETUP": "true",
    "APPLICATIONINSIGHTS_CONTROLPLANE_DISABLED": "true",
    "APPLICATIONINSIGHTS_STATSBEAT_DISABLED_ALL": "true",
}
TELEMETRY_LOGGER = "promptflow._sdk._telemetry"


def quiet_llm_libraries() -> None:
    """Set the switches above (``setdefault``: a user's own choice wins) and mute promptflow telemetry."""
    for name, value in QUIET_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    logging.getLogger(TELEMETRY_LOGGER).disabled = True
