"""Providers are objects: every registered provider has every part and each part does what it
declares (its renderer renders and checks, its tool definitions are in its payload exactly as
they are counted, its chat format is the counters', its usage parser and response reader read
their documented examples and no other provider's, its cache rule resolves); lookups go by
name, then alias; the default cacheable-prefix minimum is the rules data's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from progress_support import conversation_blueprint
from regio.content import Message
from regio.engine import Engine
from regio.layout import DEFAULT_MIN_CACHE_TOKENS, CacheEconomics, ToolSpec
from regio.providers import (
    DEFAULT_PROVIDER,
    Provider,
    UnknownProviderError,
    economics_for,
    find_provider,
    provider_for,
    providers,
    register_provider,
    registry,
    response_reader_for,
    response_readers,
    usage_parser_for,
    usage_parsers,
)
from regio.session import normalize_usage
from regio.tokens import chat_overhead

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "15"))

TOOL = ToolSpec(
    "read_file",
    "Read a file of the repository.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def _engine() -> Engine:
    engine = Engine.from_blueprint(conversation_blueprint("providers", 20000))
    engine.add_user("hello")
    engine.add_assistant("hi")
    engine.add_user("read it")
    return engine


def _values(value: Any) -> Iterator[Any]:
    """Every dict and list inside ``value`` (pre-order), dicts without their cache markers."""
    if isinstance(value, dict):
        yield {k: v for k, v in value.items() if k != "cache_control"}
        for v in value.values():
            yield from _values(v)
    elif isinstance(value, list):
        yield value
        for v in value:
            yield from _values(v)


def _assert_counted_as_rendered(provider: Provider, engine: Engine, tools: list[ToolSpec]) -> None:
    """The provider's tool definitions are in its payload in order, exactly as the framing
    counts them, and the budget counts them with that framing (or, for an API that sends
    none, the payload is the one without tools and they cost nothing)."""
    request, payload = engine.request(provider.name, tools=tools)
    specs = [b.tool for b in request.blocks if b.level == "tools" and b.tool is not None]
    framing = provider.tool_framing
    counted = engine.budget.tools_tokens(tools, provider.name)
    if framing.definition is None:
        stripped = [b for b in request.blocks if b.level != "tools"]
        bare = msgspec.structs.replace(request, blocks=tuple(stripped), total_tokens=-1)
        assert provider.renderer.render(
            bare, model="m", max_tokens=100
        ) == provider.renderer.render(request, model="m", max_tokens=100)
        assert counted == 0
        return
    found = list(_values(payload))
    positions = [found.index(framing.definition(t)) for t in specs]  # ValueError: not sent so
    assert positions == sorted(positions)
    count = engine.budget.count_text
    each = sum(count(msgspec.json.encode(framing.definition(t)).decode()) for t in specs)
    framed = each + framing.per_tool * len(specs) + framing.per_request
    assert counted == (framed if specs else 0)


def test_every_registered_provider_has_every_part_and_each_works() -> None:
    engine = _engine()
    for p in providers():
        assert find_provider(p.name) is p, p.name
        assert p.default_model, p.name
        _, payload = engine.request(p.name, tools=[TOOL])
        assert p.renderer.check(payload) == [], p.name
        _assert_counted_as_rendered(p, engine, [TOOL])
        assert chat_overhead(p.chat_overhead.name) == p.chat_overhead, p.name
        fields = normalize_usage(p.usage.example)
        assert fields["api"] == p.usage.api and fields["prompt_tokens"] > 0, p.name
        parts = ("uncached_tokens", "cache_read_tokens", "cache_write_tokens")
        writes = fields["cache_write_5m_tokens"] + fields["cache_write_1h_tokens"]
        assert fields["prompt_tokens"] == sum(fields[k] for k in parts) + writes, p.name
        message = p.responses.message(dict(p.responses.example))
        assert isinstance(message, Message) and message.role == "assistant" and message.blocks
        assert usage_parser_for(p.responses.example[p.responses.usage_key]) is not None, p.name
        if p.cache_rule is not None:
            rule = p.cache_rule.resolve(p.default_model)
            expected = rule.min_tokens or DEFAULT_MIN_CACHE_TOKENS  # no minimum in the rule
            assert economics_for(p.name, p.default_model).min_cache_tokens == expected
        else:
            assert economics_for(p.name, p.default_model) == CacheEconomics()


def test_usage_parsers_and_response_readers_recognize_only_their_own_shapes() -> None:
    for parser in usage_parsers():
        claims = [p.api for p in usage_parsers() if p.recognizes(parser.example)]
        assert claims == [parser.api]
        assert usage_parser_for(parser.example) is parser
    for reader in response_readers():
        claims = [r.api for r in response_readers() if r.recognizes(reader.example)]
        assert claims == [reader.api]
        assert response_reader_for(reader.example) is reader


@st.composite
def _tools(draw: st.DrawFn) -> list[ToolSpec]:
    names = draw(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True), max_size=4))
    out = []
    for name in dict.fromkeys(names):
        props = draw(
            st.dictionaries(
                st.from_regex(r"[a-z]{1,8}", fullmatch=True),
                st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]),
                max_size=3,
            )
        )
        text = draw(st.text(max_size=40))
        out.append(ToolSpec(f"app_{name}", text, {"type": "object", "properties": props}))
    return out


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(tools=_tools())
def test_every_provider_counts_tool_definitions_as_its_renderer_sends_them(tools) -> None:
    engine = _engine()
    for p in providers():
        _assert_counted_as_rendered(p, engine, tools)


def test_the_default_minimum_cacheable_prefix_is_the_default_providers_rule() -> None:
    default = provider_for(DEFAULT_PROVIDER)
    assert default.cache_rule is not None
    rule = default.cache_rule.resolve(default.default_model)
    assert DEFAULT_MIN_CACHE_TOKENS == rule.min_tokens == CacheEconomics().min_cache_tokens
    assert economics_for(None, None).min_cache_tokens == rule.min_tokens


def test_a_name_finds_its_provider_before_an_alias_and_unknown_names_list_the_known(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert provider_for("claude") is provider_for("anthropic")
    assert provider_for("llama.cpp") is provider_for("llamacpp")
    assert find_provider("nobody") is None and find_provider(None) is None
    with pytest.raises(UnknownProviderError, match="registered: anthropic, openai") as caught:
        provider_for("nobody")
    assert isinstance(caught.value, KeyError)
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # restored after
    vllm = provider_for("vllm")
    proxy = register_provider(attrs.evolve(vllm, name="claude-proxy", aliases=("vllm",)))
    assert find_provider("vllm") is vllm  # a registered name beats another's alias
    assert find_provider("Claude-Proxy") is proxy


def test_register_provider_refuses_anything_but_a_provider() -> None:
    with pytest.raises(TypeError, match=r"expected a regio\.providers\.Provider"):
        register_provider({"name": "dict"})  # type: ignore[arg-type]
