"""``--request-log PATH``: one JSON line per request, for operators and for checking leases.

Each line: ``session``, ``worker`` (the process id), ``leased`` / ``released`` (when the
request took and gave back its session's lease, seconds since the epoch), ``committed``
(whether its work was saved), ``compacted``, ``status`` (the upstream's), ``items`` (the client
history items the session holds after it), ``client_tokens`` / ``upstream_tokens``,
``added_cpu_ms`` (the proxy's own CPU time for the request) and ``added_ms`` (the wall time the
proxy added: reading the request, finding and leasing the session, laying out, answering
regio's tools, committing; not the upstream's time). No header, no key, no content. Lines are
appended with one ``write`` each (``O_APPEND``), so the workers of one machine can share a
file.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

__all__ = ["log_request"]


def log_request(path: str | None, **fields: Any) -> None:
    """Append one line with ``fields`` (plus ``worker`` and ``released``) to ``path`` (``None``:
    nothing)."""
    if not path:
        return
    line = json.dumps({"worker": os.getpid(), "released": time.time(), **fields}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
