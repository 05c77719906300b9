"""What the proxy adds to a request late in its session against one early in it, under a
steady load: one worker serving 100 sessions at once, at every stage of their 50 steps at
every moment, as a server serves sessions that started at different times.

Why a second design: in ``benchmarks/test_bench_proxy.py`` every session starts within the
first model interval, so the whole worker moves through the stages together: its first 10% of
requests are served while every window holds ~3,000 tokens and its last 10% while every window
holds ~17,000. A late request there waits behind the other sessions' late (larger) work, so its
ratio to an early one measures the worker's load growing as much as the cost of the request's
own session growing. Here the load does not grow, and the ratio is what a session's length
adds to its own requests.

Setup (:mod:`proxy_load`): ``REGIO_BENCH_SESSIONS`` (default 100) slots each run four
sessions back to back, all of the same shape (``REGIO_BENCH_STEPS`` steps at most, default
50): slot ``n`` starts with a lead-in of ``k = 1 + n (STEPS - 1) // SESSIONS`` steps (1 to
``STEPS - 1``), then a session of ``STEPS`` steps, then the measured session of ``STEPS`` steps,
then a tail of ``STEPS - k`` steps. After the lead-ins (from step ``STEPS`` of the run on) the
slots sit at stages ``(t - k) mod STEPS`` at step ``t``: spread evenly over the stages, so the
worker's load holds still; every measured session runs inside that steady stretch (steps
``STEPS + k`` to ``2 STEPS + k``), and the tails keep it steady until the last of them ends.
Every slot makes ``3 STEPS`` requests. A measured session is known by the session id the
proxy returns (``x-regio-session``).

Measured, per request of the measured sessions (the request log): the proxy's own CPU
(``added_cpu_ms``) and the wall time it added (``added_ms``; not the upstream's), p50 and p99,
for the first 10%, the 10% from 40% of the way and the last 10% of each session's requests,
with the ratios last / first and last / full.

Asserted: the proxy's own CPU per request (p50) and the added latency (p50 and p99), last 10%
against first 10%, at most 1.5 (the issue's flatness target). Not a timed test: the figures
follow the machine; run it by hand on an otherwise idle machine, ``pytest
benchmarks/test_bench_proxy_stationary.py -s`` (about ``3 STEPS`` model intervals, 13
minutes at the defaults), and read the table it prints; docs/proxy.md has a run.

Where the added time went: the worker's request log (``--request-log``, ``requests.jsonl`` in
the test's ``tmp_path``, whose path it prints; ``REGIO_BENCH_LOG=path`` keeps a copy there,
:func:`proxy_load.logged_sessions`) has each request's ``added_ms`` split into parts
(:mod:`regio.proxy.requestlog`); ``python benchmarks/proxy_waits.py path --requests STEPS``
tabulates them for the first and last 10% of each session of ``STEPS`` requests (the measured
sessions and the ones before them) and the slowest 1%, and says how the slowest cluster in time.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from proxy_load import (  # skips the module without the proxy extra
    MODEL_SECONDS,
    SESSIONS,
    STEPS,
    latency_figures,
    logged_sessions,
    phases,
    print_table,
    serving,
    step,
    warmed_client,
)


def _lead_steps(n: int) -> int:
    """``k`` of slot ``n`` (module doc): 1 to ``STEPS - 1``, spread evenly over the slots."""
    return 1 + n * (STEPS - 1) // SESSIONS


def test_added_latency_of_a_late_request_stays_flat_under_a_steady_load(tmp_path: Path) -> None:
    measured_ids: set[str] = set()
    with serving(tmp_path) as (url, _proxy, log):

        async def run() -> None:
            async with warmed_client(url) as client:

                async def slot(n: int) -> None:
                    await asyncio.sleep(random.Random(n).uniform(0, MODEL_SECONDS))  # spread
                    k = _lead_steps(n)
                    parts = (("lead-in", k), ("before", STEPS), ("measured", STEPS))
                    for part, steps in (*parts, ("tail", STEPS - k)):
                        text = f"Session {n} ({part}): read every file."
                        history = [{"role": "user", "content": text}]
                        for index in range(steps):
                            session = await step(client, url, n, history, index)
                            if part == "measured":
                                measured_ids.add(session)

                await asyncio.gather(*(slot(n) for n in range(SESSIONS)))

        asyncio.run(run())
    print(f"\nrequest log: {log} (benchmarks/proxy_waits.py reads it)")
    measured = {k: v for k, v in logged_sessions(log).items() if k in measured_ids}
    assert len(measured) == SESSIONS and all(len(v) == STEPS for v in measured.values())
    table = {
        name: latency_figures([v[i] for v in measured.values() for i in steps])
        for name, steps in phases().items()
    }
    print_table(f"{SESSIONS} slots x {3 * STEPS} steps, a steady load, one worker", table)
    first, last = table["first 10%"], table["last 10%"]
    for key in ("proxy cpu ms p50", "added ms p50", "added ms p99"):
        assert last[key] / first[key] <= 1.5, (key, table)
