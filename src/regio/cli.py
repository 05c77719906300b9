"""The ``regio`` command.

Each subsystem registers its own subcommands through a ``register(subparsers)`` function in its
``cli`` module, so this file stays a dispatcher. Exit status: 0 on success, 2 on invalid input
(a bad blueprint, a malformed trace), 1 on other errors.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["build_parser", "main"]


#: reStructuredText roles and literals in docstrings reused as help texts.
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain_text(text: str) -> str:
    """``text`` without reStructuredText markup (roles and double-backquoted literals)."""
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text))


class _PlainHelp:
    """Formatter mixin: help and descriptions are shown without reStructuredText markup."""

    def _format_text(self, text: str) -> str:
        return super()._format_text(plain_text(text))  # type: ignore[misc]

    def _expand_help(self, action: argparse.Action) -> str:
        return plain_text(super()._expand_help(action))  # type: ignore[misc]


def _plain_help(parser: argparse.ArgumentParser) -> None:
    """Give ``parser`` and its subcommands' parsers (at any depth) plain help texts."""
    base: Any = parser.formatter_class
    if not issubclass(base, _PlainHelp):
        plain: Any = type(f"Plain{base.__name__}", (_PlainHelp, base), {})
        parser.formatter_class = plain
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _plain_help(sub)


def _command_modules() -> tuple[Any, ...]:
    """The modules that add subcommands, in the order their commands are listed in
    ``regio --help`` (imported when the parser is built, so ``import regio.cli`` stays cheap;
    imported by name, so the import-graph test sees the command line depend on each)."""
    from regio.agent import cli as agent_cli  # run
    from regio.bench import cli as bench_cli  # demo, bench
    from regio.blueprint import cli as blueprint_cli  # validate, schema
    from regio.engine import _inspect as runtime_cli  # inspect
    from regio.engine import _repair_cli as repair_cli  # repair
    from regio.proxy import cli as proxy_cli  # proxy
    from regio.tokens import cli as tokens_cli  # count
    from regio.traces import cli as traces_cli  # traces import / show

    return (
        bench_cli,
        tokens_cli,
        blueprint_cli,
        traces_cli,
        runtime_cli,
        repair_cli,
        agent_cli,
        proxy_cli,
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    from regio._version import __version__

    parser = argparse.ArgumentParser(
        prog="regio",
        description="Typed context-window regions and a cache-aware prompt layout for LLM agents.",
    )
    parser.add_argument("--version", action="version", version=f"regio {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules():
        module.register(subparsers)
    parser.set_defaults(_subparsers=subparsers)
    _plain_help(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # name the subcommand's own usage, not the top-level one
        chosen = args._subparsers.choices.get(args.command) if args.command else None
        (chosen or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        status: int = handler(args)
    except BrokenPipeError:  # e.g. `regio traces import ... | head`: the reader went away
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
