"""dump_blueprint -> load_blueprint gives back an equal blueprint (hypothesis)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.blueprint import (
    Blueprint,
    CacheSpec,
    CaptureSpec,
    ChecklistSpec,
    ClearableSpec,
    CompactHistorySpec,
    CompactingSpec,
    CustomSpec,
    EvictionSpec,
    KeyedSpec,
    LayoutSpec,
    ModelSpec,
    PinnedSpec,
    RegionSpec,
    SeedEntry,
    SlidingWindowSpec,
    SummarizerSpec,
    TemporarySpec,
    WindowSpec,
    dump_blueprint,
    load_blueprint,
    validate_blueprint,
)

# Any printable text except braces (so no template variable can look like a clock, FC-27),
# with newlines, quotes, colons, '#', YAML indicators and non-ASCII letters.
_CHARS = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="{}\ufeff"
    ),
    max_size=8,
)
TEXT = st.lists(
    _CHARS | st.sampled_from(["\n", ": ", "- ", "#", "'", '"', "  ", "yes", "1.5", "null"]),
    max_size=6,
).map("".join)
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
SHARE = st.floats(min_value=0.01, max_value=1.0, allow_nan=False)
BUDGET = st.integers(0, 3000) | st.sampled_from(["1%", "2.5%", "3%", "0.5%"])


def common(draw: Any, name: str) -> dict[str, Any]:
    low = draw(st.none() | st.integers(0, 500))
    return {
        "name": name,
        "budget": draw(BUDGET),
        "min_tokens": low,
        "max_tokens": draw(st.none() | st.integers(low or 0, 4000)),
        "admission": draw(st.sampled_from(["evict", "reject"])),
        "volatility": draw(st.sampled_from(["grows", "rewritten"])),
        "description": draw(TEXT),
    }


def seeds(draw: Any, keyed: bool = False, roles: bool = False) -> Any:
    entries = draw(
        st.lists(
            st.builds(
                SeedEntry,
                text=TEXT.filter(str.strip),
                key=NAMES if keyed else st.none(),
                role=st.sampled_from(["user", "assistant", None]) if roles else st.none(),
            ),
            max_size=3,
            unique_by=lambda e: e.key if keyed else e.text,
        )
    )
    return tuple(entries) or None


PATTERNS = st.sampled_from(
    [r"\n*(?P<state>\(Open file: [^\n]*\))\s*\Z", r"(?m)^The time is [^\n]*\n*", "x: 'y'"]
)
TOOLS = st.lists(NAMES, min_size=1, max_size=3, unique=True).map(tuple)


def captures(draw: Any, kind: str) -> tuple[CaptureSpec, ...]:
    """Valid capture rules for a region of ``kind`` (keys only in keyed regions)."""
    key = kind == "keyed"
    options = [
        st.builds(CaptureSpec, rule=st.just("system_prompt"), pattern=PATTERNS),
        st.builds(
            CaptureSpec,
            rule=st.just("footer"),
            pattern=PATTERNS,
            strip=st.none() | st.booleans(),
            key=NAMES if key else st.none(),
        ),
        st.builds(
            CaptureSpec,
            rule=st.just("lookup"),
            tools=TOOLS,
            key=st.sampled_from(["user:{user_id}", "{tool}", "f:{a}:{b}"]) if key else st.none(),
        ),
    ]
    if kind in ("temporary", "clearable"):
        options.append(
            st.builds(
                CaptureSpec,
                rule=st.just("park"),
                min_tokens=st.none() | st.integers(1, 5000),
                keep=st.none() | st.integers(1, 9),
            )
        )
    return tuple(draw(st.lists(st.one_of(options), max_size=2)))


@st.composite
def simple_region(draw: Any, name: str) -> RegionSpec:
    kind = draw(st.sampled_from(["pinned", "temporary", "clearable", "keyed", "checklist"]))
    fields = common(draw, name)
    fields["capture"] = captures(draw, kind)
    if kind == "keyed":
        return KeyedSpec(
            **fields, seed=seeds(draw, keyed=True), max_entries=draw(st.none() | st.integers(1, 50))
        )
    if kind == "checklist":
        return ChecklistSpec(**fields, seed=seeds(draw), gate=draw(st.booleans()))
    cls = {"pinned": PinnedSpec, "temporary": TemporarySpec, "clearable": ClearableSpec}[kind]
    return cls(**fields, seed=seeds(draw))


@st.composite
def blueprints(draw: Any) -> Blueprint:
    names = draw(st.lists(NAMES, min_size=2, max_size=6, unique=True))
    regions: list[RegionSpec] = [draw(simple_region(n)) for n in names[:-1]]
    convo, history = names[-1], names[-1] + "_h"
    strategy = draw(st.sampled_from(["per_item", "bulk", "compact"]))
    regions.append(
        SlidingWindowSpec(
            **common(draw, convo),
            seed=seeds(draw, roles=True),
            max_items=draw(st.none() | st.integers(1, 200)),
            eviction=EvictionSpec(
                strategy=strategy,
                overflow=draw(st.integers(1, 30)),
                compact_count=draw(st.integers(1, 30)),
            ),
        )
    )
    if strategy == "compact":
        regions.append(CompactHistorySpec(**common(draw, history), source=convo))
    if draw(st.booleans()):
        at = draw(st.floats(0.2, 1.0))
        regions.append(
            CompactingSpec(
                **common(draw, "notes_x"),
                compact_at=at,
                threshold_tokens=draw(st.none() | st.integers(1, 5000)),
                target=draw(st.floats(0.01, at * 0.9)),
            )
        )
        regions.append(CompactHistorySpec(**common(draw, "notes_x_h"), source="notes_x"))
    if draw(st.booleans()):
        regions.append(
            CustomSpec(**common(draw, "custom_x"), render="pkg.mod:render", on_overflow=None)
        )
    return Blueprint(
        version=1,
        name=draw(TEXT.filter(str.strip)),
        description=draw(TEXT),
        model=ModelSpec(
            provider=draw(st.sampled_from(["anthropic", "openai", "llamacpp"])),
            name=draw(st.from_regex(r"[a-z][a-z0-9.-]{0,12}", fullmatch=True)),
            context_window=draw(st.integers(100_000, 1_000_000)),
            max_output_tokens=draw(st.integers(0, 20_000)),
        ),
        window=WindowSpec(
            max_tokens=draw(st.none() | st.integers(60_000, 100_000)), high_water=draw(SHARE)
        ),
        tokenizer=draw(st.sampled_from(["o200k_base", "cl100k_base", "heuristic"])),
        cache=CacheSpec(
            profile=draw(st.none() | st.just("anthropic:claude-sonnet-4-5")),
            ttl=draw(st.sampled_from(["5m", "1h"])),
        ),
        layout=LayoutSpec(
            strategy=draw(st.sampled_from(["naive", "kind", "volatility", "regio"])),
            chunk_tokens=draw(st.integers(1, 4096)),
            settle_share=draw(SHARE),
        ),
        summarizer=SummarizerSpec(
            model=draw(st.none() | st.just("claude-haiku-4-5")),
            max_summary_tokens=draw(st.integers(1, 4000)),
            context_window=draw(st.none() | st.integers(8_000, 200_000)),
            instructions=draw(TEXT),
        ),
        regions=tuple(regions),
    )


@settings(max_examples=80, deadline=None)
@given(bp=blueprints())
def test_a_valid_blueprint_survives_dump_and_load_unchanged(bp: Blueprint) -> None:
    validate_blueprint(bp)  # the generator makes valid blueprints (raises otherwise)
    text = dump_blueprint(bp)
    loaded = load_blueprint(text)
    assert loaded == bp
    assert dump_blueprint(loaded) == text


def test_a_dump_omits_defaults_and_keeps_declaration_order() -> None:
    bp = Blueprint(
        version=1,
        name="x",
        model=ModelSpec(provider="openai", name="gpt-4o", context_window=128000),
        regions=(
            TemporarySpec(name="b", budget=10),
            PinnedSpec(name="a", budget="5%", seed=(SeedEntry(text="hi\nthere"),)),
        ),
    )
    text = dump_blueprint(bp)
    assert "\nwindow:" not in text and "layout:" not in text and "admission" not in text
    assert text.index("name: b") < text.index("name: a")
    assert "seed: |-\n    hi\n    there" in text
    assert load_blueprint(text) == bp


def test_inline_seeds_make_a_dump_that_loads_anywhere(tmp_path: Path) -> None:
    (tmp_path / "policy.md").write_text("Be kind.\nRefund within 24 hours.\n")
    text = (
        "version: 1\nname: s\nmodel: {provider: openai, name: gpt-4o, context_window: 128000}\n"
        "regions:\n  - {name: policy, kind: pinned, budget: 500, seed: {file: policy.md}}\n"
        "  - {name: t, budget: 100}\n"
    )
    (tmp_path / "bp.yaml").write_text(text)
    bp = load_blueprint(tmp_path / "bp.yaml")
    assert "file: policy.md" in dump_blueprint(bp)
    standalone = load_blueprint(dump_blueprint(bp, inline_seeds=True))
    assert standalone.region("policy").seed == (
        SeedEntry(text="Be kind.\nRefund within 24 hours.\n"),
    )
    assert standalone.region("t") == bp.region("t")
