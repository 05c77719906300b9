"""What summaries keep, and the text rules they share (``docs/items.md``).

* :mod:`regio.summarizers.statements` -- sentences, a rule kept with its condition;
* :mod:`regio.summarizers.kinds` -- the kinds of durable items and how a statement is sorted;
* :mod:`regio.summarizers.subjects` -- an item's key (its subject) and related keys;
* :mod:`regio.summarizers.items` -- :class:`DurableItem` and the keyed :class:`ItemSet`;
* :mod:`regio.summarizers.extract` -- :func:`extract_items` from a compaction's entries;
* :mod:`regio.summarizers.carryforward` -- the carry-forward schema of a summary, reading a
  reply back and validating it against the extracted items;
* :mod:`regio.summarizers.valuestatements`, :mod:`regio.summarizers.openitems`,
  :mod:`regio.summarizers.tracebacks`, :mod:`regio.summarizers.observations` -- values and
  their keys, to-dos and their completions, stack traces, environment observations.

The package depends on :mod:`regio.content` only; the runtime (``regio.runtime``) uses it.
"""

from __future__ import annotations

from regio.summarizers.carryforward import SCHEMA_INSTRUCTIONS, check_reply, split_reply
from regio.summarizers.extract import Extraction, extract_items
from regio.summarizers.items import DurableItem, ItemSet, parse_items, render_items
from regio.summarizers.kinds import KINDS, classify
from regio.summarizers.subjects import item_key, related

__all__ = [
    "KINDS",
    "SCHEMA_INSTRUCTIONS",
    "DurableItem",
    "Extraction",
    "ItemSet",
    "check_reply",
    "classify",
    "extract_items",
    "item_key",
    "parse_items",
    "related",
    "render_items",
    "split_reply",
]
