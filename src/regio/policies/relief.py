"""Relief before summarization: the pure rules of the chain's first two stages.

Under token pressure the relief chain (:mod:`regio.compaction.relief._chain`) frees tokens cheapest
first: (0) **dedupe** (a result superseded by a newer call with the same tool and arguments,
for tools with ``dedupe``), (1) **clear** old tool results (each becomes a short placeholder
naming the call), (2) **trim** oversized text blocks (head + tail with a marker saying how much
was cut), and only then (3) summarize. This module decides *what* each stage would touch; it
changes nothing.

Rules (the same reasons as Anthropic's ``clear_tool_uses_20250919`` context edit,
https://docs.anthropic.com/en/docs/build-with-claude/context-editing):

* **Never what the model has not answered yet.** Tool results after the last assistant
  message are never cleared or trimmed; neither are the newest ``keep_last`` tool results
  (a tool's own ``keep_last`` keeps that many of its results too), the results of a tool with
  ``clear: false``, compaction summaries and user text (the user's instructions stay verbatim).
* **Oldest first, one batch.** Candidates come oldest first; a stage takes the fewest oldest
  ones that free ``max(need, at_least)`` tokens, all of them when they free less, and nothing
  when even all of them free less than ``at_least`` (so the cached prefix is rewritten rarely
  and for a reason: each edit rewrites the cache from the first edited block on).
* **Groups stay whole.** A stage replaces a block's content, never removes a block: a
  ``tool_use`` and its ``tool_result`` stay one group in every payload.

Sizes: ``*_chars`` are characters (trimming cuts text, and characters are what stays
byte-stable across tokenizers), ``*_tokens`` / ``*_at_least`` are tokens of the engine's
counter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated

import msgspec

from regio.content import Block, Entry, Text, ToolResult, ToolUse, canonical_json
from regio.policies.fieldrules import check_fields, declare_rules, field_key

__all__ = [
    "CLEARED_META",
    "MARKER_TOKENS",
    "TRIMMED_META",
    "Candidate",
    "ReliefPolicy",
    "ToolRelief",
    "block_text",
    "choose",
    "choose_all",
    "clear_candidates",
    "dedupe_candidates",
    "placeholder",
    "trim_candidates",
    "trim_marker",
    "trim_problem",
    "trim_text",
    "trimmed_to",
]

#: ``Entry.meta`` key listing the call ids whose results in the entry were cleared.
CLEARED_META = "relief_cleared"
#: ``Entry.meta`` key counting the blocks of the entry the trim stage cut.
TRIMMED_META = "relief_trimmed"
#: Tokens of :func:`trim_marker` for a cut of up to 10**12 characters under regio's counters
#: (measured: 16 with ``o200k_base`` and ``cl100k_base``, 14 with ``heuristic``): the smallest
#: ``max_result_tokens`` a trimmed result can honour (it keeps at least the marker).
MARKER_TOKENS = 16


def trim_problem(over: int, head: int, tail: int) -> str | None:
    """Why a trim of blocks over ``over`` characters to ``head`` + ``tail`` is refused
    (``None``: it is not): a trimmed block must be 200 characters under the threshold, or it
    would be trimmed again."""
    if head + tail + 200 <= over:
        return None
    return (
        f"trim_over_chars ({over}) must exceed trim_head_chars + trim_tail_chars ({head} + "
        f"{tail}) by at least 200 characters, or a trimmed block would be trimmed again"
    )


@declare_rules
class ToolRelief(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Relief policy of one tool (blueprint ``relief.tools.<name>``).

    ``clear``: false excludes the tool's results from clearing and trimming; ``keep_last``:
    its newest N results are never cleared (``None``: only the chain-wide ``keep_last``);
    ``max_result_tokens``: a longer result is trimmed on admission (head + tail with the
    marker; the full result stays restorable); ``dedupe``: a newer call with the same tool and
    arguments supersedes the older result (the chain's dedupe stage, under pressure); ``route``:
    the name of a region the result goes to instead of the conversation (a pointer is left);
    ``route_key``: key template of a keyed ``route`` region, e.g. ``"file:{path}"``. Each
    field's constraint and blueprint documentation are its ``Meta`` (:func:`field_rules`).
    Raises ``ValueError`` for a value that breaks one: a ``max_result_tokens`` below
    :data:`MARKER_TOKENS` (a trimmed result keeps at least its marker, so it could not honour
    the limit), a negative ``keep_last``, an empty ``route`` or ``route_key``."""

    clear: Annotated[
        bool,
        field_key(
            "`false`: the tool's results are never cleared or trimmed (e.g. a tool whose "
            "results the agent keeps referring to)."
        ),
    ] = True
    keep_last: (
        Annotated[
            int,
            field_key(
                "The tool's newest N results are never cleared (on top of `relief.keep_last`). "
                "Omitted: only `relief.keep_last`.",
                ge=0,
            ),
        ]
        | None
    ) = None
    max_result_tokens: (
        Annotated[
            int,
            field_key(
                "A longer result is trimmed when it is admitted: head and tail kept around a "
                "marker saying how many characters were cut; `context_restore` brings the full "
                f"text back. At least {MARKER_TOKENS} (the marker's size). Omitted: no limit.",
                ge=MARKER_TOKENS,
            ),
        ]
        | None
    ) = None
    dedupe: Annotated[
        bool,
        field_key(
            "A newer call with the same tool and arguments supersedes the older result: under "
            "token pressure, the chain's first stage makes every such older result a "
            "placeholder naming the newer call (see `dedupe_at_least`)."
        ),
    ] = False
    route: (
        Annotated[
            str,
            field_key(
                "Region (temporary, clearable or keyed) the tool's results are written to "
                "instead of the conversation, which keeps a short pointer. Omitted: results "
                "stay in the conversation.",
                min_length=1,
            ),
        ]
        | None
    ) = None
    route_key: (
        Annotated[
            str,
            field_key(
                "`route` into a keyed region: key template of the call's arguments, e.g. "
                '"file:{path}" (`{tool}` is the tool\'s name). Required for a keyed region, '
                "not allowed otherwise.",
                min_length=1,
            ),
        ]
        | None
    ) = None

    def __post_init__(self) -> None:
        check_fields(self, "")


_DEFAULT_TOOL = ToolRelief()


@declare_rules
class ReliefPolicy(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The relief chain of one engine (``EngineOptions.relief``; blueprint ``relief``).

    Stage 0 ``dedupe`` (the tools with ``dedupe``: every result superseded by a newer call
    with the same tool and arguments, all at once, when together they free
    ``dedupe_at_least`` tokens), stage 1 ``clear`` (``keep_last`` newest results kept, default
    3 as Anthropic's
    ``keep``; ``clear_at_least`` tokens or the stage does not run), stage 2 ``trim`` (text over
    ``trim_over_chars`` characters cut to ``trim_head_chars`` + ``trim_tail_chars`` with a
    marker, the 4,000 / 1,200 / 800 of the agentgo compactor chain; ``trim_at_least`` tokens
    or the stage does not run), then the region's own summarization. ``restore_tool``: offer
    ``context_restore`` whatever ``EngineOptions.context_tools`` says (except a tuple without
    it). ``clear_after_summary``: when the stages cannot reach the target and the region is
    summarized, run them on what the summary kept, in the same cache rewrite (cheaper: the
    next compaction comes later), or, when that would free less than their minimum, on the
    whole conversation before the summary's cut
    (:func:`regio.compaction.relief._chain.relieve_before_cut`).
    ``summarize_originals``: the summarizer reads the originals of edited results (default:
    what the conversation holds). ``placeholder_extract_tokens``: a cleared result's
    placeholder also carries up to this many tokens of the result's salient items (error
    lines, paths, ids, numbers; 0: none). ``tools``: per-tool :class:`ToolRelief`. Each
    field's constraint and blueprint documentation are its ``Meta`` (:func:`field_rules`; the
    blueprint's ``relief`` keys are made from them). Raises ``ValueError`` for a negative size
    or a trim whose head and tail do not fit under its threshold (:func:`trim_problem`)."""

    dedupe_at_least: Annotated[
        int,
        field_key(
            "Tokens the dedupe stage (stage 0, for tools with `dedupe`) must free, or it does "
            "not run; when it runs it supersedes every duplicate at once, never one whose "
            "placeholder is not smaller.",
            ge=0,
        ),
    ] = 1024
    clear: Annotated[bool, field_key("Stage 1: clear old tool results (placeholders).")] = True
    keep_last: Annotated[
        int,
        field_key("Newest tool results never cleared (Anthropic's context editing keeps 3).", ge=0),
    ] = 3
    clear_at_least: Annotated[
        int,
        field_key(
            "Tokens stage 1 must free, or it does not run (each clearing rewrites the cached "
            "prefix from the first cleared result on).",
            ge=0,
        ),
    ] = 1024
    trim: Annotated[bool, field_key("Stage 2: trim oversized text blocks (head + tail).")] = True
    trim_over_chars: Annotated[
        int,
        field_key(
            "Stage 2 trims tool results and assistant text longer than this (characters); "
            "user text is never trimmed.",
            ge=1,
        ),
    ] = 4000
    trim_head_chars: Annotated[
        int, field_key("Characters kept at the start of a trimmed block.", ge=0)
    ] = 1200
    trim_tail_chars: Annotated[
        int, field_key("Characters kept at the end of a trimmed block.", ge=0)
    ] = 800
    trim_at_least: Annotated[
        int, field_key("Tokens stage 2 must free, or it does not run.", ge=0)
    ] = 1024
    restore_tool: Annotated[
        bool,
        field_key(
            "Offer `context_restore` (call id -> the full result, appended at the end of the "
            "conversation) whatever `tools.context` says; placeholders name it."
        ),
    ] = True
    clear_after_summary: Annotated[
        bool,
        field_key(
            "When clearing and trimming cannot reach the target and the conversation is "
            "summarized, also clear and trim what the summary kept, in the same cache "
            "rewrite: cheaper (longer between compactions); when that would free less than "
            "the stages' minimum, clear the whole conversation before the summary's cut "
            "instead, so the summary covers only what clearing cannot free. With salient "
            "placeholders (`placeholder_extract_tokens`) the facts stay (docs/relief.md has "
            "the figures). `false`: the tool results the summary kept stay verbatim."
        ),
    ] = True
    summarize_originals: Annotated[
        bool,
        field_key(
            "The summarizer reads the original text of the results the chain cleared or "
            "trimmed. `false` (the default): it reads what the conversation holds, their "
            "placeholders with their salient items, at a fraction of the summarizer's input "
            "tokens (docs/relief.md has the figures); the originals stay in the transcript "
            "and `context_restore` brings them back."
        ),
    ] = False
    placeholder_extract_tokens: Annotated[
        int,
        field_key(
            "A cleared result's placeholder also carries up to this many tokens of the "
            "result's salient items (error lines, file paths, ids, numbers), so its facts stay "
            "in the context; the extract depends only on the result, so the placeholder never "
            "changes. 0: the placeholder names the call only.",
            ge=0,
        ),
    ] = 200
    tools: dict[str, ToolRelief] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        check_fields(self, "relief.")
        problem = trim_problem(self.trim_over_chars, self.trim_head_chars, self.trim_tail_chars)
        if problem is not None:
            raise ValueError(f"relief.{problem}")

    def tool(self, name: str) -> ToolRelief:
        """The policy of tool ``name`` (the defaults when it has none)."""
        return self.tools.get(name, _DEFAULT_TOOL)


class Candidate(msgspec.Struct, frozen=True):
    """One block a stage could edit: ``index`` of its entry in the region, ``block`` its index
    in the entry, ``call_id`` / ``tool`` of a tool result (empty for a text block); ``by``: for
    the dedupe stage, the newer call with the same tool and arguments."""

    index: int
    block: int
    call_id: str = ""
    tool: str = ""
    by: str = ""


def placeholder(
    call_id: str,
    tool: str,
    *,
    restorable: bool,
    extract: str = "",
    reported: Sequence[str] = (),
) -> str:
    """The text a cleared result becomes. It depends only on the call id, the tool name, whether the
    engine offers ``context_restore`` (fixed for an engine), ``extract`` (the result's salient
    items, :func:`regio.compaction.relief._extract.salient_extract`) and ``reported`` (the
    values the result reports and the sentences a compaction would quote,
    :func:`regio.summarizers.toolnotes.reported_lines`, each on a line of its own after the
    bracket, as the result wrote it, so a summary of the placeholder keeps them as items), all
    functions of the immutable result text, so it is byte-identical on every later request."""
    how = (
        f'context_restore(call_id="{call_id}") brings it back'
        if restorable
        else "kept in the session transcript"
    )
    held = f"; it held: {extract}" if extract else ""
    lines = "".join(f"\n{line}" for line in reported)
    return f"[{tool} result of call {call_id} cleared to save context; {how}{held}]{lines}"


def trim_marker(cut: int) -> str:
    """The marker between a trimmed block's head and tail (``cut``: characters removed)."""
    return f"\n[... {cut} characters cut to save context ...]\n"


def trim_text(text: str, head: int, tail: int) -> str:
    """``text`` cut to its first ``head`` and last ``tail`` characters around
    :func:`trim_marker` (unchanged when that would not make it shorter)."""
    cut = len(text) - head - tail
    if cut <= 0:
        return text
    out = text[:head] + trim_marker(cut) + (text[len(text) - tail :] if tail else "")
    return out if len(out) < len(text) else text


def trimmed_to(text: str, tokens: int, max_tokens: int, count: Callable[[str], int]) -> str:
    """``text`` (``tokens`` tokens) trimmed to at most ``max_tokens`` tokens by ``count``:
    head (60%) and tail (40%) of the characters that fit around :func:`trim_marker`, shrunk
    until the count fits, else the marker alone. ``text`` itself when ``tokens <=
    max_tokens``; otherwise at most ``max(max_tokens, count(marker))`` tokens, so exactly
    ``max_tokens`` for a limit of at least :data:`MARKER_TOKENS` under regio's counters."""
    if tokens <= max_tokens:
        return text
    keep = int(len(text) * max_tokens / max(tokens, 1))
    for _ in range(8):
        head = keep * 3 // 5
        out = trim_text(text, head, keep - head)
        if out != text and count(out) <= max_tokens:
            return out
        keep = keep * 4 // 5
    return trim_marker(len(text))  # the marker alone: at most MARKER_TOKENS tokens


def call_tools(entries: Sequence[Entry]) -> dict[str, ToolUse]:
    """Call id -> its :class:`ToolUse` over ``entries``."""
    return {b.id: b for e in entries for b in e.blocks if isinstance(b, ToolUse)}


def _last_assistant(entries: Sequence[Entry]) -> int:
    return max((i for i, e in enumerate(entries) if e.role == "assistant"), default=-1)


def _results(entries: Sequence[Entry], tools: Mapping[str, ToolUse]) -> list[Candidate]:
    """Every live (not yet cleared) tool result, oldest first."""
    out = []
    for i, e in enumerate(entries):
        if e.meta.get("summary"):
            continue
        cleared = set(e.meta.get(CLEARED_META, ()))
        for j, b in enumerate(e.blocks):
            if isinstance(b, ToolResult) and b.tool_use_id not in cleared:
                call = tools.get(b.tool_use_id)
                out.append(Candidate(i, j, b.tool_use_id, call.name if call else ""))
    return out


def _kept(results: Sequence[Candidate], policy: ReliefPolicy) -> set[str]:
    """Call ids protected by ``keep_last`` (chain-wide and per tool) or ``clear: false``."""
    newest = results[len(results) - policy.keep_last :] if policy.keep_last else ()
    kept = {c.call_id for c in newest}
    per_tool: dict[str, int] = {}
    for c in reversed(results):
        rule = policy.tool(c.tool)
        if not rule.clear:
            kept.add(c.call_id)
            continue
        seen = per_tool.get(c.tool, 0)
        if rule.keep_last is not None and seen < rule.keep_last:
            kept.add(c.call_id)
        per_tool[c.tool] = seen + 1
    return kept


def clear_candidates(entries: Sequence[Entry], policy: ReliefPolicy) -> list[Candidate]:
    """The tool results stage 1 may clear, oldest first (module doc): answered by a later
    assistant message and not among the newest ``keep_last`` (which count every result)."""
    results = _results(entries, call_tools(entries))
    kept = _kept(results, policy)
    limit = _last_assistant(entries)
    return [c for c in results if c.call_id not in kept and c.index < limit]


def dedupe_candidates(entries: Sequence[Entry], policy: ReliefPolicy) -> list[Candidate]:
    """The live results the dedupe stage may supersede, oldest first: results of a tool with
    ``dedupe`` whose call has the same tool and arguments (canonical JSON) as a newer call
    whose final result is in ``entries`` too (``Candidate.by``: the newest such call). A
    progress report (``ToolResult(final=False)``) supersedes nothing: a job still running
    has not produced the newer result, so the older final one stays."""
    if not any(rule.dedupe for rule in policy.tools.values()):
        return []
    tools = call_tools(entries)
    results = [
        c for c in _results(entries, tools) if c.call_id in tools and policy.tool(c.tool).dedupe
    ]
    newest: dict[bytes, str] = {}  # per key, the newest call with a final result
    out = []
    for c in reversed(results):  # newest first: a result is superseded by a later final one
        call = tools[c.call_id]
        key = canonical_json([call.name, call.input])
        by = newest.get(key)
        if by is not None and by != c.call_id:
            out.append(msgspec.structs.replace(c, by=by))
        block = entries[c.index].blocks[c.block]
        if by is None and isinstance(block, ToolResult) and block.is_final:
            newest[key] = c.call_id
    return out[::-1]


def trim_candidates(entries: Sequence[Entry], policy: ReliefPolicy) -> list[Candidate]:
    """The blocks stage 2 may trim, oldest first: live tool results stage 1 could clear and
    assistant text blocks before the last assistant message, longer than
    ``trim_over_chars`` characters (module doc)."""
    over = policy.trim_over_chars
    out = [
        c
        for c in clear_candidates(entries, policy)
        if len(block_text(entries[c.index].blocks[c.block])) > over
    ]
    limit = _last_assistant(entries)
    for i, e in enumerate(entries[: max(limit, 0)]):
        if e.role != "assistant" or e.meta.get("summary"):
            continue
        out.extend(
            Candidate(i, j)
            for j, b in enumerate(e.blocks)
            if isinstance(b, Text) and len(b.text) > over
        )
    out.sort(key=lambda c: (c.index, c.block))
    return out


def block_text(block: Block) -> str:
    """The text a relief stage edits: a tool result's content, a text block's text, else ""."""
    if isinstance(block, ToolResult):
        return block.content
    return block.text if isinstance(block, Text) else ""


def choose(
    candidates: Sequence[Candidate],
    freed: Callable[[Candidate], int],
    need: int,
    at_least: int,
) -> tuple[list[Candidate], int]:
    """The fewest oldest ``candidates`` that free ``max(need, at_least)`` tokens (``freed``
    gives each one's tokens), all of them when they free less, and ``([], 0)`` when even all
    of them free less than ``at_least`` or ``need <= 0``. Returns ``(chosen, tokens freed)``."""
    if need <= 0:
        return [], 0
    goal = max(need, at_least)
    chosen: list[Candidate] = []
    total = 0
    for c in candidates:
        gain = freed(c)
        if gain <= 0:
            continue
        chosen.append(c)
        total += gain
        if total >= goal:
            break
    if total < at_least:
        return [], 0
    return chosen, total


def choose_all(
    candidates: Sequence[Candidate], freed: Callable[[Candidate], int], at_least: int
) -> tuple[list[Candidate], int]:
    """Every candidate that frees tokens (``freed(c) > 0``; one whose edit would not free any
    is never taken), or ``([], 0)`` when together they free less than ``at_least`` (or none).
    The dedupe stage's batch: when it runs it supersedes every duplicate at once, so the
    prefix is rewritten once for all of them. Returns ``(chosen, tokens freed)``."""
    chosen = [c for c in candidates if freed(c) > 0]
    total = sum(freed(c) for c in chosen)
    if total <= 0 or total < at_least:
        return [], 0
    return chosen, total
