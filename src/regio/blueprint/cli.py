"""``regio validate FILE`` and ``regio schema``.

``validate`` prints a one-screen summary of a valid blueprint (regions, resolved budgets,
policies, layout order, warnings) and exits 0, or prints every error as
``FILE:LINE: path: message`` on stderr and exits 2. ``schema`` prints the blueprint JSON Schema.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from regio.blueprint.errors import BlueprintError
from regio.blueprint.loader import load_blueprint
from regio.blueprint.schema import blueprint_json_schema
from regio.blueprint.summary import render_summary

__all__ = ["register", "run_schema", "run_validate"]


def run_validate(args: argparse.Namespace) -> int:
    """Handler of ``regio validate``: 0 when valid, 2 when not."""
    try:
        blueprint = load_blueprint(Path(args.file))
    except BlueprintError as exc:
        print(str(exc), file=sys.stderr)
        count = len(exc.issues)
        print(f"{exc.file}: invalid blueprint ({count} error{'s' * (count != 1)})", file=sys.stderr)
        return 2
    console = Console(highlight=False)
    if not console.is_terminal:  # files and pipes: wide enough for the table on one screen
        console = Console(highlight=False, width=120)
    render_summary(blueprint, console)
    return 0


def run_schema(args: argparse.Namespace) -> int:
    """Handler of ``regio schema``: prints the JSON Schema; always 0."""
    sys.stdout.write(json.dumps(blueprint_json_schema(), indent=args.indent) + "\n")
    return 0


def register(subparsers: Any) -> None:
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
    schema.add_argument("--indent", type=int, default=2, help="JSON indent (default 2)")
    schema.set_defaults(handler=run_schema)
