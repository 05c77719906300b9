"""The marks of the live checks against a real llama.cpp server (docs/live.md): ``BASE_URL``
from ``REGIO_LIVE_BASE_URL``, and :data:`LIVE` (``pytest.mark.live``, skipped with the reason when
no server is given), for a module's ``pytestmark``."""

from __future__ import annotations

import os

import pytest

__all__ = ["BASE_URL", "LIVE"]

BASE_URL = os.environ.get("REGIO_LIVE_BASE_URL")

LIVE = [
    pytest.mark.live,
    pytest.mark.skipif(
        not BASE_URL,
        reason="live check: set REGIO_LIVE_BASE_URL to a llama.cpp server "
        "(../shared/tools/local-llm.sh start; see docs/live.md)",
    ),
]
