"""LiteLLM on regio's payload (extra ``regio[litellm]``).

:func:`completion` (and :func:`acompletion`) lays out the engine's window, sends it with
``litellm.completion(**payload)`` (any provider LiteLLM routes to,
https://docs.litellm.ai/docs/completion/input) and records the reply and its usage in the
engine.

**The provider's format.** LiteLLM takes Chat Completions messages for every provider. For a
model LiteLLM routes to Anthropic's Messages API (``anthropic/...``, and Claude on Bedrock or
Vertex AI: :func:`is_anthropic_route`) the messages are built from regio's Anthropic payload, so
every breakpoint regio planned is carried as LiteLLM's ``cache_control`` on the content part,
tool call or tool it belongs to (https://docs.litellm.ai/docs/completion/prompt_caching), and
LiteLLM sends it to the API: system blocks, text, image and document parts, tool results,
tool calls and tools keep their marks (at most four, where the layout put them). Every other
model gets regio's Chat Completions payload (OpenAI caches prefixes without markers).

**Streaming.** With ``stream=True`` the call returns a :class:`RecordedStream`: LiteLLM's stream
passed through chunk by chunk, as LiteLLM gives it (iterate it, or ``async for`` it from
:func:`acompletion`); when the stream ends, its chunks are assembled into one response
(``litellm.stream_chunk_builder``, LiteLLM's own) and recorded in the engine, as a reply of a
call without ``stream`` is (``RecordedStream.response`` is it then). A stream left before its end
records nothing until :meth:`RecordedStream.finish` is called (it records what arrived).
The stream is the one LiteLLM returns, unchanged; the usage LiteLLM puts on its last chunk
(it asks the provider for it, ``stream_options``) is observed, as a call without ``stream``
observes its response's.

**LiteLLM's price map is never downloaded for regio.** LiteLLM fetches its model-price map
from the network when ``litellm`` is imported, unless ``LITELLM_LOCAL_MODEL_COST_MAP=True`` is
set (https://docs.litellm.ai/docs/completion/token_usage#9-register_model). Importing this
module sets it (when unset), so a later ``import litellm`` reads the map installed with the
package. When ``litellm`` was imported first, its import has already made that request (set the
variable in the environment to prevent it); the map it fetched is then replaced by the
installed one before every call (:func:`use_installed_price_map`), so regio's window and
LiteLLM's costs come from the installed map, and a fetch LiteLLM retries in the background
does not change them mid-session. ``LITELLM_LOCAL_MODEL_COST_MAP=False`` set by you is kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from regio.content import ANTHROPIC_PROVIDER_BLOCKS
from regio.sdk._objects import SDKInputError

from .repaired import repaired_request

if TYPE_CHECKING:
    from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

    from regio.engine import Engine

__all__ = [
    "RecordedStream",
    "acompletion",
    "completion",
    "is_anthropic_route",
    "messages_of_anthropic",
    "payload",
    "use_installed_price_map",
]

#: LiteLLM's switch for its installed price map (read at ``import litellm``).
PRICE_MAP_SWITCH = "LITELLM_LOCAL_MODEL_COST_MAP"

os.environ.setdefault(PRICE_MAP_SWITCH, "True")


def use_installed_price_map() -> bool:
    """Make LiteLLM's price map the one installed with the package when the switch is on
    (module doc); returns whether it had to be replaced (the map in use came from LiteLLM's
    fetch, or from its fallback while a retry of that fetch may still replace it). Uses
    LiteLLM's own loader (``get_model_cost_map``, which reads the installed map under the
    switch) and ``adopt_model_cost_map``."""
    if os.environ.get(PRICE_MAP_SWITCH, "").lower() != "true":
        return False
    import litellm
    from litellm.litellm_core_utils import get_model_cost_map as cost_map

    info = cost_map.get_model_cost_map_source_info()
    if info["source"] == "local" and info["is_env_forced"]:
        return False
    cost_map.adopt_model_cost_map(cost_map.get_model_cost_map(url=litellm.model_cost_map_url))
    return True


def is_anthropic_route(model: str) -> bool:
    """Whether LiteLLM sends ``model`` to Anthropic's Messages API, where ``cache_control``
    marks matter: the ``anthropic`` provider, or a Claude model on Bedrock or Vertex AI
    (``litellm.get_llm_provider``; a model LiteLLM cannot route counts as not)."""
    import litellm

    try:
        name, provider, _key, _base = litellm.get_llm_provider(model)
    except Exception:  # LiteLLM raises its own errors for a model it cannot route
        return False
    return provider == "anthropic" or (
        provider in ("bedrock", "bedrock_converse", "vertex_ai") and "claude" in name.lower()
    )


def _media_part(block: dict[str, Any], where: str) -> dict[str, Any]:
    """LiteLLM's ``image_url`` / ``file`` part (or a text part, for a plain-text document) of
    an Anthropic image or document block."""
    kind, source = block["type"], block.get("source") or {}
    if source.get("type") == "text":
        return {"type": "text", "text": str(source.get("data", ""))}
    if source.get("type") == "base64":
        url = f"data:{source['media_type']};base64,{source['data']}"
    elif source.get("type") == "url":
        url = str(source["url"])
    else:
        raise SDKInputError(f"{where}: cannot send a {kind} with source {source.get('type')!r}")
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": url}}
    return {"type": "file", "file": {"file_data": url}}


def _part(block: dict[str, Any], where: str) -> dict[str, Any]:
    """A LiteLLM content part of an Anthropic text, image or document block, its
    ``cache_control`` kept."""
    kind = block.get("type")
    if kind == "text":
        part: dict[str, Any] = {"type": "text", "text": block["text"]}
    elif kind in ("image", "document"):
        part = _media_part(block, where)
    else:
        raise SDKInputError(f"{where}: cannot send a {kind!r} block through LiteLLM")
    if "cache_control" in block:
        part["cache_control"] = dict(block["cache_control"])
    return part


def _tool_message(block: dict[str, Any], where: str) -> dict[str, Any]:
    """A ``tool`` message of an Anthropic ``tool_result`` block; the block's mark goes on its
    last part (the cached prefix ends at the same place)."""
    content = block.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    parts = [_part(b, f"{where}.content[{n}]") for n, b in enumerate(blocks)]
    if not parts:
        parts = [{"type": "text", "text": ""}]
    if "cache_control" in block:
        parts[-1]["cache_control"] = dict(block["cache_control"])
    return {"role": "tool", "tool_call_id": block["tool_use_id"], "content": parts}


def _assistant(blocks: list[dict[str, Any]], where: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    thinking: list[dict[str, Any]] = []
    for n, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "tool_use":
            call: dict[str, Any] = {
                "id": block["id"],
                "type": "function",
                "function": {"name": block["name"], "arguments": json.dumps(block["input"])},
            }
            if "cache_control" in block:
                call["cache_control"] = dict(block["cache_control"])
            calls.append(call)
        elif kind in ("thinking", "redacted_thinking"):
            thinking.append(dict(block))
        elif isinstance(kind, str) and kind in ANTHROPIC_PROVIDER_BLOCKS:
            continue  # a server tool's block: LiteLLM's messages have no place for it
        else:
            parts.append(_part(block, f"{where}[{n}]"))
    message["content"] = parts or None
    if calls:
        message["tool_calls"] = calls
    if thinking:
        message["thinking_blocks"] = thinking
    return message


def messages_of_anthropic(body: dict[str, Any]) -> list[dict[str, Any]]:
    """LiteLLM messages (Chat Completions form with ``cache_control`` on parts, tool calls and
    tool results) carrying regio's Anthropic payload ``body`` block for block (module doc).
    A user message's tool results become ``tool`` messages, in order, and its other blocks a
    user message after them; ``redacted_thinking`` goes with the thinking blocks and the other
    provider blocks (server tool calls and results, :data:`regio.content.ANTHROPIC_PROVIDER_BLOCKS`)
    are left out, as LiteLLM's messages cannot carry them. Raises :class:`SDKInputError` for
    any other block LiteLLM cannot carry."""
    out: list[dict[str, Any]] = []
    system = [_part(b, f"system[{n}]") for n, b in enumerate(body.get("system") or [])]
    if system:
        out.append({"role": "system", "content": system})
    for index, message in enumerate(body["messages"]):
        where = f"messages[{index}].content"
        blocks = message["content"]
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        if message["role"] == "assistant":
            out.append(_assistant(blocks, where))
            continue
        rest: list[dict[str, Any]] = []
        for n, block in enumerate(blocks):
            if block.get("type") == "tool_result":
                out.append(_tool_message(block, f"{where}[{n}]"))
            elif str(block.get("type")) in ANTHROPIC_PROVIDER_BLOCKS:
                continue  # container_upload: no place for it either
            else:
                rest.append(_part(block, f"{where}[{n}]"))
        if rest:
            out.append({"role": "user", "content": rest})
    return out


def _tools_of_anthropic(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        function = {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
        }
        entry: dict[str, Any] = {"type": "function", "function": function}
        if "cache_control" in tool:
            entry["cache_control"] = dict(tool["cache_control"])
        out.append(entry)
    return out


def payload(
    engine: Engine, *, model: str | None = None, tools: Sequence[object] = ()
) -> dict[str, Any]:
    """LiteLLM's keyword arguments for the engine's window (module doc): for an Anthropic
    route the Anthropic payload as LiteLLM messages with their ``cache_control`` marks
    (:func:`messages_of_anthropic`), else the Chat Completions payload; ``model`` (a LiteLLM
    model name such as ``anthropic/claude-sonnet-4-6``) when given. A broken history (a stored
    session with a call that never got its result, a result whose call is gone, a reused call
    id) is repaired first (:func:`regio.adapters.repaired.repaired_request`, each change a
    ``HistoryRepaired`` event)."""
    if model and is_anthropic_route(model):
        body = repaired_request(engine, "anthropic", tools=tools)[1]
        out: dict[str, Any] = {"messages": messages_of_anthropic(body)}
        if body.get("tools"):
            out["tools"] = _tools_of_anthropic(body["tools"])
        if "max_tokens" in body:
            out["max_tokens"] = body["max_tokens"]
    else:
        out = repaired_request(engine, "openai", tools=tools)[1]
    if model:
        out["model"] = model
    return out


def _prepare(
    engine: Engine, model: str | None, tools: Sequence[object], kwargs: dict[str, Any]
) -> dict[str, Any]:
    from .window import adopt_framework_window, litellm_window

    use_installed_price_map()
    if model:  # the model map's window, when it knows the model
        adopt_framework_window(engine, litellm_window(model), f"LiteLLM model map ({model})")
    kwargs.setdefault("drop_params", True)
    return payload(engine, model=model, tools=tools)


class RecordedStream:
    """A LiteLLM stream (``CustomStreamWrapper``) whose reply is recorded in ``engine`` when it
    ends (module doc). Iterate it (``for``, or ``async for`` for a stream of
    :func:`acompletion`); every other attribute is the wrapped stream's. ``messages``: what was
    sent (LiteLLM's chunk builder reads it for a usage it has to estimate)."""

    def __init__(
        self, engine: Engine, stream: CustomStreamWrapper, messages: list[dict[str, Any]]
    ) -> None:
        self.engine = engine
        self.stream = stream
        self.messages = messages
        #: The chunks received so far.
        self.chunks: list[Any] = []
        #: The assembled response once recorded (:meth:`finish`), else ``None``.
        self.response: Any = None

    def __iter__(self) -> Any:
        for chunk in self.stream:
            self.chunks.append(chunk)
            yield chunk
        self.finish()

    async def __aiter__(self) -> Any:
        async for chunk in self.stream:
            self.chunks.append(chunk)
            yield chunk
        self.finish()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def finish(self) -> Any:
        """Assemble the chunks received (``litellm.stream_chunk_builder``) and record the
        reply and its usage in the engine, once; returns the assembled response (``None`` when
        no chunk came)."""
        if self.response is not None or not self.chunks:
            return self.response
        import litellm

        self.response = litellm.stream_chunk_builder(self.chunks, messages=self.messages)
        self.engine.add_response(self.response, observe=True)
        return self.response


def completion(
    engine: Engine, *, model: str | None = None, tools: Sequence[object] = (), **kwargs: Any
) -> Any:
    """``litellm.completion(**payload(engine), **kwargs)``, then the reply is appended to the
    engine (``add_response(..., observe=True)``); returns LiteLLM's ``ModelResponse``, or with
    ``stream=True`` a :class:`RecordedStream` that records the reply when it ends (module doc).
    ``kwargs`` go to LiteLLM (``mock_response=`` for tests, ``api_base=``, ``client=``, ...);
    ``drop_params`` defaults to true so OpenAI-only fields of the payload (``prompt_cache_key``)
    are dropped for providers that refuse them
    (https://docs.litellm.ai/docs/completion/drop_params). The model's ``max_input_tokens`` in
    LiteLLM's model map is read into the engine's context window
    (:mod:`regio.adapters.window`)."""
    import litellm

    body = _prepare(engine, model, tools, kwargs)
    streamed = bool(kwargs.get("stream"))
    response = litellm.completion(**body, **kwargs)
    if streamed:
        return RecordedStream(engine, response, body["messages"])
    engine.add_response(response, observe=True)
    return response


async def acompletion(
    engine: Engine, *, model: str | None = None, tools: Sequence[object] = (), **kwargs: Any
) -> Any:
    """:func:`completion` with ``litellm.acompletion`` (a stream is iterated with
    ``async for``)."""
    import litellm

    body = _prepare(engine, model, tools, kwargs)
    streamed = bool(kwargs.get("stream"))
    response = await litellm.acompletion(**body, **kwargs)
    if streamed:
        return RecordedStream(engine, response, body["messages"])
    engine.add_response(response, observe=True)
    return response
