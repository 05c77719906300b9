"""The client's request, read once: which API, its history items (still as raw JSON), its
system prompt, its tools and every other parameter.

Three APIs, one path each (the proxy appends the same path to ``--upstream``):

* ``anthropic`` -- ``POST /v1/messages`` (https://docs.anthropic.com/en/api/messages): history
  ``messages``, system prompt ``system`` (a string or text blocks), ``tools``;
* ``openai_chat`` -- ``POST /v1/chat/completions``
  (https://platform.openai.com/docs/api-reference/chat/create): history ``messages`` after the
  leading ``system`` / ``developer`` messages, which are the system prompt; ``tools``;
* ``openai_responses`` -- ``POST /v1/responses``
  (https://platform.openai.com/docs/api-reference/responses/create): system prompt
  ``instructions`` plus the leading ``system`` / ``developer`` input items; history ``input``
  (a string is one user message); ``tools``.

The body is decoded with its top-level values and its history items left as raw JSON
(``msgspec.Raw``): the history the client resends on every request is hashed as bytes
(:mod:`regio.proxy.history`), and only the items new since the session's last request are
decoded into messages. A body that is not a JSON object, or a field of the wrong type, raises
:class:`regio.proxy.errors.ClientRequestError` naming it. A Responses request that continues a
stored response (``previous_response_id``, ``conversation``) holds no history to lay out: it
raises :class:`regio.proxy.errors.PassThrough`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import msgspec

from .errors import ClientRequestError, PassThrough

__all__ = ["API_PATHS", "ClientRequest", "parse_request"]

#: API name -> the path a client posts to (and the proxy posts upstream).
API_PATHS: dict[str, str] = {
    "anthropic": "/v1/messages",
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
}
#: The body keys that are not passed on as they are: history, system prompt, tools.
_OWN_KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("messages", "system", "tools"),
    "openai_chat": ("messages", "tools"),
    "openai_responses": ("input", "instructions", "tools"),
}
_SYSTEM_ROLES = ("system", "developer")


class _Role(msgspec.Struct):
    """The two fields read from a raw item to find where the system messages end."""

    role: str | None = None
    type: str | None = None


@attrs.frozen(eq=False)
class ClientRequest:
    """One client request (module doc). ``params``: every top-level key but the history, the
    system prompt and the tools, decoded, in the client's order (``model``, ``max_tokens``,
    ``stream``, ``temperature``, ...); ``items``: the history items as raw JSON; ``system``: the
    system prompt's text (``""``: none) and ``system_raw`` its raw JSON pieces (the ``system``
    value, or the leading system messages); ``tools``: the tool definitions as sent."""

    api: str
    params: dict[str, Any]
    items: list[msgspec.Raw]
    system: str
    system_raw: list[msgspec.Raw]
    tools: list[Any]
    tools_raw: msgspec.Raw | None

    @property
    def model(self) -> str:
        """The ``model`` the client asked for (``""`` when none)."""
        return str(self.params.get("model") or "")

    @property
    def stream(self) -> bool:
        """Whether the client asked for a stream of events."""
        return bool(self.params.get("stream"))


def _decode(raw: msgspec.Raw, where: str) -> Any:
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise ClientRequestError(f"{where}: not valid JSON ({exc})") from exc


def _raw_list(raw: msgspec.Raw, where: str) -> list[msgspec.Raw]:
    try:
        return msgspec.json.decode(raw, type=list[msgspec.Raw])
    except msgspec.ValidationError as exc:
        raise ClientRequestError(f"{where}: expected a list ({exc})") from exc
    except msgspec.DecodeError as exc:
        raise ClientRequestError(f"{where}: not valid JSON ({exc})") from exc


def _text_of(content: object, where: str) -> str:
    """The text of a system ``content``: a string, or text blocks / parts joined by a blank
    line (``"\\n\\n"``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for n, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                raise PassThrough(
                    "non_text_system", f"{where}[{n}]: a system part that is not text"
                )
        return "\n\n".join(t for t in texts if t)
    raise ClientRequestError(f"{where}: expected a string or a list of text blocks")


def _leading_system(items: list[msgspec.Raw], where: str) -> tuple[int, list[str]]:
    """How many items open the history as system / developer messages, and their texts."""
    texts: list[str] = []
    n = 0
    for raw in items:
        try:
            head = msgspec.json.decode(raw, type=_Role)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise ClientRequestError(f"{where}[{n}]: not a message object ({exc})") from exc
        if head.role not in _SYSTEM_ROLES or head.type not in (None, "message"):
            break
        message = _decode(raw, f"{where}[{n}]")
        texts.append(_text_of(message.get("content"), f"{where}[{n}].content"))
        n += 1
    return n, texts


def parse_request(api: str, body: bytes) -> ClientRequest:
    """The :class:`ClientRequest` of ``body`` posted to the path of ``api`` (module doc).
    Raises :class:`ClientRequestError` or :class:`PassThrough`."""
    try:
        top = msgspec.json.decode(body, type=dict[str, msgspec.Raw])
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ClientRequestError(f"the request body is not a JSON object ({exc})") from exc
    own = _OWN_KEYS[api]
    params = {k: _decode(v, k) for k, v in top.items() if k not in own}
    if api == "openai_responses":
        for key in ("previous_response_id", "conversation"):
            if params.get(key):
                raise PassThrough(
                    "stored_history", f"{key}: the history is stored upstream, not sent"
                )
    history_key = "input" if api == "openai_responses" else "messages"
    raw_history = top.get(history_key)
    items: list[msgspec.Raw] = []
    if raw_history is not None:
        value = bytes(raw_history).lstrip()
        if value.startswith(b'"'):  # a Responses input string: one user message
            text = _decode(raw_history, history_key)
            items = [msgspec.Raw(msgspec.json.encode({"role": "user", "content": text}))]
        else:
            items = _raw_list(raw_history, history_key)
    system_raw: list[msgspec.Raw] = []
    texts: list[str] = []
    if api == "anthropic" and "system" in top:
        system_raw = [top["system"]]
        texts.append(_text_of(_decode(top["system"], "system"), "system"))
    if api == "openai_responses" and "instructions" in top:
        system_raw = [top["instructions"]]
        texts.append(_text_of(_decode(top["instructions"], "instructions"), "instructions"))
    if api != "anthropic":
        lead, lead_texts = _leading_system(items, history_key)
        system_raw.extend(items[:lead])
        texts.extend(lead_texts)
        items = items[lead:]
    tools_raw = top.get("tools")
    tools = _decode(tools_raw, "tools") if tools_raw is not None else []
    if tools is None:
        tools = []
    if not isinstance(tools, list):
        raise ClientRequestError("tools: expected a list of tool definitions")
    system = "\n\n".join(t for t in texts if t)
    return ClientRequest(api, params, items, system, system_raw, tools, tools_raw)
