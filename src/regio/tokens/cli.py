"""``regio count``: token counts of a text file or a chat transcript."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .chatfile import TranscriptError, read_transcript
from .registry import COUNTER_NAMES, counter_for_model, get_counter

__all__ = ["JSON_SUFFIXES", "register", "run_count"]

#: File suffixes read as transcripts; every other file is counted as plain text.
JSON_SUFFIXES = (".json", ".jsonl", ".traj")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``count`` to the ``regio`` command's subparsers."""
    parser = subparsers.add_parser(
        "count",
        help="count the tokens of a text file or a chat transcript",
        description=(
            "Count tokens offline. A .json/.jsonl/.traj file is read as a transcript (a list of "
            "messages; an object with a history/messages/trajectory list; a tau-bench list of "
            "runs with traj; JSONL of messages) and printed one line per message (index, role, "
            "tokens incl. the chat format's per-message overhead); any other file is counted "
            "as text. The last line is the total; per-request reply priming is not included."
        ),
    )
    parser.add_argument("file", type=Path, help="text file or transcript")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument(
        "--encoding",
        choices=COUNTER_NAMES,
        default=None,
        help="tokenizer (default o200k_base)",
    )
    choice.add_argument("--model", default=None, help="pick tokenizer and chat format by model")
    parser.add_argument("--text", action="store_true", help="count a JSON file as plain text")
    parser.set_defaults(handler=run_count)


def _fail(message: str) -> int:
    print(f"regio count: {message}", file=sys.stderr)
    return 2


def run_count(args: argparse.Namespace) -> int:
    """Handler of ``regio count``; returns 0, or 2 for a missing or malformed file."""
    path: Path = args.file
    if args.model:
        counter = counter_for_model(args.model)
    else:
        counter = get_counter(args.encoding or "o200k_base")
    if path.is_dir():
        return _fail(f"{path}: is a directory; name a text file or a JSON / JSONL transcript")
    if not path.is_file():
        return _fail(f"{path}: no such file")
    try:
        if args.text or path.suffix.lower() not in JSON_SUFFIXES:
            total = counter.count(path.read_text(encoding="utf-8"))
        else:
            total = 0
            for item in read_transcript(path):
                tokens = counter.count_message(
                    item.message, has_name=item.name is not None
                ) + counter.count(item.name or "")
                total += tokens
                print(f"{item.index:>8}  {item.role:<10} {tokens:>9}")
    except UnicodeDecodeError as exc:
        return _fail(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    except TranscriptError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{path}: cannot read ({exc.strerror or exc})")
    print(f"total {total} tokens ({counter.name})")
    return 0
