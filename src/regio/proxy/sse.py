"""Server-sent events, cut at event boundaries without changing a byte.

The upstream's stream is relayed event by event: :class:`EventSplitter` takes the bytes as they
arrive, in chunks of any size, and returns each complete event as the exact bytes the upstream
sent (its lines and the blank line that ends it), with its ``event`` name and ``data`` text
parsed beside. The concatenation of the events is the stream itself, so a relay that forwards
every event forwards the upstream's bytes unchanged.

The format is the WHATWG one (https://html.spec.whatwg.org/multipage/server-sent-events.html,
"Parsing an event stream"): lines end with CRLF, LF or CR; an empty line ends an event; a line
``field: value`` sets a field (one space after the colon is dropped); several ``data`` lines are
joined with LF; a line starting with a colon is a comment. Bytes after the last blank line are
held until more arrive; :meth:`EventSplitter.close` returns them as a last (unterminated) event,
so not one byte of the stream is lost.
"""

from __future__ import annotations

import re

import attrs

__all__ = ["EventSplitter", "SSEEvent", "encode_event"]

#: The end of an event: a blank line, under any of the three line endings.
_BOUNDARY = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)")
_LINE = re.compile(r"\r\n|\r|\n")


@attrs.frozen
class SSEEvent:
    """One event: ``raw`` (its bytes as sent, terminator included), ``event`` (its name,
    ``"message"`` when none is given) and ``data`` (the joined data lines, ``""`` when none)."""

    raw: bytes
    event: str = "message"
    data: str = ""


def _parse(raw: bytes) -> SSEEvent:
    name, data = "message", []
    for line in _LINE.split(raw.decode("utf-8", errors="replace")):
        if not line or line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value or "message"
        elif field == "data":
            data.append(value)
    return SSEEvent(raw, name, "\n".join(data))


@attrs.define
class EventSplitter:
    """Cuts a byte stream into :class:`SSEEvent` s (module doc)."""

    _held: bytearray = attrs.field(factory=bytearray)

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events completed by ``chunk``, in order."""
        self._held += chunk
        events: list[SSEEvent] = []
        start = 0
        # a CR at the very end may be the first half of a CRLF: wait for the next byte
        search_end = len(self._held) - (1 if self._held.endswith(b"\r") else 0)
        while True:
            found = _BOUNDARY.search(self._held, start, search_end)
            if found is None:
                break
            events.append(_parse(bytes(self._held[start : found.end()])))
            start = found.end()
        del self._held[:start]
        return events

    def close(self) -> list[SSEEvent]:
        """What is left after the stream ended: one unterminated event, or nothing."""
        if not self._held:
            return []
        event = _parse(bytes(self._held))
        self._held.clear()
        return [event]


def encode_event(data: str, event: str | None = None) -> bytes:
    """The bytes of an event with ``data`` (one ``data:`` line per line) and ``event``, ended
    by a blank line, LF line endings: what the proxy sends when it writes an event itself."""
    lines = [f"event: {event}"] if event else []
    lines.extend(f"data: {line}" for line in data.split("\n"))
    return ("\n".join(lines) + "\n\n").encode()
