"""Text checked once, where the engine admits it (``docs/security.md``, "What text can make
regio do").

Every value the engine stores or sends passes one of these before anything changes: a message
(``Engine.add_message`` and everything built on it: ``add_user``, ``add_tool_result``,
``add_response``, streamed turns, the adapters), a write (``Engine.write`` / ``append`` and the
context tools' writes), a context tool's arguments, a summary, compaction instructions and
tool definitions. Lone UTF-16 surrogates are replaced by U+FFFD and surrogate pairs joined
(:func:`regio.textrepair.repair_text`), numbers no store or request can hold in tool arguments
and metadata are kept as their text (:func:`regio.textrepair.repair_value`), and a
``text_repaired`` event
(:class:`regio.session._events.TextRepaired`) names the call, the places and the first
position, so a session never holds text it cannot render or save. A value no JSON can hold,
or a block whose fields have the wrong types, raises :class:`regio.content.ContentTypeError`
naming the place, and a tool call with an empty id or name, or a tool result with an empty
call id, :class:`regio.errors.BlockValueError` (no provider takes them: Anthropic's
ids match ``^[a-zA-Z0-9_-]+$``), before anything is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from regio.content import (
    ContentTypeError,
    Document,
    Entry,
    Image,
    Message,
    ProviderBlock,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
)
from regio.errors import BlockValueError
from regio.events import Event
from regio.textrepair import UnencodableValueError, describe_repairs, repair_value

from ._events import TextRepaired
from ._sizes import count_argument

__all__ = [
    "admit_entry_text",
    "admit_message_text",
    "admit_value",
    "blocks_of",
    "check_blocks",
]

T = TypeVar("T")

#: The fields of each block type that must hold text that is not empty, and what each names.
_NOT_EMPTY: dict[type, tuple[tuple[str, str], ...]] = {
    ToolUse: (
        ("id", "a tool call needs the id the model gave it (its result answers that id)"),
        ("name", "a tool call names the tool it calls"),
    ),
    ToolResult: (("tool_use_id", "a tool result names the id of the call it answers"),),
}

#: The text fields of each block type (all must be ``str``).
_TEXT_FIELDS: dict[type, tuple[str, ...]] = {
    Text: ("text",),
    Thinking: ("thinking", "signature"),
    ToolUse: ("id", "name"),
    ToolResult: ("tool_use_id", "content"),
}
_BLOCKS = (Text, Thinking, ProviderBlock, ToolUse, ToolResult, Image, Document)


def check_blocks(blocks: object, where: str) -> None:
    """Raise :class:`ContentTypeError` naming ``where`` and the block when ``blocks`` is not a
    sequence of regio blocks whose text fields are text (``ToolUse.input`` a dict), and
    :class:`BlockValueError` for an empty call id, tool name or result call id."""
    if not isinstance(blocks, tuple | list):
        raise ContentTypeError(
            f"{where}: blocks must be a tuple of regio.content blocks, got {type(blocks).__name__}"
        )
    for index, block in enumerate(blocks):
        if not isinstance(block, _BLOCKS):
            raise ContentTypeError(
                f"{where}: blocks[{index}] is a {type(block).__name__}, not a block (Text, "
                "ToolUse, ToolResult, Thinking, ProviderBlock, Image or Document from "
                "regio.content)"
            )
        for name in _TEXT_FIELDS.get(type(block), ()):
            value = getattr(block, name)
            if not isinstance(value, str):
                raise ContentTypeError(
                    f"{where}: blocks[{index}].{name} must be text, got {type(value).__name__}"
                )
        for name, why in _NOT_EMPTY.get(type(block), ()):
            if not getattr(block, name):
                raise BlockValueError(f"{where}: blocks[{index}].{name} is empty; {why}")
        if isinstance(block, ToolUse) and not isinstance(block.input, dict):
            raise ContentTypeError(
                f"{where}: blocks[{index}].input must be a dict, got {type(block.input).__name__}"
            )


def blocks_of(content: object, where: str) -> tuple[Any, ...]:
    """The blocks of written ``content`` (text, one block or a sequence of blocks), checked
    (:func:`check_blocks`). Raises :class:`ContentTypeError` for anything else."""
    if isinstance(content, str):
        blocks: tuple[Any, ...] = (Text(content),)
    elif isinstance(content, _BLOCKS):
        blocks = (content,)
    elif isinstance(content, tuple | list):
        blocks = tuple(content)
    else:
        raise ContentTypeError(
            f"{where}: content must be text, a block or a list of blocks, got "
            f"{type(content).__name__}"
        )
    check_blocks(blocks, where)
    return blocks


def admit_value(emit: Callable[[Event], None], value: T, where: str, place: str = "") -> T:
    """``value`` as the engine may store it: repaired (module doc), with a ``text_repaired``
    event through ``emit`` when anything changed; ``value`` itself otherwise. ``where`` names
    the call (``"add_message"``, ``"write(notes)"``, ...) and ``place`` prefixes the places.
    Raises :class:`ContentTypeError` for a value no JSON can hold."""
    try:
        fixed, repairs = repair_value(value, place)
    except UnencodableValueError as exc:
        raise ContentTypeError(f"{where}: {exc}") from exc
    if repairs:
        emit(
            TextRepaired(
                where,
                tuple(r.place for r in repairs),
                repairs[0].position,
                sum(r.replaced for r in repairs),
                sum(r.joined for r in repairs),
                describe_repairs(repairs),
                sum(r.converted for r in repairs),
            )
        )
    return fixed


def admit_message_text(emit: Callable[[Event], None], message: Message, where: str) -> Message:
    """``message`` checked (:func:`check_blocks`) and repaired (:func:`admit_value`); places
    read ``blocks[i].<field>``."""
    check_blocks(message.blocks, where)
    blocks = admit_value(emit, message.blocks, where, "blocks")
    return message if blocks is message.blocks else Message(message.role, blocks)


def admit_entry_text(emit: Callable[[Event], None], entry: Entry, where: str) -> Entry:
    """An :class:`Entry` written as is: its blocks and ``tokens`` checked
    (:func:`regio.session._sizes.count_argument`), then the whole entry repaired (blocks, key,
    meta)."""
    check_blocks(entry.blocks, where)
    count_argument(entry.tokens, "the entry's tokens", where)
    return admit_value(emit, entry, where)
