"""The :class:`Provider` object and the types of its parts.

A provider is one API endpoint family regio lays requests out for (``anthropic``, ``openai``,
``vllm``, ...). Everything regio knows of it is one :class:`Provider`:

* ``renderer``: the :class:`regio.layout.render.registry.Renderer` that turns a laid-out
  :class:`regio.layout.Request` into its payload;
* ``tool_framing``: the :class:`regio.tokens.tooldefs.ToolFraming` its tool definitions are
  sent (and so counted) with;
* ``chat_overhead``: the :class:`regio.tokens.ChatFormatOverhead` of its chat format (tokens
  per message, per name, reply priming), which its token counters use;
* ``usage``: the :class:`UsageParser` of its usage reports;
* ``responses``: the :class:`ResponseReader` of its responses;
* ``cache_rule``: the :class:`CacheRuleKey` of its rules in the cache rules data
  (``regio/data/cache-rules.yaml``), ``None`` when no rule describes its caching;
* ``default_model``: the model used when a name gives only the provider;
* ``aliases``: other names it answers to; ``agent_client``: the ``regio run --provider``
  client that talks to it (``None``: none does).

Providers are registered by name (:mod:`regio.providers.registry`) and every other module
finds them there; adding one is one module and one :func:`regio.providers.register_provider`
call (docs/architecture.md, "A new provider").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from regio.layout.render.registry import Renderer
from regio.tokens.overhead import ChatFormatOverhead
from regio.tokens.tooldefs import ToolFraming

if TYPE_CHECKING:
    from regio.cache.rules import Rule, RuleSet
    from regio.content import Message

__all__ = ["CacheRuleKey", "Provider", "ResponseReader", "UsageFields", "UsageParser"]

#: The token fields a usage parser gives (a subset of :class:`regio.session.UsageRecord`'s):
#: ``prompt_tokens`` (the whole prompt), ``uncached_tokens``, ``cache_read_tokens``,
#: ``cache_write_5m_tokens``, ``cache_write_1h_tokens``, ``cache_write_tokens``,
#: ``output_tokens``; a field left out is 0.
UsageFields = dict[str, int]


@attrs.frozen
class UsageParser:
    """Reads one API's usage report (an SDK usage object or its dict).

    * ``api``: the name of the shape, recorded as :attr:`regio.session.UsageRecord.api`;
    * ``recognizes(usage) -> bool``: whether ``usage`` has this shape. The registered parsers
      recognize disjoint shapes (a test checks each one's ``example`` against all the others);
    * ``parse(usage) -> UsageFields``: the token counts; raises
      :class:`regio.errors.UsageError` naming the field of a count that is not one;
    * ``keys``: the top-level keys that mark a report of this kind (how
      :func:`regio.sdk._objects.usage_of` tells a usage report from a response carrying one);
    * ``describes``: the shape in a few words, for error messages;
    * ``example``: a report of this shape as the provider documents it (tests drive the parser
      with it).
    """

    api: str
    recognizes: Callable[[object], bool]
    parse: Callable[[object], UsageFields]
    keys: tuple[str, ...]
    describes: str
    example: Mapping[str, Any]


@attrs.frozen
class ResponseReader:
    """Reads one API's response (the dict of an SDK response object) into regio's content.

    * ``api``: the name of the shape;
    * ``recognizes(data) -> bool``: whether the response dict ``data`` has this shape
      (disjoint across the registered readers, checked like :class:`UsageParser`'s);
    * ``message(data) -> Message``: the assistant :class:`regio.content.Message`; raises a
      :class:`regio.errors.RegioError` naming the place for a part of the wrong shape;
    * ``usage_key``: where the response carries its usage report (``usage``);
    * ``describes``: the shape in a few words, for error messages;
    * ``example``: a response as the provider documents it.
    """

    api: str
    recognizes: Callable[[Mapping[str, Any]], bool]
    message: Callable[[dict[str, Any]], Message]
    usage_key: str
    describes: str
    example: Mapping[str, Any]


@attrs.frozen
class CacheRuleKey:
    """Where a provider's prefix-cache rules are in the cache rules data: its ``provider`` key
    there and the ``mechanism`` chosen when a model has rules of several (``None``: the rules'
    own default; Google's implicit ``auto_prefix`` beside its explicit cached contents)."""

    provider: str
    mechanism: str | None = None

    def resolve(
        self,
        model: str,
        *,
        rules: RuleSet | None = None,
        platform: str | None = None,
        sim_date: str | None = None,
        mechanism: str | None = None,
    ) -> Rule:
        """The rule of ``model`` (:meth:`regio.cache.rules.RuleSet.resolve`; ``rules``: default
        the packaged ones). Raises :class:`regio.cache.types.CacheRuleError` when none
        matches."""
        from regio.cache.rules import default_rules

        ruleset = rules if rules is not None else default_rules()
        return ruleset.resolve(
            self.provider, model, platform, sim_date, mechanism or self.mechanism
        )


@attrs.frozen
class Provider:
    """One provider and every part of it (module docstring). Build one per provider and
    register it with :func:`regio.providers.register_provider`."""

    name: str
    renderer: Renderer
    tool_framing: ToolFraming
    chat_overhead: ChatFormatOverhead
    usage: UsageParser
    responses: ResponseReader
    cache_rule: CacheRuleKey | None
    default_model: str
    aliases: tuple[str, ...] = ()
    agent_client: str | None = None

    @property
    def api(self) -> str:
        """The name of its renderer's API (``renderer.api``)."""
        return self.renderer.api
