"""The options of ``regio proxy`` (:class:`ProxyConfig`) and the stores they name.

``--store`` takes ``sqlite:PATH`` (also ``sqlite:///relative.db`` / ``sqlite:////abs.db``, as
``regio inspect``) or ``redis://HOST:PORT/DB``; the default is the SQLite file
``regio-proxy.db`` in the working directory. The engine sessions
(:class:`regio.persistence.store.SQLiteStore` / :class:`regio.persistence.store.RedisStore`) and the
proxy's own records (:mod:`regio.proxy.records`) live in that one database.

``--store-writer`` says where a SQLite store's write transactions run: ``thread`` (the
default) in the request's worker thread, ``process`` in one child process per file (why, and
what it measured: :mod:`regio.persistence.store.sqlite_writer`). Redis stores ignore it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar
from urllib.parse import urlparse

import attrs

from regio.blueprint import Blueprint, load_blueprint
from regio.persistence.store import RedisStore, SQLiteStore
from regio.persistence.store.lease import MAX_TTL

from .errors import ProxyConfigError
from .records import Records

__all__ = ["DEFAULT_STORE", "STORE_WRITERS", "SUMMARIZER_MODES", "ProxyConfig", "open_stores"]

DEFAULT_STORE = "sqlite:regio-proxy.db"
#: The values of ``--summarizer`` (:mod:`regio.proxy.summaries`).
SUMMARIZER_MODES = ("offline", "upstream")
#: The values of ``--store-writer`` (module doc).
STORE_WRITERS = ("process", "thread")

#: The options checked by :func:`_positive`: counts and seconds.
_Number = TypeVar("_Number", int, float)


def _positive(instance: object, attribute: attrs.Attribute[_Number], value: _Number) -> None:
    if value <= 0:
        raise ProxyConfigError(f"--{attribute.name.replace('_', '-')}: must be > 0, got {value}")


def _summarizer(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in SUMMARIZER_MODES:
        raise ProxyConfigError(
            f"--summarizer {value!r}: use offline (the extractive summarizer, no model call: "
            "the default) or upstream (the upstream model writes each summary, billed to the "
            "client's key)"
        )


def _store_writer(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in STORE_WRITERS:
        raise ProxyConfigError(
            f"--store-writer {value!r}: use thread (a SQLite store's writes run in the request's "
            "thread: the default) or process (in a child process of their own)"
        )


def _lease_ttl(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    """A lease's lifetime is at most :data:`regio.persistence.store.lease.MAX_TTL` (the store's own
    rule: a lease that outlives its worker holds the session until it expires)."""
    _positive(instance, attribute, value)
    if not value <= MAX_TTL:
        raise ProxyConfigError(
            f"--lease-seconds: at most {MAX_TTL:g} (a lease is renewed while a request runs; "
            f"a killed worker's lease holds the session until it expires), got {value}"
        )


@attrs.frozen
class ProxyConfig:
    """One proxy's settings. ``blueprint``: a path, YAML text or a loaded blueprint;
    ``upstream``: the base URL without the API path; ``host`` / ``port``: where it listens;
    ``store``: see the module doc; ``lease_seconds``: a session lease's lifetime (renewed every
    third of it while a request runs; a killed worker's lease lapses after it);
    ``lease_wait``: how long a request waits for its session's lease before it is answered
    503 (seconds); ``max_rounds``: calls to regio's own tools answered per request;
    ``engines``: engines a worker keeps warm; ``threads``: threads doing engine work at once
    (they share the interpreter lock; with fewer, a request waits for a compaction to finish
    instead of sharing the lock with it); ``request_log``:
    a file to which each request appends one JSON line (:mod:`regio.proxy.requestlog`);
    ``compact_after_send``: a request's compactions run after it was sent, while the upstream
    answers, when the window fits without them (:mod:`regio.proxy.turn`; ``False``:
    ``--compact-before-send``); ``summarizer``: who writes the compaction summaries,
    ``offline`` (the extractive summarizer, no model call) or ``upstream`` (the upstream model,
    one more upstream request per summary with the client's own key:
    :mod:`regio.proxy.summaries`); ``summary_timeout``: seconds the upstream summary calls of
    one request may take together; past them the offline summarizer writes the rest;
    ``store_writer``: where a SQLite store's writes run (module doc).
    Raises :class:`ProxyConfigError` naming the option."""

    blueprint: Blueprint | str | Path
    upstream: str
    host: str = "127.0.0.1"
    port: int = 8787
    store: str = DEFAULT_STORE
    lease_seconds: float = attrs.field(default=30.0, validator=_lease_ttl)
    lease_wait: float = attrs.field(default=600.0, validator=_positive)
    max_rounds: int = attrs.field(default=3, validator=_positive)
    engines: int = attrs.field(default=256, validator=_positive)
    request_log: str | None = None
    threads: int = attrs.field(default=40, validator=_positive)
    compact_after_send: bool = True
    summarizer: str = attrs.field(default="offline", validator=_summarizer)
    summary_timeout: float = attrs.field(default=120.0, validator=_positive)
    store_writer: str = attrs.field(default="thread", validator=_store_writer)

    def __attrs_post_init__(self) -> None:
        parsed = urlparse(self.upstream)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ProxyConfigError(
                f"--upstream {self.upstream!r}: give the upstream's base URL, e.g. "
                "https://api.anthropic.com or http://127.0.0.1:8080 (the proxy appends the API "
                "path the client uses)"
            )
        for path in ("/v1/messages", "/v1/chat/completions", "/v1/responses"):
            if parsed.path.rstrip("/").endswith(path):
                raise ProxyConfigError(
                    f"--upstream {self.upstream!r}: leave out the API path {path}; the proxy "
                    "appends the path the client used"
                )

    def load_blueprint(self) -> Blueprint:
        """The blueprint, loaded. Raises :class:`regio.blueprint.BlueprintError`."""
        if isinstance(self.blueprint, Blueprint):
            return self.blueprint
        try:
            if isinstance(self.blueprint, Path):
                return load_blueprint(self.blueprint)
            return load_blueprint(str(self.blueprint))
        except OSError as exc:
            raise ProxyConfigError(f"--blueprint {self.blueprint}: {exc}") from exc


def _sqlite_path(url: str) -> str:
    rest = url[len("sqlite:") :]
    if rest.startswith("///"):
        rest = rest[2:] if rest.startswith("////") else rest[3:]
    elif rest.startswith("//"):
        rest = rest[2:]
    if not rest:
        raise ProxyConfigError(f"--store {url!r}: give a file, e.g. sqlite:sessions.db")
    return rest


def open_stores(url: str, *, writer: str = "thread") -> tuple[SQLiteStore | RedisStore, Records]:
    """``(engine store, proxy records)`` of the store ``url`` (module doc); ``writer``: where
    a SQLite store's writes run (:data:`STORE_WRITERS`). Raises :class:`ProxyConfigError` for
    another scheme."""
    if url.startswith("sqlite:"):
        from .records.sqlite import SQLiteRecords

        path = _sqlite_path(url)
        process = writer == "process"
        sessions = SQLiteStore(path, process=process)
        try:
            return sessions, SQLiteRecords(path, process=process)
        except BaseException:
            sessions.close()
            raise
    if url.startswith(("redis://", "rediss://", "unix://")):
        from .records.redis import RedisRecords

        store = RedisStore.from_url(url)
        return store, RedisRecords(store)
    raise ProxyConfigError(
        f"--store {url!r}: use sqlite:PATH (the default, {DEFAULT_STORE}) or redis://HOST:PORT/DB"
    )
