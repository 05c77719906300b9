"""Gemini's native API (``models.generateContent``) as a regio provider, in one module.

Payload: https://ai.google.dev/api/generate-content (``systemInstruction``, ``contents`` of
``user`` / ``model`` turns, ``tools[].functionDeclarations``, ``generationConfig``); usage:
``usageMetadata`` (``promptTokenCount`` includes ``cachedContentTokenCount``); caching: the
``google`` rules of regio's cache rules data (implicit caching).
"""

from typing import Any

from regio.agent import ProviderResponseError
from regio.content import Message, Text, Thinking, ToolResult, ToolUse, block_text
from regio.layout import Request, ToolSpec
from regio.layout.render.common import group_messages_of
from regio.layout.render.openai import system_text
from regio.layout.render.registry import FunctionRenderer
from regio.providers import CacheRuleKey, Provider, ResponseReader, UsageParser, register_provider
from regio.providers.fields import count, field, has
from regio.tokens import ChatFormatOverhead
from regio.tokens.tooldefs import ToolFraming


def declaration(tool: ToolSpec) -> dict[str, Any]:
    """One ``functionDeclarations`` entry."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.canonical_schema(),
    }


def _parts(blocks: Any, names: dict[str, str]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for b in blocks:
        blk = b.block
        if isinstance(blk, ToolUse):
            names[blk.id] = blk.name
            parts.append({"functionCall": {"id": blk.id, "name": blk.name, "args": blk.input}})
        elif isinstance(blk, ToolResult):
            answer = {"error" if blk.is_error else "output": block_text(blk)}
            name = names.get(blk.tool_use_id, "unknown")
            parts.append(
                {"functionResponse": {"id": blk.tool_use_id, "name": name, "response": answer}}
            )
        elif not isinstance(blk, Thinking) and block_text(blk):
            parts.append({"text": block_text(blk)})
    return parts


def render_gemini(request: Request, *, model: str, max_tokens: int, **_: Any) -> dict[str, Any]:
    """The ``generateContent`` body of ``request`` (``model`` goes in the URL)."""
    contents: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for m in group_messages_of(request):
        role = "model" if m.role == "assistant" else "user"
        parts = _parts(m.blocks, names)
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    payload: dict[str, Any] = {"contents": contents}
    if system_text(request):
        payload["systemInstruction"] = {"parts": [{"text": system_text(request)}]}
    tools = [declaration(b.tool) for b in request.blocks if b.level == "tools" and b.tool]
    if tools:
        payload["tools"] = [{"functionDeclarations": tools}]
    payload["generationConfig"] = {"maxOutputTokens": max_tokens}
    return payload


def check_gemini(payload: dict[str, Any]) -> list[str]:
    """Problems: no contents, a turn of another role or without parts."""
    contents = payload.get("contents") or []
    problems = [] if contents else ["contents is empty"]
    for n, c in enumerate(contents):
        if c.get("role") not in ("user", "model") or not c.get("parts"):
            problems.append(f"contents[{n}] needs role user or model and at least one part")
    return problems


def usage_fields(usage: Any) -> dict[str, int]:
    """``usageMetadata``: the prompt includes the cached part; thoughts are billed as output."""
    prompt = count(field(usage, "promptTokenCount"), "promptTokenCount")
    cached = count(field(usage, "cachedContentTokenCount"), "cachedContentTokenCount")
    output = count(field(usage, "candidatesTokenCount"), "candidatesTokenCount")
    thoughts = count(field(usage, "thoughtsTokenCount"), "thoughtsTokenCount")
    return {
        "prompt_tokens": prompt,
        "cache_read_tokens": cached,
        "uncached_tokens": max(0, prompt - cached),
        "output_tokens": output + thoughts,
    }


def read_message(data: dict[str, Any]) -> Message:
    """The first candidate's parts: text, thought summaries, function calls."""
    candidates = data.get("candidates") or [{}]
    parts = field(field(candidates[0], "content"), "parts")
    if not isinstance(parts, list):
        raise ProviderResponseError("the generateContent response has no candidate parts", raw=data)
    blocks: list[Any] = []
    for n, part in enumerate(parts):
        call, text = field(part, "functionCall"), field(part, "text")
        if call is not None:
            if not isinstance(field(call, "name"), str):
                raise ProviderResponseError(f"parts[{n}].functionCall has no name", raw=data)
            args = field(call, "args") or {}
            blocks.append(ToolUse(str(field(call, "id") or f"call_{n}"), call["name"], args))
        elif isinstance(text, str) and text:
            blocks.append(Thinking(text) if field(part, "thought") else Text(text))
    return Message("assistant", tuple(blocks))


USAGE_EXAMPLE = {
    "promptTokenCount": 2006,
    "cachedContentTokenCount": 1920,
    "candidatesTokenCount": 300,
}

GEMINI = register_provider(
    Provider(
        name="gemini",
        renderer=FunctionRenderer(
            "gemini_generate", render_gemini, check_gemini, default_max_tokens=1024
        ),
        tool_framing=ToolFraming(
            "gemini", declaration, source="no hidden framing published; calibration corrects it"
        ),
        chat_overhead=ChatFormatOverhead(
            "gemini",
            tokens_per_message=5,
            tokens_per_name=0,
            reply_priming=3,
            exact=False,
            source="estimate: a Gemma-style turn <start_of_turn>role\\n...<end_of_turn>\\n",
        ),
        usage=UsageParser(
            api="gemini",
            recognizes=lambda usage: has(usage, "promptTokenCount"),
            parse=usage_fields,
            keys=("promptTokenCount", "candidatesTokenCount"),
            describes="Gemini usageMetadata (promptTokenCount, cachedContentTokenCount, ...)",
            example=USAGE_EXAMPLE,
        ),
        responses=ResponseReader(
            api="gemini",
            recognizes=lambda data: "candidates" in data,
            message=read_message,
            usage_key="usageMetadata",
            describes="a generateContent response",
            example={
                "candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]}}],
                "usageMetadata": USAGE_EXAMPLE,
            },
        ),
        cache_rule=CacheRuleKey("google", mechanism="auto_prefix"),
        default_model="gemini-2.5-flash",
    )
)
