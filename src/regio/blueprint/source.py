"""Reading blueprint YAML with the line of every key and item.

PyYAML's safe loader builds plain Python data (dicts, lists, strings, numbers, booleans, null)
and never arbitrary objects. regio composes the node tree first (``yaml.compose``-style, through
a :class:`yaml.SafeLoader` subclass), records the start line of every node under its *path*
(``("regions", 3, "budget")``), then constructs the data from the same tree. Errors can then say
``regions[3].budget`` and ``line 41``.

Duplicate mapping keys, which PyYAML silently accepts (the last one wins), are reported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import yaml

__all__ = ["Located", "Path", "SourceIssue", "format_path", "parse_yaml"]

#: A position in the blueprint data: mapping keys (``str``) and list indexes (``int``).
Path = tuple["str | int", ...]


def format_path(path: Sequence[str | int]) -> str:
    """``("regions", 3, "budget")`` -> ``"regions[3].budget"``; the root is ``"<root>"``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


@attrs.frozen
class SourceIssue:
    """A problem found while reading the YAML text itself: 1-based ``line`` (or ``None``)."""

    path: Path
    line: int | None
    message: str


@attrs.frozen
class Located:
    """Parsed blueprint data with the 1-based start line of every path.

    ``lines[path]`` is the line of the *key* for a mapping member (where ``budget:`` is written)
    and the line of the item for a list member. ``issues`` are duplicate keys found while
    reading.
    """

    data: Any
    lines: dict[Path, int]
    issues: tuple[SourceIssue, ...] = ()

    def line(self, path: Sequence[str | int]) -> int | None:
        """The line of ``path`` or of its nearest recorded ancestor (``None``: nothing known)."""
        key = tuple(path)
        while True:
            if key in self.lines:
                return self.lines[key]
            if not key:
                return None
            key = key[:-1]


class _SafeLineLoader(yaml.SafeLoader):
    """The PyYAML safe loader; only used to compose and construct plain data.

    A value the safe constructors cannot build (``2001-13-40`` read as a timestamp, ``!!int ""``,
    an integer past Python's digit limit) raises a builtin error inside PyYAML (``ValueError``,
    ``IndexError``, ``AttributeError``, ...); it is re-raised as a
    :class:`yaml.constructor.ConstructorError` marked with the node's line.
    """

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ArithmeticError, AttributeError, LookupError, ValueError, TypeError) as exc:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"cannot read the value {_brief(node)} ({exc}); quote it to make it a string",
                node.start_mark,
            ) from exc


def _brief(node: yaml.Node) -> str:
    if isinstance(node, yaml.ScalarNode):
        text = repr(node.value)
        return text if len(text) <= 40 else text[:37] + "..."
    return "here"


def _walk(node: yaml.Node, path: Path, lines: dict[Path, int], issues: list[SourceIssue]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            key_line = key_node.start_mark.line + 1
            if key in seen:
                issues.append(
                    SourceIssue(
                        (*path, key),
                        key_line,
                        f"duplicate key {key!r} (first written on line {seen[key]}); "
                        "keep one, YAML would silently use the last",
                    )
                )
                continue
            seen[key] = key_line
            lines[(*path, key)] = key_line
            _walk(value_node, (*path, key), lines, issues)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*path, index)] = item.start_mark.line + 1
            _walk(item, (*path, index), lines, issues)


def parse_yaml(text: str) -> Located:
    """Parse one YAML document with the safe loader, recording lines.

    Raises :class:`yaml.YAMLError` (with ``problem_mark``) on a syntax error. An empty document
    gives ``data=None`` (line 1).
    """
    loader = _SafeLineLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Located(None, {(): 1})
        lines: dict[Path, int] = {}
        issues: list[SourceIssue] = []
        _walk(node, (), lines, issues)
        data = loader.construct_document(node)
    finally:
        loader.dispose()
    return Located(data, lines, tuple(issues))
