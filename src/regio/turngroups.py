"""Turn groups: which messages of a conversation are one unit.

A **turn group** is an assistant message with tool calls plus every tool result that answers
one of its call ids, wherever those results are (:mod:`regio.content` has the blocks). Groups
are evicted, compacted and rendered as one unit. A group whose calls are not all answered by a
final result is **open** (a progress report, ``ToolResult(final=False)``, joins the group
without answering its call). :func:`group_messages` / :func:`group_entries` assign every
message / entry to its :class:`TurnGroup` (a :class:`Grouping`), in O(n + calls).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import msgspec

from regio.content import Block, Entry, Message, ToolResult, ToolUse

__all__ = ["Grouping", "TurnGroup", "group_entries", "group_messages"]


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
    find: Callable[[int], int],
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
