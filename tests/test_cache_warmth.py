"""The cache's warmth is tested in one place (``Session.cache_expired``): the cache-expiry
compaction (``flushing.queue_expired``) and the fork decision (``Session.fork_terms``) read
it, so they cannot disagree about the same clock (they were two copies with inverted logic)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from mutation_support import fuzz_settings
from regio.engine import Engine

BLUEPRINT = """
version: 1
name: warmth
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 20000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 500, seed: "You help."}
  - {name: conversation, kind: sliding_window, budget: "60%"}
"""


@fuzz_settings(25)
@given(idle=st.floats(min_value=0.0, max_value=7200.0, allow_nan=False))
@example(idle=300.0)  # at the TTL exactly: still warm
def test_the_cache_is_expired_exactly_when_the_ttl_has_passed_and_both_readers_agree(
    idle: float,
) -> None:
    clock = [100.0]
    engine = Engine.from_blueprint(BLUEPRINT, clock=lambda: clock[0])
    c = engine.session
    ttl = c.cache_ttl_s
    assert ttl is not None  # Anthropic's rule: 5 minutes
    assert not c.cache_expired() and c.fork_terms()["warm"]  # nothing sent yet: warm
    engine.add_user("hi")
    engine.request()
    clock[0] += idle
    assert c.cache_expired() is (idle > ttl)
    assert c.fork_terms()["warm"] is (idle <= ttl)
