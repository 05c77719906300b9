"""Limits on what a blueprint file can make the loader do, and bounded file reading.

A blueprint is untrusted input (a user's or a downloaded YAML file). Before PyYAML composes a
node tree, :func:`scan_events` walks the parser's event stream once (PyYAML's scanner and
parser are iterative, so this pass cannot overflow the Python stack) and refuses a document
that is nested too deep, that expands through aliases to too many nodes (the "billion laughs"
alias bomb: 399 bytes and 7 levels of ``&a [*b, *b, ...]`` expand to 10^7 nodes), whose
aliases refer to themselves, or that writes an integer with too many digits. Files (the
blueprint, its seed files) are read by :func:`read_text_file`: regular files only, at most a
byte cap, opened without blocking so a FIFO cannot hang the loader.

Every limit is a field of :class:`LoaderLimits` with its default; ``docs/security.md`` lists
them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path as FsPath
from typing import Any

import attrs
import yaml

__all__ = ["MAX_DEPTH_CEILING", "LimitProblem", "LoaderLimits", "read_text_file", "scan_events"]

_INT_TAG = "tag:yaml.org,2002:int"
#: Highest ``max_depth`` allowed: PyYAML composes recursively (about 3 Python frames a level),
#: so deeper documents would reach Python's recursion limit (1,000 frames).
MAX_DEPTH_CEILING = 100
_positive = [attrs.validators.instance_of(int), attrs.validators.ge(1)]


def _paths(value: Sequence[str | os.PathLike[str]]) -> tuple[FsPath, ...]:
    if isinstance(value, (str, os.PathLike)):
        value = (value,)
    return tuple(FsPath(item) for item in value)


@attrs.frozen(kw_only=True)
class LoaderLimits:
    """Bounds applied by :func:`regio.blueprint.load_blueprint` (pass ``limits=``).

    * ``max_bytes`` — largest blueprint file or text, in bytes (UTF-8). Default 4 MiB.
    * ``max_depth`` — deepest nesting of mappings and lists. Default 32 (a blueprint needs 6);
      at most 100 (:data:`MAX_DEPTH_CEILING`).
    * ``max_nodes`` — YAML nodes after alias expansion (every scalar, mapping and list counts
      once per place it is used). Default 20,000.
    * ``max_int_digits`` — longest integer literal, in characters. Default 30 (token counts
      need 10; Python refuses to convert more than 4,300 digits).
    * ``max_seed_bytes`` — largest seed file, in bytes. Default 1 MiB.
    * ``seed_roots`` — folders seed files may be read from besides the blueprint's own folder
      (``base_dir``). Default: none.

    Raises ``TypeError``/``ValueError`` (attrs validators) for a limit that is not a positive
    integer.
    """

    max_bytes: int = attrs.field(default=4 * 1024 * 1024, validator=_positive)
    max_depth: int = attrs.field(
        default=32, validator=[*_positive, attrs.validators.le(MAX_DEPTH_CEILING)]
    )
    max_nodes: int = attrs.field(default=20_000, validator=_positive)
    max_int_digits: int = attrs.field(default=30, validator=_positive)
    max_seed_bytes: int = attrs.field(default=1024 * 1024, validator=_positive)
    seed_roots: tuple[FsPath, ...] = attrs.field(default=(), converter=_paths)


class LimitProblem(Exception):
    """A limit refused the input: ``line`` (1-based or ``None``) and ``message`` (what was
    found, the limit, and the fix). Turned into a :class:`BlueprintError` by the loader."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _line(event: yaml.Event) -> int | None:
    mark = event.start_mark
    return int(mark.line) + 1 if mark is not None else None


#: libyaml's parser when PyYAML was built with it: the same events, and its scanner stays linear
#: on thousands of open ``[`` where the pure-Python one looks ahead quadratically (0.3 s for a
#: 4 KiB line of them).
_EventLoader: Any = (
    yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader
)


def scan_events(text: str, limits: LoaderLimits) -> None:
    """Walk the YAML events of ``text`` once and raise :class:`LimitProblem` at the first
    limit passed (depth, expanded node count, self-referring alias, integer length).

    Syntax errors are left to the composer (this pass stops quietly at the first one). libyaml
    is used when present; when it refuses the text, the pure-Python parser diagnoses it, except
    for libyaml's own nesting limit (1,000 levels), which is past every ``max_depth``.
    """
    if _EventLoader is not yaml.SafeLoader:
        try:
            _scan(_EventLoader(text), limits)
            return
        except yaml.MarkedYAMLError as exc:
            if "maximum nesting depth" in str(exc.problem):
                mark = exc.problem_mark
                raise LimitProblem(
                    int(mark.line) + 1 if mark is not None else None, _depth_message(limits)
                ) from None
        except yaml.YAMLError:
            pass
    try:
        _scan(yaml.SafeLoader(text), limits)
    except yaml.YAMLError:
        return  # reported with its line by the composer


def _depth_message(limits: LoaderLimits) -> str:
    return (
        f"nesting deeper than {limits.max_depth} levels of mappings and lists "
        "(LoaderLimits.max_depth); a blueprint needs about 6, flatten the data"
    )


def _scan(loader: yaml.SafeLoader, limits: LoaderLimits) -> None:
    """The event walk of :func:`scan_events` (raises ``LimitProblem`` or ``yaml.YAMLError``)."""
    open_starts: list[tuple[int, str | None]] = []  # (expanded count at start, anchor)
    sizes: dict[str, int] = {}  # expanded node count of each finished anchored node
    unfinished: set[str] = set()
    expanded = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                expanded += 1
                if len(open_starts) >= limits.max_depth:
                    raise LimitProblem(_line(event), _depth_message(limits))
                open_starts.append((expanded - 1, event.anchor))
                if event.anchor:
                    unfinished.add(event.anchor)
            elif isinstance(event, yaml.CollectionEndEvent):
                start, anchor = open_starts.pop()
                if anchor:
                    sizes[anchor] = expanded - start
                    unfinished.discard(anchor)
            elif isinstance(event, yaml.ScalarEvent):
                expanded += 1
                _check_int(loader, event, limits)
                if event.anchor:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                if event.anchor in unfinished:
                    raise LimitProblem(
                        _line(event),
                        f"alias *{event.anchor} is used inside its own anchor &{event.anchor}, "
                        "which makes an infinite structure; write the value out",
                    )
                expanded += sizes.get(event.anchor or "", 1)
            if expanded > limits.max_nodes:
                raise LimitProblem(
                    _line(event),
                    f"the document expands to more than {limits.max_nodes} YAML nodes "
                    "(LoaderLimits.max_nodes; aliases count once per use); write repeated "
                    "values out instead of nesting aliases",
                )
    finally:
        loader.dispose()


def _check_int(loader: yaml.SafeLoader, event: yaml.ScalarEvent, limits: LoaderLimits) -> None:
    if len(event.value) <= limits.max_int_digits:
        return
    tag = event.tag
    if tag is None or tag == "!":
        tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag == _INT_TAG:
        raise LimitProblem(
            _line(event),
            f"an integer of {len(event.value)} characters (LoaderLimits.max_int_digits is "
            f"{limits.max_int_digits}); write a number of tokens such as 8000",
        )


def read_text_file(path: FsPath, max_bytes: int, what: str) -> str:
    """The UTF-8 text of the regular file ``path``, at most ``max_bytes`` bytes.

    Opened non-blocking (a FIFO cannot hang the reader) and checked with ``fstat`` after
    opening: a directory, FIFO, socket or device (``/dev/zero``) is refused. Raises
    :class:`LimitProblem` (``line=None``) naming ``what`` and the fix; ``OSError`` problems
    (missing file, no permission) are reported the same way.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise LimitProblem(None, f"cannot read {what} {str(path)!r}: {exc.strerror}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise LimitProblem(
                None,
                f"{what} {str(path)!r} is not a regular file (a directory, FIFO, socket or "
                "device); name a text file",
            )
        if info.st_size > max_bytes:
            raise LimitProblem(None, _too_big(what, path, info.st_size, max_bytes))
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:  # the file grew while it was read
            raise LimitProblem(None, _too_big(what, path, size, max_bytes))
    except OSError as exc:
        raise LimitProblem(None, f"cannot read {what} {str(path)!r}: {exc.strerror}") from exc
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LimitProblem(
            None, f"{what} {str(path)!r} is not UTF-8 text ({exc.reason}); save it as UTF-8"
        ) from exc


def _too_big(what: str, path: FsPath, size: int, cap: int) -> str:
    field = "max_seed_bytes" if what == "seed file" else "max_bytes"
    return (
        f"{what} {str(path)!r} has more than {cap} bytes ({size}; LoaderLimits.{field}); "
        "shorten it or raise the limit"
    )
