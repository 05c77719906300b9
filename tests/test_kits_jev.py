"""regio on jev-harness-sdk 1.2's compaction survival, simulated mode, through its own
protocol: a project's instruction files (a root CLAUDE.md, an unscoped rule, a nested
CLAUDE.md) get jev's planted codewords and header rules, the session is jev's (the files, then
40 turns of filler), and :func:`regio.bench.kits.jev_strategy` compacts it three times. Every
codeword and every header rule must survive every round; jev's own report must find no lost
source. The files are given to the engine as messages, so they are summarized like the rest
(pinned in a blueprint region they would trivially stay)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("jev_harness", reason="jev-harness-sdk is not installed")

from jev_harness.modules.compaction_survival import checks, sim
from jev_harness.modules.compaction_survival.canary import canary_text, insert_block
from jev_harness.modules.compaction_survival.service import (
    CompactionOptions,
    build_report,
    prepare,
)

from regio.bench.kits import jev_strategy

ROOT = """# Project guide

This service ingests partner invoices and exports them to the ledger.

## How we work
- Run `make test` before every commit; the suite must pass.
- Never commit secrets or `.env` files.
- Use type hints on every public function.
- Keep functions under 40 lines where you can.

## Layout
The ingestion code lives in `src/ingest/` and the exporters in `src/export/`.
"""
RULE = """Prefer small pull requests. Describe the behaviour change in the first line of the
commit message, in the imperative mood.
"""
NESTED = """# API package
Handlers return typed responses; validation errors are 422, never 500.
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / ".claude" / "rules").mkdir(parents=True)
    (tmp_path / "src" / "api").mkdir(parents=True)
    (tmp_path / "CLAUDE.md").write_text(ROOT)
    (tmp_path / ".claude" / "rules" / "style.md").write_text(RULE)
    (tmp_path / "src" / "api" / "CLAUDE.md").write_text(NESTED)
    (tmp_path / "src" / "api" / "handlers.py").write_text("def handle():\n    return None\n")
    return tmp_path


def _run(tmp_path: Path, strategy: sim.Strategy) -> tuple[sim.StrategyRun, object]:
    options = CompactionOptions(project=_project(tmp_path), rounds=3, trials=1, strategies=[])
    discovery, plan = prepare(options)
    texts = {  # each file with jev's planted block, as jev's simulated mode reads it
        c.source.id: insert_block(
            (tmp_path / c.source.path).read_text(), canary_text(c), options.position
        )
        for c in plan.canaries
    }
    run = sim.run_strategy(strategy, plan, rounds=3, trials=1, texts=texts)
    return run, build_report(options, discovery, plan, [run])


def test_every_codeword_and_header_rule_survives_three_compactions(tmp_path: Path) -> None:
    run, report = _run(tmp_path, jev_strategy())
    assert len(run.source_ids()) >= 3
    for observation in run.observations:
        assert observation.recalled, observation
        assert observation.behavior_followed in (None, True), observation
    lost = {f"{checks.MODULE}.source_lost", f"{checks.MODULE}.scoped_rule_lost"}
    assert not [f for f in report.findings if f.rule_id in lost]  # type: ignore[attr-defined]


def test_jevs_own_extractive_strategy_loses_what_regio_keeps(tmp_path: Path) -> None:
    run, _ = _run(tmp_path, sim.extractive())
    final = [o for o in run.observations if o.round == run.rounds]
    assert not all(o.recalled for o in final)  # the measure can fail
