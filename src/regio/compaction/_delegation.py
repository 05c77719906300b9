"""Delegating compaction to the provider, keeping a readable summary of regio's own.

With ``EngineOptions.delegate_compaction = N`` every Anthropic Messages and OpenAI Responses
request asks the provider to compact the conversation itself once its input passes ``N``
tokens (Anthropic's threshold compaction ``compact_20260112``; OpenAI's
``context_management`` compaction; :mod:`regio.layout.provider_compaction`). When a response
carries the provider's compaction block or item, the caller hands it to
:meth:`regio.engine.Engine.adopt_compaction` (:func:`adopt_steps`): the engine compacts the whole
conversation it sent with its own summarizer (the blueprint's; the default extractive one
sends no request), so a readable summary of its own stands for the same span in
``compact_history``, and it records the provider's item on that summary entry
(``meta["provider_compaction"] = {"api": ..., "item": {...}}``, saved with the entry).

From then on a request for the item's API renders the item in place of the readable
summary (the provider reads its own state, and drops what precedes it); a request for any
other API, or after the item's endpoint is gone, renders the readable summary, so the session
moves between providers. The provider's item is opaque for OpenAI (encrypted); Anthropic's
is text, but signed output of another model: it is kept as returned, never edited.

The provider decides when it compacts: with delegation on, set the conversation's budget at
or above the trigger's share of the window, else regio's own compaction runs first and the
provider never sees a request that passes the trigger.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from regio.errors import RegioError
from regio.layout.provider_compaction import COMPACTION_APIS, ProviderCompaction
from regio.session._session import CompactionResult, Session, Steps

from ._flushes import manual_steps

if TYPE_CHECKING:
    from regio.regions import Window

__all__ = [
    "PROVIDER_ITEM_KEY",
    "ProviderCompactionError",
    "adopt_steps",
    "attach_item",
    "check_item",
    "render_option",
]

#: The summary entry's ``meta`` key holding the provider's item.
PROVIDER_ITEM_KEY = "provider_compaction"


class ProviderCompactionError(RegioError, ValueError):
    """Delegation asked of an API that has no server-side compaction, or an item that is not
    one; the message names the API and the fix."""


def _items(window: Window, api: str) -> dict[str, dict[str, Any]]:
    """Summary entry id -> the provider item recorded on it for ``api``."""
    out: dict[str, dict[str, Any]] = {}
    for region in window.regions:
        if region.kind != "compact_history":
            continue
        for entry in region.entries:
            held = entry.meta.get(PROVIDER_ITEM_KEY)
            if isinstance(held, Mapping) and held.get("api") == api:
                out[entry.id] = dict(held["item"])
    return out


def render_option(window: Window, trigger: int | None, api: str) -> ProviderCompaction | None:
    """The renderers' ``compaction`` option for a request of ``api``: the ``trigger``
    (tokens; ``None``: delegation off) and the provider items recorded for ``api``.
    ``None`` when neither applies. Raises :class:`ProviderCompactionError` when ``trigger``
    is set for an API without server-side compaction."""
    if api not in COMPACTION_APIS:
        if trigger is not None:
            raise ProviderCompactionError(
                f"EngineOptions.delegate_compaction asks the provider to compact, but this "
                f"request renders for {api!r}, which has no server-side compaction: request "
                f"one of {', '.join(COMPACTION_APIS)} (api='openai_responses' for OpenAI), "
                "or leave delegate_compaction unset for this engine"
            )
        return None
    items = _items(window, api)
    if trigger is None and not items:
        return None
    return ProviderCompaction(trigger, items)


def check_item(api: str, item: object) -> Mapping[str, object]:
    """Raise :class:`ProviderCompactionError` unless ``item`` is a compaction block / item (a
    mapping whose ``type`` is ``"compaction"``) of an API with server-side compaction."""
    if api not in COMPACTION_APIS:
        raise ProviderCompactionError(
            f"adopt_compaction: api {api!r} has no server-side compaction; use one of "
            f"{', '.join(COMPACTION_APIS)}"
        )
    if not isinstance(item, Mapping) or item.get("type") != "compaction":
        raise ProviderCompactionError(
            "adopt_compaction: item must be the provider's compaction block / item, a mapping "
            f"with type 'compaction' (got {type(item).__name__}); pass it as the response "
            "carried it"
        )
    return item


def attach_item(window: Window, summary_ids: tuple[str, ...], api: str, item: object) -> str:
    """Record the provider's ``item`` for ``api`` (checked by :func:`check_item`) on the
    newest of the summary entries ``summary_ids``; returns its id. Raises
    :class:`ProviderCompactionError` when none of them is in the window."""
    mapping = check_item(api, item)
    wanted = set(summary_ids)
    for region in window.regions:
        entries = region.entries
        for index in range(len(entries) - 1, -1, -1):
            entry = entries[index]
            if entry.id in wanted:  # a new entry: memos that know the old one by identity see it
                meta = {**entry.meta, PROVIDER_ITEM_KEY: {"api": api, "item": dict(mapping)}}
                entries[index] = msgspec.structs.replace(entry, meta=meta)
                return str(entry.id)
    raise ProviderCompactionError(
        "adopt_compaction: the compaction wrote no summary to hold the provider's item "
        "(the conversation was empty)"
    )


def adopt_steps(c: Session, api: str, item: object) -> Steps[CompactionResult | None]:
    """``Engine.adopt_compaction`` / ``aadopt_compaction``: the provider compacted the
    conversation of the last request and returned ``item`` (Anthropic's ``compaction`` block,
    ``api="anthropic"``; OpenAI's Responses ``compaction`` item, ``api="openai_responses"``).
    Compacts the whole conversation now with the engine's summarizer (a readable summary of its
    own; a step generator, its summarizer jobs go to the caller's driver) and records ``item``
    on that summary (module doc), so requests for ``api`` render the item in its place and any
    other API the readable summary. Call it before adding the response's other content.
    Returns the compaction's result (``None``: nothing to compact, nothing recorded). Raises
    :class:`ProviderCompactionError` for an API without server-side compaction or an item that
    is not one, before anything changes."""
    check_item(api, item)
    result = yield from manual_steps(c, None, 0, None, None)
    if result is not None:
        attach_item(c.window, result.summary_ids, api, item)
    return result
