"""``regio proxy --blueprint B.yaml --upstream URL [--host H] [--port P] [--store S]
[--summarizer offline|upstream]``.

Runs one proxy worker until interrupted; it is ready when its port accepts connections. The
server's packages (the ``proxy`` extra) are imported when the command runs, so ``regio --help``
works without them.
"""

from __future__ import annotations

import argparse
import logging
import sys

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``proxy`` to the ``regio`` command."""
    from .config import DEFAULT_STORE, SUMMARIZER_MODES

    parser = subparsers.add_parser(
        "proxy",
        help="serve the Anthropic and OpenAI APIs in front of an upstream with a blueprint",
        description=(
            "Serve POST /v1/messages, /v1/chat/completions and /v1/responses in front of one "
            "upstream: each session's window is laid out by the blueprint; the client's key "
            "headers are passed upstream as received and never stored. Status page at /, "
            "Prometheus metrics at /metrics. Guide: docs/proxy.md."
        ),
    )
    parser.add_argument("--blueprint", required=True, help="the blueprint YAML file")
    parser.add_argument(
        "--upstream",
        required=True,
        help="the upstream's base URL without the API path, e.g. https://api.anthropic.com or "
        "http://127.0.0.1:8080 (the proxy appends the path the client used)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8787, help="port to listen on (8787)")
    parser.add_argument(
        "--store",
        default=DEFAULT_STORE,
        help=f"sqlite:PATH or redis://HOST:PORT/DB (default {DEFAULT_STORE})",
    )
    parser.add_argument(
        "--lease-seconds",
        type=float,
        default=30.0,
        help="lifetime of a session's lease, renewed while a request runs; a killed worker's "
        "lease lapses after it (30)",
    )
    parser.add_argument(
        "--lease-wait",
        type=float,
        default=600.0,
        help="seconds a request waits for its busy session before it is answered 503 (600)",
    )
    parser.add_argument(
        "--max-rounds",
        type=int,
        default=3,
        help="calls to regio's own tools (context_restore) answered per request (3)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=40,
        help="threads doing engine work at once (40); several workers use several cores",
    )
    parser.add_argument(
        "--store-writer",
        choices=("process", "thread"),
        default="thread",
        help="where a SQLite store's writes run: thread (in the request's thread: the default) "
        "or process (one child process per file, off the threads' interpreter lock)",
    )
    parser.add_argument(
        "--compact-before-send",
        action="store_true",
        help="run a request's compactions before it is sent, never while the upstream answers (by "
        "default they do when the window fits without them)",
    )
    _summary_options(parser, SUMMARIZER_MODES)
    parser.add_argument(
        "--request-log",
        default=None,
        help="append one JSON line per request to this file (session, worker, lease times, "
        "figures; never a header or content)",
    )
    parser.set_defaults(handler=_run)


def _summary_options(parser: argparse.ArgumentParser, modes: tuple[str, ...]) -> None:
    """``--summarizer`` and ``--summary-timeout`` (:mod:`regio.proxy.summaries`)."""
    parser.add_argument(
        "--summarizer",
        choices=modes,
        default="offline",
        help="who writes the compaction summaries: offline (default: the extractive "
        "summarizer, no model call) or upstream (the upstream model, the blueprint's "
        "summarizer.model or else the client's: each summary is one more upstream request, "
        "on the client's API with the client's own key, billed to it; a failed one is written "
        "offline)",
    )
    parser.add_argument(
        "--summary-timeout",
        type=float,
        default=120.0,
        help="seconds the upstream summary calls of one request may take together; past them "
        "the offline summarizer writes the request's remaining summaries (120)",
    )


def _run(args: argparse.Namespace) -> int:
    from regio.console import stderr_console
    from regio.errors import RegioError

    logging.basicConfig(level=logging.WARNING, format="regio proxy: %(message)s")
    try:
        from .app import serve
        from .config import ProxyConfig

        config = ProxyConfig(
            args.blueprint,
            args.upstream,
            host=args.host,
            port=args.port,
            store=args.store,
            lease_seconds=args.lease_seconds,
            lease_wait=args.lease_wait,
            max_rounds=args.max_rounds,
            request_log=args.request_log,
            threads=args.threads,
            store_writer=args.store_writer,
            compact_after_send=not args.compact_before_send,
            summarizer=args.summarizer,
            summary_timeout=args.summary_timeout,
        )
        print(
            f"regio proxy: http://{args.host}:{args.port} -> {args.upstream} (store {args.store})",
            file=sys.stderr,
            flush=True,
        )
        serve(config)
    except ImportError as exc:
        stderr_console().print(
            f"regio proxy needs its server packages ({exc.name}): pip install 'regio[proxy]'"
        )
        return 1
    except RegioError as exc:
        stderr_console().print(f"regio proxy: {exc}")
        return 2
    return 0
