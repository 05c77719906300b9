"""``--request-log PATH``: one JSON line per request, for operators and for checking leases.

Each line: ``session``, ``worker`` (the process id), ``leased`` / ``released`` (when the
request took and gave back its session's lease, seconds since the epoch), ``committed``
(whether its work was saved), ``compacted``, ``repairs`` (the changes the repair of the
client's history made, by action: ``{"call_closed": 1}``), ``status`` (the upstream's),
``items`` (the client history items the session holds after it), ``client_tokens`` /
``upstream_tokens``, ``passthrough`` (a request sent upstream unmanaged: ``{"reason":
"unreadable_item", "place": "messages[1]: ..."}``; a request of no session, another path or
one unreadable before its session was found, has ``session`` null and only ``status`` and
``passthrough``), ``added_cpu_ms`` (the proxy's own CPU time for the request) and
``added_ms`` (the wall time the proxy added: reading the request, finding and leasing the
session, laying out, answering regio's tools, committing, waiting for a compaction that ran
beside the upstream call when it outlasted it; not the upstream's time), ``beside_ms`` (the
wall time of a compaction run beside the upstream call, while the model generated) and, with
``--summarizer upstream``, ``summary_calls`` / ``summary_fallbacks`` / ``summary_input_tokens``
/ ``summary_output_tokens`` (the summary requests the request's compactions sent upstream, the
summaries the offline summarizer wrote instead, their reported usage:
:mod:`regio.proxy.summaries`; zero otherwise). No header, no key, no content. Lines are
appended with one ``write`` each (``O_APPEND``), so the workers
of one machine can share a file.
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
