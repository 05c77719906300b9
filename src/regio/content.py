"""Content model: blocks, messages, entries and turn groups.

Everything here is data that travels (saved state, traces, snapshots), so it is made of frozen
msgspec Structs. The vocabulary follows the providers' own terms:

* a **block** is one content unit: :class:`Text`, :class:`ToolUse` (a tool call),
  :class:`ToolResult` (the answer to one call), :class:`Thinking` (opaque reasoning that is
  kept with its assistant turn), or an :class:`Image` / :class:`Document` (:mod:`regio.media`;
  in user messages and inside a tool result's ``media``);
* a **message** is a role plus blocks. regio uses the role ``"tool"`` for a message that carries
  only tool results (OpenAI's ``role: tool``; renderers turn it into an Anthropic ``user``
  message);
* an **entry** is what a region holds: an id, blocks, an optional key, a token count measured
  once, the turn it was written in and the turn group it belongs to;
* a **turn group** is an assistant message with tool calls plus every tool result that answers
  one of its call ids, wherever those results are. Groups are evicted, compacted and rendered as
  one unit. A group whose calls are not all answered by a final result is **open** (a
  progress report, ``ToolResult(final=False)``, joins the group without answering its call).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import msgspec

from regio.errors import RegioError
from regio.media import ANTHROPIC_MAX_PIXELS, Document, Image, anthropic_image_tokens, describe

__all__ = [
    "Block",
    "ContentTypeError",
    "Document",
    "Entry",
    "Grouping",
    "Image",
    "Message",
    "Role",
    "Text",
    "Thinking",
    "ToolResult",
    "ToolUse",
    "TurnGroup",
    "block_text",
    "canonical_json",
    "content_hash",
    "group_entries",
    "group_messages",
    "split_weight",
]

Role = Literal["system", "user", "assistant", "tool"]


class ContentTypeError(RegioError, TypeError):
    """A block was given a value it cannot hold (the message names the block and the type)."""


class Text(msgspec.Struct, frozen=True, tag="text", tag_field="type"):
    """Plain text."""

    text: str


class ToolUse(msgspec.Struct, frozen=True, tag="tool_use", tag_field="type"):
    """A tool call made by the assistant: call ``id``, tool ``name`` and its JSON ``input``.

    ``item``: for a call the provider sent as an item other than a function call (a Responses
    ``custom_tool_call`` or ``local_shell_call``, :mod:`regio.responses_items`), that item's fields
    as sent, its payload ``null`` (``input`` then holds it); unset for every other call, so
    such a call encodes exactly as before the field existed."""

    id: str
    name: str
    input: dict[str, Any] = msgspec.field(default_factory=dict)
    item: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET


class ToolResult(
    msgspec.Struct, frozen=True, tag="tool_result", tag_field="type", omit_defaults=True
):
    """The result of one tool call, answering ``tool_use_id``.

    ``content`` is text; structured content (a dict, list, number, ...) is kept as its
    :func:`canonical_json` text, so it is counted, rendered and saved as that text. ``media``:
    images and documents the tool returned (a screenshot, a PDF), after the text. Raises
    :class:`ContentTypeError` for content that is not JSON-able.

    ``final=False`` marks a **progress report** of a long-running or background call
    (``status: running``, a job id to poll; MCP's ``notifications/progress``,
    https://modelcontextprotocol.io/specification/2025-06-18/basic/utilities/progress): it does
    not answer the call, so the call's turn group stays open (never evicted, compacted or cut)
    until a final result arrives, and the latest result of a call is the one rendered. Read
    it with :attr:`is_final`; the field itself holds ``False`` or ``msgspec.UNSET`` (final),
    so a final result encodes exactly as before the field existed.

    ``item``: for a result the provider sent as a Responses ``custom_tool_call_output`` or
    ``local_shell_call_output`` (:mod:`regio.responses_items`), that item's fields as sent, its
    ``output`` ``null`` (``content`` and ``media`` hold it); unset for every other result.
    """

    tool_use_id: str
    content: str
    is_error: bool = False
    final: bool | msgspec.UnsetType = msgspec.UNSET
    media: tuple[Image | Document, ...] = ()
    item: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET

    @property
    def is_final(self) -> bool:
        """False for a progress report (``final=False``), True for a final result."""
        return self.final is not False

    def __post_init__(self) -> None:
        if self.final is True:
            msgspec.structs.force_setattr(self, "final", msgspec.UNSET)
        elif self.final is not False and self.final is not msgspec.UNSET:
            raise ContentTypeError(
                f"tool_result {self.tool_use_id!r}: final must be true or false, got {self.final!r}"
            )
        if not isinstance(self.content, str):
            try:
                text = canonical_json(self.content).decode()
            except (TypeError, ValueError) as exc:
                raise ContentTypeError(
                    f"tool_result {self.tool_use_id!r}: content of type "
                    f"{type(self.content).__name__} is neither text nor JSON-able ({exc})"
                ) from exc
            msgspec.structs.force_setattr(self, "content", text)


class Thinking(msgspec.Struct, frozen=True, tag="thinking", tag_field="type"):
    """Opaque model reasoning. It is never edited and always stays with its assistant message."""

    thinking: str
    signature: str = ""


Block = Text | ToolUse | ToolResult | Thinking | Image | Document


class Message(msgspec.Struct, frozen=True):
    """A role and its blocks.

    ``role`` is ``system``, ``user``, ``assistant`` or ``tool`` (a message holding only
    :class:`ToolResult` blocks).
    """

    role: Role
    blocks: tuple[Block, ...]

    @classmethod
    def user(cls, text: str, media: Sequence[Image | Document] = ()) -> Message:
        """A user message: ``media`` (images, documents) first, as the providers advise,
        then one text block."""
        return cls("user", (*media, Text(text)))

    @classmethod
    def system(cls, text: str) -> Message:
        """A system message with one text block."""
        return cls("system", (Text(text),))

    @classmethod
    def assistant(
        cls,
        text: str = "",
        tool_calls: Sequence[ToolUse] = (),
        thinking: Sequence[Thinking] = (),
    ) -> Message:
        """An assistant message: thinking blocks first, then text (when not empty), then calls."""
        blocks: list[Block] = list(thinking)
        if text:
            blocks.append(Text(text))
        blocks.extend(tool_calls)
        return cls("assistant", tuple(blocks))

    @classmethod
    def tool(cls, results: Sequence[ToolResult]) -> Message:
        """A message carrying tool results only."""
        return cls("tool", tuple(results))

    @property
    def tool_calls(self) -> tuple[ToolUse, ...]:
        """The :class:`ToolUse` blocks of this message, in order."""
        return tuple(b for b in self.blocks if isinstance(b, ToolUse))

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        """The :class:`ToolResult` blocks of this message, in order."""
        return tuple(b for b in self.blocks if isinstance(b, ToolResult))

    @property
    def text(self) -> str:
        """All text of the message (text blocks and tool result content), joined by newlines."""
        return "\n".join(t for t in (block_text(b) for b in self.blocks) if t)


class Entry(msgspec.Struct, frozen=True):
    """What a region holds.

    * ``id``: unique within the window;
    * ``blocks``: the content;
    * ``role``: set when the entry is a conversation message, else ``None``;
    * ``key``: for keyed regions (and checklist item ids);
    * ``tokens``: the token count, measured once when the entry is made;
    * ``turn``: the turn index it was written in;
    * ``group``: the turn group id (conversation entries), else ``None``;
    * ``meta``: small JSON-able annotations (checklist status, summary coverage, ...).
    """

    id: str
    blocks: tuple[Block, ...]
    role: Role | None = None
    key: str | None = None
    tokens: int = 0
    turn: int = 0
    group: str | None = None
    meta: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def message(self) -> Message:
        """This entry as a message (role ``user`` when the entry has none)."""
        return Message(self.role or "user", self.blocks)

    @property
    def text(self) -> str:
        """All text of the entry joined by newlines."""
        return "\n".join(t for t in (block_text(b) for b in self.blocks) if t)

    @property
    def digest(self) -> str:
        """sha256 of the canonical JSON of role, key and blocks (not id, tokens or turn)."""
        return content_hash([self.role, self.key, list(self.blocks)])


def block_text(block: Block) -> str:
    """The text a block contributes: text, thinking, tool result content, or the call as JSON.

    Images and documents contribute their :func:`regio.media.describe` line (never their
    bytes), a plain-text document its text after that line; a tool result's media follow
    its content."""
    if isinstance(block, Text):
        return block.text
    if isinstance(block, ToolResult):
        if block.media:
            return "\n".join([block.content, *(block_text(m) for m in block.media)])
        return block.content
    if isinstance(block, Thinking):
        return block.thinking
    if isinstance(block, Image):
        return describe(block)
    if isinstance(block, Document):
        text = block.plain_text()
        return describe(block) if text is None else f"{describe(block)}\n{text}"
    return f"{block.name}({canonical_json(block.input).decode()})"


_encoder = msgspec.json.Encoder(order="sorted")


def canonical_json(value: Any) -> bytes:
    """JSON with sorted keys and no whitespace, so equal values give equal bytes."""
    return _encoder.encode(value)


def content_hash(value: Any) -> str:
    """Hex sha256 of :func:`canonical_json` of ``value``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


class TurnGroup(msgspec.Struct, frozen=True):
    """One unit of the conversation.

    ``id`` is ``g:<first call id>`` for a tool-calling group and ``m:<index>`` (``m:<entry id>``
    under :func:`group_entries`) for a standalone message; ``members`` are the indexes of
    its messages in order; ``call_ids`` the calls it made; ``answered`` the call ids that have a
    final result (a progress report, ``ToolResult(final=False)``, is not one); ``open`` is true
    while some call has no final result.
    """

    id: str
    members: tuple[int, ...]
    call_ids: tuple[str, ...] = ()
    answered: tuple[str, ...] = ()

    @property
    def open(self) -> bool:
        """True while at least one call of the group has no result."""
        return len(self.answered) < len(self.call_ids)

    @property
    def pending(self) -> tuple[str, ...]:
        """Call ids without a result."""
        done = set(self.answered)
        return tuple(c for c in self.call_ids if c not in done)


class Grouping(msgspec.Struct, frozen=True):
    """The result of :func:`group_messages`.

    ``groups`` in order of their first message; ``assignment[i]`` is the index in ``groups`` of
    message ``i``; ``open_groups`` the ids of groups with unanswered calls; ``orphan_results``
    ``(message index, tool_use_id)`` for results whose call is absent (or comes later).
    """

    groups: tuple[TurnGroup, ...]
    assignment: tuple[int, ...]
    open_groups: tuple[str, ...]
    orphan_results: tuple[tuple[int, str], ...]

    def group_of(self, index: int) -> TurnGroup:
        """The group of message ``index``."""
        return self.groups[self.assignment[index]]


def group_messages(messages: Sequence[Message]) -> Grouping:
    """Assign every message to its turn group.

    An assistant message with tool calls opens a group; every later message whose tool results
    answer one of its call ids joins it, even when results are not adjacent, arrive in several
    messages, or arrive in another order. A message holding results for calls of two groups joins
    the earliest of them and the groups merge (so no unit is ever split); groups whose messages
    interleave (``a1{c1}, a2{c2}, t(c1), t(c2)``, or any message between a call and its result)
    merge too (a plain message between them stays its own unit). A message holding only progress
    reports of a call with no final result does not widen its group's span: the open group
    keeps the call and its reports, and the complete groups between them stay units of their
    own (an open background job does not merge the session into one unit). The same holds for
    such a report beside another call's final result (``[t(c_n), t(bg, final=False)]``, the
    parallel-results shape): the message stays in ``c_n``'s group, which joins the job's open
    group (call and latest report together) without the job's span merging the complete groups
    between them. Thinking blocks stay in
    their assistant message. A result whose call is absent (or only appears later) is an orphan;
    its message stands alone as its own unit. Every other message is a unit of its own.

    Runs in O(n + calls).
    """
    return _group([(m.role, m.blocks) for m in messages])


def group_entries(entries: Sequence[Entry]) -> Grouping:
    """:func:`group_messages` over entries; standalone groups are named ``m:<entry id>``."""
    return _group([(e.role or "user", e.blocks) for e in entries], [e.id for e in entries])


def _merge_interleaved(
    assignment: list[int],
    find: Any,
    parent: list[int],
    members: list[list[int]],
    calls: list[list[str]],
    answered: list[set[str]],
    progress: Sequence[tuple[str, ...]],
) -> None:
    """Merge every tool-calling group with each tool-calling group whose message span it
    overlaps (``a1{c1}, a2{c2}, t(c1), t(c2)`` is one unit), so no cut between two messages
    leaves a call of one and the result of the other: eviction, compaction and kept tails
    alike.

    ``progress[i]`` names the calls of message ``i`` when it holds only progress reports
    (``ToolResult(final=False)``, no call). Such a message of a call with no final result
    anywhere takes no part in the spans: it stays in its call's (open, protected) group, but
    the group does not reach over the later complete groups up to its latest report (a
    background job reporting once a turn would otherwise merge the whole session into one
    open unit that nothing can compact)."""
    finals: set[str] = set().union(*answered) if answered else set()
    skip = [bool(p) and not any(c in finals for c in p) for p in progress]
    reach = -1  # the last message index the current run must extend to
    run: int | None = None
    last: dict[int, int] = {}
    for index, g in enumerate(assignment):
        if not skip[index]:
            last[find(g)] = index
    for index, g in enumerate(assignment):
        root = find(g)
        if not calls[root] or skip[index]:
            continue  # a standalone message between a call and its result stays its own unit
        if run is not None and index <= reach and find(run) != root:
            keep, gone = find(run), root
            parent[gone] = keep
            members[keep].extend(members[gone])
            calls[keep].extend(calls[gone])
            answered[keep] |= answered[gone]
            reach = max(reach, last.get(gone, index))
            last[keep] = max(last.get(keep, index), last.get(gone, index))
        elif run is None or index > reach:
            run, reach = root, last.get(root, index)


def _final_calls(items: Sequence[tuple[str, tuple[Block, ...]]]) -> set[str]:
    """The calls with a final result anywhere in ``items`` (a result counts only after its
    call, as in :func:`_group`); O(n + blocks)."""
    made: set[str] = set()
    finals: set[str] = set()
    for _role, blocks in items:
        for b in blocks:
            if isinstance(b, ToolResult) and b.is_final and b.tool_use_id in made:
                finals.add(b.tool_use_id)
        made.update(b.id for b in blocks if isinstance(b, ToolUse))
    return finals


def _group(
    items: Sequence[tuple[str, Iterable[Block]]], names: Sequence[str] | None = None
) -> Grouping:
    parent: list[int] = []  # union-find over provisional group indexes
    members: list[list[int]] = []
    calls: list[list[str]] = []
    answered: list[set[str]] = []
    first_call: list[str | None] = []
    call_owner: dict[str, int] = {}
    assignment: list[int] = []
    orphans: list[tuple[int, str]] = []
    progress: list[tuple[str, ...]] = []  # per message: its calls when it holds only reports
    links: list[int] = []  # the open jobs reporting beside other results in this message
    linked: list[tuple[int, int]] = []  # (open job's group, group of the message reporting it)

    def find(g: int) -> int:
        while parent[g] != g:
            parent[g] = parent[parent[g]]
            g = parent[g]
        return g

    def new_group(first: str | None) -> int:
        parent.append(len(parent))
        members.append([])
        calls.append([])
        answered.append(set())
        first_call.append(first)
        return len(parent) - 1

    rows = [(role, tuple(blocks)) for role, blocks in items]
    finals = _final_calls(rows)
    for index, (_role, blocks) in enumerate(rows):
        uses = [b.id for b in blocks if isinstance(b, ToolUse)]
        results = [b.tool_use_id for b in blocks if isinstance(b, ToolResult)]
        # an open job's report beside other results does not merge groups here (that would
        # widen the job's span over everything since its call): the message joins the other
        # results' group, linked to the job's group only after the spans are merged
        held = [r for r in results if r in call_owner]
        closing = [r for r in held if r in finals]
        owners = sorted({find(call_owner[r]) for r in (closing or held)})
        if closing:
            links.extend(call_owner[r] for r in held if r not in closing)
        for r in results:
            if r not in call_owner:
                orphans.append((index, r))
        reports = not uses and all(
            isinstance(b, ToolResult) and not b.is_final and b.tool_use_id in call_owner
            for b in blocks
        )
        progress.append(tuple(results) if reports and results else ())
        if owners:
            g = owners[0]
            for other in owners[1:]:
                parent[other] = g
                members[g].extend(members[other])
                calls[g].extend(calls[other])
                answered[g] |= answered[other]
        else:
            g = new_group(uses[0] if uses else None)
        for b in blocks:
            if isinstance(b, ToolResult) and b.is_final and b.tool_use_id in call_owner:
                answered[g].add(b.tool_use_id)
        for u in uses:
            if u not in call_owner:
                call_owner[u] = g
                calls[g].append(u)
        members[g].append(index)
        assignment.append(g)
        linked.extend((job, g) for job in links)
        links.clear()

    _merge_interleaved(assignment, find, parent, members, calls, answered, progress)
    for job, holder in linked:  # an open job and the group of the message with its report
        keep, gone = sorted((find(job), find(holder)))
        if keep != gone:
            parent[gone] = keep
            members[keep].extend(members[gone])
            calls[keep].extend(calls[gone])
            answered[keep] |= answered[gone]
    return _finish_grouping(assignment, find, members, calls, answered, first_call, names, orphans)


def _finish_grouping(
    assignment: list[int],
    find: Callable[[int], int],
    members: list[list[int]],
    calls: list[list[str]],
    answered: list[set[str]],
    first_call: list[str | None],
    names: Sequence[str] | None,
    orphans: list[tuple[int, str]],
) -> Grouping:
    """The :class:`Grouping` of the union-find built by :func:`_group`: one
    :class:`TurnGroup` per root, in order of first member."""
    roots: dict[int, int] = {}
    groups: list[TurnGroup] = []
    final_assignment: list[int] = []
    for g in assignment:
        root = find(g)
        if root not in roots:
            roots[root] = len(groups)
            ids = calls[root]
            first = min(members[root])
            label = names[first] if names is not None else str(first)
            gid = f"g:{first_call[root]}" if first_call[root] else f"m:{label}"
            groups.append(
                TurnGroup(
                    id=gid,
                    members=tuple(sorted(members[root])),
                    call_ids=tuple(ids),
                    answered=tuple(c for c in ids if c in answered[root]),
                )
            )
        final_assignment.append(roots[root])
    open_groups = tuple(g.id for g in groups if g.open)
    return Grouping(
        groups=tuple(groups),
        assignment=tuple(final_assignment),
        open_groups=open_groups,
        orphan_results=tuple(orphans),
    )


def split_weight(block: object) -> int:
    """The share weight of ``block`` when an entry's measured tokens are spread over its
    blocks (characters of its text; an image or document weighs four characters per
    estimated token, so a screenshot beside a caption gets the screenshot's share)."""
    if isinstance(block, Image):
        if block.width is None or block.height is None:
            return 4 * math.ceil(ANTHROPIC_MAX_PIXELS / 750)
        return 4 * anthropic_image_tokens(block.width, block.height)
    if isinstance(block, Document):
        text = block.plain_text()
        return len(text) if text is not None else 4 * 4600 * (block.pages or 10)
    if isinstance(block, ToolResult) and block.media:
        return len(block.content) + sum(split_weight(m) for m in block.media)
    return len(block_text(block))  # type: ignore[arg-type]
