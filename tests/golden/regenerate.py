"""Rewrite ``tests/golden/payload-hashes.json`` from today's code.

Run from the project root: ``python -m tests.golden.regenerate``. Only do this for a change of
payload bytes you meant, and say why in the commit message.
"""

from __future__ import annotations

import json
import sys

from .payloads import GOLDEN_FILE, collect


def main() -> int:
    data = collect()
    # one line per trace: small, and a diff names the trace that changed
    lines = [
        f"{json.dumps(trace)}: {json.dumps(data[trace], sort_keys=True)}" for trace in sorted(data)
    ]
    GOLDEN_FILE.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    total = sum(api["requests"] for t in data.values() for s in t.values() for api in s.values())
    print(f"wrote {GOLDEN_FILE.name}: {len(data)} traces, {total} payloads", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
