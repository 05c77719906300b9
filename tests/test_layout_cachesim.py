"""The layouts through the Anthropic cache simulator (regio.cache): requests are accepted and
the regio layout reads more of the prefix than every baseline on a tool loop."""

from __future__ import annotations

from layout_support import TOOLS, answer, call, make_window, say
from regio.cache.types import CacheReport
from regio.layout import assemble, to_cache_request
from regio.providers import cache_model_for, economics_for

MODEL = "claude-sonnet-4-5"


def _run(strategy: str, turns: int = 25) -> CacheReport:
    sim = cache_model_for(f"anthropic:{MODEL}")
    w = make_window()
    state, outs = None, []
    for n in range(turns):
        say(w, "user", f"q{n} " * 60)
        call(w, f"a{n}", f"c{n}a", f"c{n}b")
        answer(w, f"c{n}a", f"c{n}b")
        if n % 5 == 0:
            w.write("notes", f"fact {n} " * 40, tokens=120)
        w.clear("scratch")
        w.write("scratch", f"step {n}", tokens=4)
        req = assemble(
            w, strategy, tools=TOOLS, state=state, economics=economics_for("anthropic", MODEL)
        )
        state = req.state
        cr = to_cache_request(req, t_start=n * 20.0, id=f"r{n:03d}", model=MODEL)
        outs.append(sim.process(cr))
        say(w, "assistant", f"ok {n}")
    return CacheReport.from_outcomes(MODEL, outs)


def test_the_regio_layout_reads_more_and_costs_less_than_every_baseline():
    reports = {s: _run(s) for s in ("naive", "kind", "volatility", "regio")}
    regio = reports.pop("regio")
    assert regio.hit_rate > 0.9
    for name, rep in reports.items():
        assert regio.hit_rate > rep.hit_rate, name
        assert regio.input_units < rep.input_units, name
