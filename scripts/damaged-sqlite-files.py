#!/usr/bin/env python3
"""Damage a SQLite session database N times and count what opening, loading and saving it
raises (docs/security.md, "Session store fuzzing").

    PYTHONPATH=src python3 scripts/damaged-sqlite-files.py [SEED] [N]

Builds a database of one session (five turns of tests/store_support.py's ``play_turn``), then
for each of N copies flips or sets 1, 2, 4 or 16 random bytes, opens it with ``SQLiteStore``,
loads the session, appends a user message and saves it. Prints the count per outcome: ``ok``,
``regio:<stage>`` (a ``RegioError``) or ``<stage>:<exception type>`` (anything else: a raw
error), and the last lines of the first traceback of each raw kind.
"""

from __future__ import annotations

import collections
import os
import random
import sys
import tempfile
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from regio.errors import RegioError
from regio.persistence.store import SQLiteStore
from store_support import load, play_turn, store_engine


def main(seed: int = 0, n: int = 300) -> None:
    folder = tempfile.mkdtemp()
    base = os.path.join(folder, "base.db")
    store = SQLiteStore(base)
    engine = store_engine()
    for turn in range(1, 6):
        play_turn(engine, turn)
        engine.save_to(store)
    store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    data = Path(base).read_bytes()
    rng = random.Random(seed)
    outcomes: collections.Counter[str] = collections.Counter()
    first: dict[str, list[str]] = {}
    for i in range(n):
        damaged = bytearray(data)
        for _ in range(rng.choice([1, 1, 2, 4, 16])):
            pos = rng.randrange(len(damaged))
            if rng.random() < 0.7:
                damaged[pos] ^= 1 << rng.randrange(8)
            else:
                damaged[pos] = rng.randrange(256)
        path = os.path.join(folder, f"damaged{i}.db")
        Path(path).write_bytes(bytes(damaged))
        stage = "open"
        try:
            opened = SQLiteStore(path)
            stage = "load"
            loaded = load(opened)
            stage = "append"
            loaded.add_user("after the damage")
            stage = "save"
            loaded.save_to(opened, "s")
            outcomes["ok"] += 1
        except RegioError:
            outcomes[f"regio:{stage}"] += 1
        except Exception as exc:
            kind = f"{stage}:{type(exc).__module__}.{type(exc).__name__}"
            outcomes[kind] += 1
            first.setdefault(kind, traceback.format_exc().splitlines()[-4:])
    print(f"{len(data)} bytes, {n} damaged copies, seed {seed}")
    for kind, count in sorted(outcomes.items()):
        print(f"{count:5d} {kind}")
    for kind, lines in first.items():
        print(f"== {kind}")
        print("\n".join(lines))


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
