"""The engines of the proxy's sessions: built from the blueprint, loaded from the store, kept
warm in the worker between requests.

Every session's engine is made from the one blueprint the proxy was started with
(:meth:`regio.Engine.from_blueprint`, with the session id, which seeds the OpenAI
``prompt_cache_key``) and saved to the store after each request (``Engine.save_to``). A worker
keeps the engines it served last in memory (:class:`EngineCache`, least recently used out, each
with its session's cache prediction state, :class:`regio.proxy.accounting.CachePrediction`) and
uses one again only while the store holds no newer version of its session (another worker
served it since): otherwise it loads the session (``Engine.load_from``), which reads the head
and the window, never the whole history.

**The summarizer** an engine keeps between requests is the offline
:class:`regio.ExtractiveSummarizer`, sized by the blueprint's ``summarizer`` section: a proxy
keeps no key between requests. With ``--summarizer upstream`` each request binds a summarizer
that asks the proxy's upstream, with the client's own key, for that request only
(:mod:`regio.proxy.summaries`). In the default ``offline`` mode a blueprint that names a
summarizer model (``summarizer.model``) or an LLM ``summarizer.provider`` is served with the
extractive one, with a warning when the proxy starts that names the model not called and how to
have it write the summaries (:attr:`EngineFactory.summarizer_warning`). Neither mode calls
``summarizer.base_url``: the proxy calls no host but its upstream.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import attrs

from regio import Engine, ExtractiveSummarizer
from regio.providers import find_provider

from .accounting import CachePrediction

if TYPE_CHECKING:
    from regio.blueprint import Blueprint
    from regio.persistence.store import SessionStore

__all__ = ["EngineCache", "EngineFactory", "Warm", "api_provider"]

#: The provider a request of each API is recorded under when the blueprint's provider speaks
#: another API (its usage shape, calibration key and price lookup).
_API_PROVIDER = {
    "anthropic": "anthropic",
    "openai_chat": "openai",
    "openai_responses": "openai_responses",
}


def api_provider(blueprint_provider: str, api: str) -> str:
    """The provider name the engine lays out and records a request of ``api`` under: the
    blueprint's when it speaks that API, else the API's own provider."""
    row = find_provider(blueprint_provider)
    if row is not None and row.api == api:
        return blueprint_provider
    if api == "openai_responses" and blueprint_provider == "openai":
        return "openai_responses"
    return _API_PROVIDER[api]


@attrs.define
class EngineFactory:
    """Builds and loads the engines of one blueprint (module doc); ``mode``: the proxy's
    ``--summarizer`` (``offline`` | ``upstream``)."""

    blueprint: Blueprint
    mode: str = "offline"

    @property
    def summarizer_warning(self) -> str | None:
        """Why the model the blueprint's ``summarizer`` names is not called, what writes
        the summaries instead and how to have that model write them; ``None`` in ``upstream``
        mode, or when the section names neither a model nor an LLM provider (the extractive
        default)."""
        spec = self.blueprint.summarizer
        if self.mode == "upstream" or (spec.provider == "extractive" and not spec.model):
            return None
        model = spec.model or self.blueprint.model.name
        named = (
            f"summarizer.model {model!r}"
            if spec.provider == "extractive"
            else f"summarizer.provider {spec.provider!r} (model {model!r})"
        )
        return (
            f"{named} is not called: the proxy writes every summary with the offline "
            "extractive summarizer (--summarizer offline, the default); to have "
            f"{model} write the summaries, start the proxy with --summarizer upstream (each "
            "summary is then one more request to the upstream, with the client's own key, "
            "billed to it)"
        )

    def summarizer(self) -> ExtractiveSummarizer:
        """A fresh extractive summarizer sized by the blueprint's ``summarizer`` section."""
        spec = self.blueprint.summarizer
        window = spec.context_window or self.blueprint.model.context_window
        return ExtractiveSummarizer(
            context_window=window, max_summary_tokens=spec.max_summary_tokens
        )

    def new(self, session: str) -> Engine:
        """A new engine for ``session``."""
        return Engine.from_blueprint(
            self.blueprint, summarizer=self.summarizer(), session_id=session
        )

    def load(self, store: SessionStore, session: str) -> Engine:
        """``session``'s engine from ``store``. Raises
        :class:`regio.persistence.store.SessionNotFoundError`."""
        return Engine.load_from(
            store, session, summarizer=self.summarizer(), blueprint=self.blueprint
        )


@attrs.frozen
class Warm:
    """A session's state a worker keeps between its requests: the ``engine`` and its cache
    ``prediction`` state."""

    engine: Engine
    prediction: CachePrediction = attrs.field(factory=CachePrediction)


@attrs.define
class EngineCache:
    """The engines a worker served last, by session id, at most ``size`` of them."""

    size: int = 256
    _engines: OrderedDict[str, Warm] = attrs.field(factory=OrderedDict)
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def take(self, session: str, version: int) -> Warm | None:
        """The cached engine of ``session`` (with its prediction state) if it is at stored
        ``version``, else ``None``; it leaves the cache (a request owns it until :meth:`put`)."""
        with self._lock:
            warm = self._engines.pop(session, None)
        mark = getattr(warm.engine, "store_mark", None) if warm is not None else None
        if warm is None or mark is None or mark.version != version:
            return None
        return warm

    def put(self, session: str, engine: Engine, prediction: CachePrediction | None = None) -> None:
        """Keep ``engine`` (and its session's ``prediction`` state) as ``session``'s, dropping
        the least recently used past ``size``."""
        with self._lock:
            self._engines[session] = Warm(engine, prediction or CachePrediction())
            self._engines.move_to_end(session)
            while len(self._engines) > self.size:
                self._engines.popitem(last=False)

    def drop(self, session: str) -> None:
        """Forget ``session``'s engine."""
        with self._lock:
            self._engines.pop(session, None)
