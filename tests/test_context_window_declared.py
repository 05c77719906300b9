"""A provider adapter's declared context window is read: an engine without a window takes the
adapter's; when both are set and disagree the smaller is used with a warning. A non-positive
context window is refused where it is given (blueprint, EngineOptions, Engine keywords,
provider adapters, a llama.cpp server's n_ctx, a framework's model profile) with a RegioError
naming the place."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.agent import AgentLoop
from regio.agent.llamacpp import LlamaCppServer
from regio.agent.providers import AnthropicProvider, OpenAICompatibleProvider
from regio.blueprint import BlueprintError, load_blueprint
from regio.engine import Engine
from regio.errors import ContextWindowError, RegioError
from regio.regions import Pinned, SlidingWindow
from regio.session import EngineOptions
from regio.session._declared import (
    ContextWindowAdopted,
    adopt_context_window,
    declared_context_window,
)
from runtime_stubs import make_engine

BLUEPRINT = """
version: 1
name: declared
model: {{provider: openai_compatible, name: local, context_window: {window}}}
tokenizer: heuristic
regions:
  - {{name: system, kind: pinned, budget: 400, seed: "You are careful."}}
  - {{name: conversation, kind: sliding_window, budget: 3000}}
"""


def _bare(**options: Any) -> Engine:
    regions = [Pinned(name="system", budget=500), SlidingWindow(name="conversation", budget=5000)]
    return make_engine(regions, max_tokens=100_000, **options)


def _events(engine: Engine) -> list[ContextWindowAdopted]:
    seen: list[ContextWindowAdopted] = []
    engine.subscribe(lambda e: seen.append(e) if isinstance(e, ContextWindowAdopted) else None)
    return seen


# ----- the adapter's window is read ----------------------------------------------------------


def test_engine_without_a_window_takes_the_providers() -> None:
    engine = _bare()
    assert engine.options.context_window is None
    seen = _events(engine)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AgentLoop(engine=engine, provider=OpenAICompatibleProvider("m", context_window=8192))
    assert engine.options.context_window == 8192
    assert engine.budget.options.context_window == 8192
    assert engine.limit == 8192 - engine.options.output_reserve
    assert seen == [ContextWindowAdopted(None, 8192, 8192, "OpenAICompatibleProvider")]


def test_disagreeing_windows_use_the_smaller_with_a_warning() -> None:
    engine = Engine.from_blueprint(BLUEPRINT.format(window=32000))
    seen = _events(engine)
    with pytest.warns(UserWarning, match="declares a context window of 16000.*32000.*16000"):
        AgentLoop(engine=engine, provider=AnthropicProvider("m", context_window=16000))
    assert engine.options.context_window == 16000
    assert seen[0].engine_window == 32000 and seen[0].used == 16000
    larger = Engine.from_blueprint(BLUEPRINT.format(window=32000))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the engine's window is already the smaller: kept
        AgentLoop(engine=larger, provider=AnthropicProvider("m", context_window=64000))
    assert larger.options.context_window == 32000


def test_agreeing_windows_change_nothing() -> None:
    engine = Engine.from_blueprint(BLUEPRINT.format(window=32000))
    seen = _events(engine)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AgentLoop(engine=engine, provider=AnthropicProvider("m", context_window=32000))
        AgentLoop(engine=engine, provider=AnthropicProvider("m"))  # declares none
    assert engine.options.context_window == 32000 and seen == []


class _Server(LlamaCppServer):
    def __init__(self, props: dict[str, Any]) -> None:
        super().__init__("http://127.0.0.1:1/v1")
        self._props = props

    def props(self) -> dict[str, Any]:
        return self._props


def test_llamacpp_server_n_ctx_is_the_declared_window() -> None:
    assert _Server({"default_generation_settings": {"n_ctx": 4096}}).context_window() == 4096
    assert _Server({"n_ctx": 2048}).context_window() == 2048
    assert _Server({}).context_window() is None
    server = _Server({"default_generation_settings": {"n_ctx": 4096}})
    engine = _bare()
    provider = OpenAICompatibleProvider("m", context_window=server.context_window())
    AgentLoop(engine=engine, provider=provider)
    assert engine.options.context_window == 4096


def test_declared_window_survives_save_and_load(tmp_path: Any) -> None:
    engine = Engine.from_blueprint(BLUEPRINT.format(window=32000))
    with pytest.warns(UserWarning):
        adopt_context_window(engine, 12000, "test adapter")
    loaded = Engine.load(engine.save(tmp_path / "state.json"))
    assert loaded.options.context_window == 12000


def test_langchain_profile_window_is_read() -> None:
    pytest.importorskip("langchain")
    from regio.adapters.window import langchain_window

    class Model:
        def __init__(self) -> None:
            self.profile = {"max_input_tokens": 200000}

    assert langchain_window(Model()) == 200000
    assert langchain_window(object()) is None


def test_litellm_model_map_window_is_read() -> None:
    pytest.importorskip("litellm")
    from regio.adapters.window import litellm_window

    window = litellm_window("gpt-4o")
    assert isinstance(window, int) and window > 0
    assert litellm_window("no-such-provider/no-such-model") is None


# ----- a non-positive window is refused where it is given -------------------------------------

_BAD = [0, -1, -200000, 1.5, True, "8k"]


@pytest.mark.parametrize("bad", [0, -1])
def test_blueprint_refuses_a_non_positive_window_naming_the_field(bad: int) -> None:
    with pytest.raises(BlueprintError, match=r"model\.context_window") as info:
        load_blueprint(BLUEPRINT.format(window=bad))
    assert isinstance(info.value, RegioError)


@pytest.mark.parametrize("bad", _BAD)
def test_engine_options_refuse_a_non_positive_window_naming_the_field(bad: Any) -> None:
    with pytest.raises(ContextWindowError, match=r"EngineOptions\.context_window"):
        EngineOptions(context_window=bad)
    with pytest.raises(ContextWindowError, match=r"EngineOptions\.context_window"):
        _bare(context_window=bad)
    with pytest.raises(ContextWindowError, match=r"EngineOptions\.context_window"):
        Engine.from_blueprint(BLUEPRINT.format(window=32000), context_window=bad)


@pytest.mark.parametrize("bad", _BAD)
@pytest.mark.parametrize("provider", [AnthropicProvider, OpenAICompatibleProvider])
def test_providers_refuse_a_non_positive_window_naming_themselves(provider: Any, bad: Any) -> None:
    with pytest.raises(ContextWindowError, match=provider.__name__):
        provider("m", context_window=bad)


@pytest.mark.parametrize("bad", _BAD)
def test_adapter_sources_refuse_a_non_positive_window_naming_the_source(bad: Any) -> None:
    with pytest.raises(ContextWindowError, match=r"127\.0\.0\.1"):
        _Server({"n_ctx": bad}).context_window()

    class Adapter:
        context_window = bad

    with pytest.raises(ContextWindowError, match=r"Adapter\.context_window"):
        declared_context_window(Adapter())
    engine = _bare()
    with pytest.raises(ContextWindowError, match="my adapter"):
        adopt_context_window(engine, bad, "my adapter")
    assert engine.options.context_window is None  # nothing changed


@pytest.mark.parametrize("bad", _BAD)
def test_langchain_profile_refuses_a_non_positive_window(bad: Any) -> None:
    pytest.importorskip("langchain")
    from regio.adapters.window import langchain_window

    class Model:
        def __init__(self) -> None:
            self.profile = {"max_input_tokens": bad}

    with pytest.raises(ContextWindowError, match="max_input_tokens"):
        langchain_window(Model())


# ----- property -------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    engine_window=st.none() | st.integers(1, 10**7),
    declared=st.none() | st.integers(1, 10**7),
)
def test_the_window_in_use_is_the_smallest_known(
    engine_window: int | None, declared: int | None
) -> None:
    engine = _bare(context_window=engine_window)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        used = adopt_context_window(engine, declared, "adapter")
    known = [w for w in (engine_window, declared) if w is not None]
    assert used == (min(known) if known else None)
    assert engine.options.context_window == used == engine.budget.options.context_window
    shrunk = engine_window is not None and declared is not None and declared < engine_window
    assert bool(caught) == shrunk  # warned only when the engine's window had to shrink
