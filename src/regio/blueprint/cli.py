"""``regio validate FILE`` and ``regio schema``.

``validate`` prints a one-screen summary of a valid blueprint (regions, resolved budgets,
policies, layout order, warnings) and exits 0, or prints every error as one line
``FILE:LINE: path: message`` on stderr and exits 2 (never a traceback: every refusal of the
loader is a :class:`BlueprintError`). ``schema`` prints the blueprint JSON Schema (the file
shipped as ``regio/data/blueprint.schema.json``); ``--path`` prints where that file is.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from regio.blueprint.errors import BlueprintError
from regio.blueprint.loader import load_blueprint
from regio.blueprint.schema import SCHEMA_FILE, blueprint_json_schema
from regio.blueprint.summary import render_summary
from regio.console import stdout_console

__all__ = ["register", "run_schema", "run_validate"]


def run_validate(args: argparse.Namespace) -> int:
    """Handler of ``regio validate``: 0 when valid, 2 when not."""
    try:
        blueprint = load_blueprint(Path(args.file))
    except BlueprintError as exc:
        print(str(exc), file=sys.stderr)
        count = len(exc.issues)
        if count > 1:
            print(f"{exc.file}: invalid blueprint ({count} errors)", file=sys.stderr)
        return 2
    render_summary(blueprint, stdout_console(highlight=False))
    return 0


def run_schema(args: argparse.Namespace) -> int:
    """Handler of ``regio schema``: prints the JSON Schema (or, with ``--path``, the path of
    the shipped schema file); always 0."""
    if args.path:
        print(SCHEMA_FILE)
        return 0
    sys.stdout.write(json.dumps(blueprint_json_schema(), indent=args.indent) + "\n")
    return 0


def _indent(text: str) -> int:
    """``--indent``: an integer 0-16 (a larger one would only bloat the output)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; give 0 to 16") from None
    if not 0 <= value <= 16:
        raise argparse.ArgumentTypeError(f"{value} is out of range; give 0 to 16")
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``validate`` and ``schema`` to the ``regio`` command (see :mod:`regio.cli`)."""
    validate = subparsers.add_parser(
        "validate",
        help="check a blueprint and summarize its regions and layout",
        description="Load a blueprint YAML file, print its regions, resolved budgets, "
        "policies and layout order, or its errors with YAML path and line. Exit 0 or 2.",
    )
    validate.add_argument("file", help="blueprint YAML file")
    validate.set_defaults(handler=run_validate)
    schema = subparsers.add_parser(
        "schema",
        help="print the blueprint JSON Schema (for editors)",
        description="Print the JSON Schema (draft 2020-12) of blueprint files.",
    )
    schema.add_argument("--indent", type=_indent, default=2, help="JSON indent, 0-16 (default 2)")
    schema.add_argument(
        "--path", action="store_true", help="print the path of the shipped schema file instead"
    )
    schema.set_defaults(handler=run_schema)
