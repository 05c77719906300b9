"""Open items of an extractive summary: to-dos, and the later sentences that complete them.

A to-do (:data:`TODO`: ``TODO``, ``- [ ]``, ``Next:``, still need to, remember to, ...) stays
an open item until a later sentence of the user or the agent completes it. A completion
(:func:`completion`) is one of

* ``done: X`` / ``completed - X`` (a label, then the item),
* ``- [x] X`` (a checked box),
* ``[I|we] [have|just|now] finished|completed|fixed|resolved|closed|implemented|... X``, or
  the item's own verb in the past tense (``updated the README`` for ``TODO: update the
  README``),
* ``X is|are|was|has been [now|all|...] done|complete|finished|fixed|resolved|closed|...``,

never a question, a conditional (``once X is done ...``), a negation (``X is not done``), a
plan or a requirement (``make sure X is done``) or a partial or contrasted report (``X is
done except ...``, ``X is done, but ...``). It closes an open item

* by identifier: the item's first identifier (``TODO-12``, ``TCK-5521``, ``#42``,
  ``NQNU5R``) is the object of the completion (``closed TODO-12``, ``reservation NQNU5R has
  been canceled``; not ``closed TCK-5522 as a duplicate of TCK-5521``), and a past tense
  other than a completion verb is the item's own (``reopened TCK-5521`` closes nothing), or
* by text: every content word of the completed X (stemmed, stop words and to-do markers
  left out) is a word of the item, and with the completion's verb (``we fixed the flaky retry
  test`` for ``TODO: fix the flaky retry test``) they are at least two of the item's words
  (one for a one-word item) and at least half of them. When several items match, only the
  best-covered one is closed, and none when two are covered equally (``Fixed the bug`` with
  two bugs open). An indefinite object (``added a test``) closes only an item it names in
  full (not ``add a test for the parser``).

Either way, an item of several tasks (joined by and, then, ``,`` or ``;``: ``update the README
and the CHANGELOG``) closes only when the completion names every word of every task.

So an unrelated ``done`` (``Fixed the CSV export bug``, ``Done.``) closes nothing, and a
completion closes only the items it names. :class:`OpenItems` indexes the items by word and
identifier, so a completion costs the postings of its own words, not a scan of every item.
"""

from __future__ import annotations

import re
from collections import Counter

import attrs

__all__ = ["TODO", "CompletedItem", "OpenItems", "completion"]

TODO = re.compile(
    r"(?:\bTODO\b|\bFIXME\b|-\s*\[\s\]|\bnext\s+steps?\b|\bstill\s+(?:need|have)\s+to\b|"
    r"\bremaining\s+(?:work|tasks?|items?|steps?|issues?|to-?dos?)\b|\bopen\s+items?\b|"
    r"\bpending\b|\bnot\s+(?:yet\s+)?done\b|\bto-dos?\b|\bto\s+do\s*:|\bremember\s+to\b|"
    r"\bdon(?:'|\u2019)?t\s+forget\b|\baction\s+items?\b|^\W*next\s*:|"
    r"\bfollow[-\s]up\s+(?:on|with)\b|\bfollow[-\s]ups?\s*:)",
    re.IGNORECASE,
)

_DONE = (
    r"(?:done|finished|completed|fixed|resolved|closed|implemented|merged|addressed|shipped|"
    r"handled|wrapped\s+up|took\s+care\s+of|taken\s+care\s+of)"
)
_LABEL = r"(?:(?:update|note|fyi|status)\s*[:,-]\s*)?"
_FORMS = (
    re.compile(r"^\W{0,3}[-*+]\s*\[[xX\u2713\u2714]\]\s*(?P<obj>\S.*)$"),
    re.compile(rf"^\W{{0,3}}(?P<verb>{_DONE}|complete)\s*[:\u2013\u2014-]\s*(?P<obj>\S.*)$", re.I),
    re.compile(
        rf"^{_LABEL}(?:(?:i|we|i(?:'|\u2019)?ve|we(?:'|\u2019)?ve|i\s+have|we\s+have)\s+)?"
        rf"(?:(?:now|just|finally|already|also|successfully)\s+)*(?P<verb>{_DONE})\s+"
        rf"(?P<obj>\S.*)$",
        re.I,
    ),
    re.compile(
        rf"^{_LABEL}(?P<obj>\S.*?)\s+(?:is|are|was|were|has\s+been|have\s+been|got)\s+"
        rf"(?:(?:now|all|finally|already|also|successfully|fully)\s+)*"
        rf"(?P<verb>{_DONE}|complete)\b(?P<tail>.*)$",
        re.I,
    ),
    # the item's own verb as a passive participle ("reservation NQNU5R has been canceled")
    re.compile(
        rf"^{_LABEL}(?P<obj>\S.*?)\s+(?:is|are|was|were|has\s+been|have\s+been|got)\s+"
        rf"(?:(?:now|all|finally|already|also|successfully|fully)\s+)*"
        rf"(?P<own>[a-z]{{2,}}ed)\b(?P<tail>.*)$",
        re.I,
    ),
    # the item's own verb in the past tense ("updated the README"): only with that verb
    re.compile(
        rf"^{_LABEL}(?:(?:i|we|i(?:'|\u2019)?ve|we(?:'|\u2019)?ve|i\s+have|we\s+have)\s+)?"
        rf"(?:(?:now|just|finally|already|also|successfully)\s+)*(?P<own>[a-z]{{2,}}ed)\s+"
        rf"(?P<obj>\S.*)$",
        re.I,
    ),
)
#: Past tenses that report a run (test and tool output pasted into a message), never the
#: item's own verb.
_REPORT_VERBS = frozenset(
    {"failed", "passed", "skipped", "collected", "expected", "errored", "crashed", "xfailed",
     "xpassed", "deselected", "warned", "raised", "returned", "printed", "logged", "exited"}
)  # fmt: skip
#: A completion opening with one of these is a condition or a plan, not a report.
_CONDITIONAL = re.compile(
    r"^(?:once|when|whenever|if|after|before|until|unless|as\s+soon\s+as|whether)\b", re.I
)
#: A completion holding one of these is partial, negated or still a plan.
_PARTIAL = re.compile(
    r"\b(?:except|but|though|although|however|apart\s+from|other\s+than|partially|partly|half|mostly|almost|"
    r"nearly|not|yet|make\s+sure|ensure|must|should|need|needs|have\s+to|has\s+to|will|"
    r"going\s+to|want|wants|would|could|can|may|might)\b|n(?:'|\u2019)t\b",
    re.I,
)
#: An item's identifier: ``#42``, a ticket id (upper-case letters, a separator, digits:
#: ``TODO-1``, ``TCK-5521``) or a long token of upper-case letters and digits
#: (``NQNU5R``, ``HAT001``) -- never a version or an encoding (``utf-8``, ``sha-256``,
#: ``gpt-4``, ``Python-3``).
_ITEM_ID = re.compile(
    r"#\d+\b|\b[A-Z][A-Z0-9]*[-_]\d+\b|\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6,}\b"
)
#: Prefixes of encodings, hashes and standards, which look like ids but name no item.
_NOT_IDS = frozenset({"utf", "ucs", "sha", "md", "crc", "aes", "rsa", "hmac", "iso", "rfc", "gpt",
                      "base", "x", "ipv", "http", "tls", "ssl", "py", "python"})  # fmt: skip
#: Where the object of a completion verb ends: ids after it are mentions, not the completed
#: item (``Closed TCK-5522 as a duplicate of TCK-5521``).
_OBJECT_END = re.compile(
    r"[,;:(]|\s(?:as|of|to|for|in|into|with|which|that|who|because|since|after|before|from|by|"
    r"like|than|while|when|and\s+(?:then|also|now|it|i|we))\b",
    re.I,
)
_ID_PREFIX = re.compile(r"[a-z]+")
_MORE_IDS = re.compile(rf"(?:\s*(?:,|;|&|\band\b)\s*(?:and\s+)?(?:{_ITEM_ID.pattern}))+")
_VAGUE = re.compile(r"(?:a|an|some|one|another|any)\s", re.I)
#: Where the tasks of a to-do with several parts meet (``update the README and the
#: CHANGELOG``, ``migrate the users table, then the orders table``).
_PARTS = re.compile(r"[,;]|\b(?:and|then)\b", re.I)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    {"a", "an", "the", "to", "of", "for", "in", "on", "at", "and", "or", "with", "by", "from",
     "it", "its", "this", "that", "these", "those", "is", "are", "be", "was", "were", "we",
     "i", "you", "our", "my", "your", "all", "now", "also", "still", "just", "then", "so",
     "need", "needs", "have", "has", "todo", "fixme", "next", "step", "steps", "remember",
     "remaining", "action", "item", "items", "follow", "up", "don", "t", "forget", "pending",
     "done", "finally", "already", "successfully", "fully", "x", "please", "should", "will",
     "task", "tasks", "open", "yet", "not", "do", "s"}
)  # fmt: skip
_SUFFIXES = ("ings", "ing", "ions", "ion", "ed", "es", "s", "e")


def _stem(word: str) -> str:
    """``word`` without its inflection; a doubled final consonant is undoubled so that
    ``cancelled``, ``canceled`` and ``cancel`` (``stopped``, ``stop``) share a stem."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]
    return word


def _words(text: str) -> frozenset[str]:
    """Content words of ``text``: lower-cased, stop words and to-do markers dropped, stemmed."""
    return frozenset(_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP)


def _ids(text: str) -> list[str]:
    out = []
    for match in _ITEM_ID.finditer(text):
        ident = match.group(0).lower()
        prefix = _ID_PREFIX.match(ident.lstrip("#"))
        if prefix is None or prefix.group(0) not in _NOT_IDS:
            out.append(ident)
    return out


@attrs.frozen
class CompletedItem:
    """A completed item: the content ``words`` of what was completed, the ``verb``'s stem
    (``"fix"``, or ``""`` for ``done: X`` and ``- [x] X``) and the identifiers it names;
    ``own_verb``: the verb is any past tense (``updated X``), which completes only an item
    with that verb."""

    words: frozenset[str]
    verb: str
    ids: frozenset[str]
    own_verb: bool = False
    #: The object is indefinite (``added a test``): it names no particular item, and
    #: completes only an item it names in full.
    vague: bool = False


def completion(sentence: str) -> CompletedItem | None:
    """The completion ``sentence`` reports (module doc), or ``None``."""
    text = sentence.strip()
    if not text or text.endswith("?"):
        return None
    for form in _FORMS:
        match = form.match(text)
        if match is None:
            continue
        obj = match.group("obj").strip()
        groups = match.groupdict()
        tail = groups.get("tail") or ""
        if _CONDITIONAL.match(obj) or _PARTIAL.search(obj) or _PARTIAL.search(tail):
            return None
        own = groups.get("own")
        if own and (
            own.isupper()
            or own.lower() in _REPORT_VERBS
            or own.lower().endswith("eed")
            or obj.lower().startswith("to ")
        ):
            return None  # "FAILED x", "I need ...", "I wanted to ...": not the item's verb
        verbs = (own or groups.get("verb") or "").lower().split()
        verb = verbs[0] if verbs else ""
        stem = "" if verb in ("done", "complete", "completed", "finished") else _stem(verb)
        # the completed thing: a passive's subject, else the verb's object up to its first
        # preposition or clause
        head = obj if "tail" in groups else obj[: _end(obj)]
        return CompletedItem(
            _words(obj),
            stem,
            frozenset(_ids(head)),
            own_verb=own is not None,
            vague=_VAGUE.match(obj) is not None,
        )
    return None


def _end(obj: str) -> int:
    """Where the object of a completion verb ends in ``obj``; a list of identifiers
    (``TODO-12, TODO-13 and #42``) is one object."""
    match = _OBJECT_END.search(obj)
    end = len(obj) if match is None else match.start()
    more = _MORE_IDS.match(obj, end)
    return end if more is None else more.end()


@attrs.define
class _Item:
    words: frozenset[str]
    ident: str | None
    #: The content words of each task of an item with several (empty for one task).
    parts: tuple[frozenset[str], ...] = ()

    def covered_by(self, done: CompletedItem) -> bool:
        """Whether ``done`` names every task of the item: all the words of each part."""
        named = done.words | {done.verb}
        return all(part <= named for part in self.parts)


def _parts(line: str) -> tuple[frozenset[str], ...]:
    parts = tuple(words for piece in _PARTS.split(line) if (words := _words(piece)))
    return parts if len(parts) > 1 else ()


@attrs.define
class OpenItems:
    """The open items of one summary, indexed by content word and by identifier."""

    _items: dict[str, _Item] = attrs.field(factory=dict)
    _by_word: dict[str, set[str]] = attrs.field(factory=dict)
    _by_id: dict[str, set[str]] = attrs.field(factory=dict)

    def add(self, line: str) -> None:
        """Index ``line`` as an open item."""
        ids = _ids(line)
        item = _Item(_words(line), ids[0] if ids else None, _parts(line))
        self._items[line] = item
        for word in item.words:
            self._by_word.setdefault(word, set()).add(line)
        if item.ident is not None:
            self._by_id.setdefault(item.ident, set()).add(line)

    def discard(self, line: str) -> None:
        """Forget ``line`` (no error when it is not indexed)."""
        item = self._items.pop(line, None)
        if item is None:
            return
        for word in item.words:
            self._by_word[word].discard(line)
        if item.ident is not None:
            self._by_id[item.ident].discard(line)

    def closed_by(self, done: CompletedItem) -> list[str]:
        """The open items ``done`` completes (module doc): those its identifiers name, and
        the one item its words match best (none when two match equally well)."""
        closed: set[str] = set()
        for ident in done.ids:  # "reopened TCK-5521" completes no "fix TCK-5521"
            closed.update(
                line
                for line in self._by_id.get(ident, ())
                if (not done.own_verb or done.verb in self._items[line].words)
                and self._items[line].covered_by(done)
            )
        if done.words:
            overlap: Counter[str] = Counter()
            for word in done.words:
                overlap.update(self._by_word.get(word, ()))
            scored = [
                (score, line)
                for line, shared in overlap.items()
                if shared == len(done.words)
                and self._items[line].covered_by(done)
                and (score := self._cover(self._items[line], done))
            ]
            scored.sort(reverse=True)
            if len(scored) == 1 or (len(scored) > 1 and scored[0][0] > scored[1][0]):
                closed.add(scored[0][1])
        return list(closed)

    @staticmethod
    def _cover(item: _Item, done: CompletedItem) -> float:
        """The share of the item's words the completion names (its verb included), or 0 when
        that is under half or under two words (one for a one-word item)."""
        if done.own_verb and done.verb not in item.words:
            return 0.0
        shared = len(done.words) + (1 if done.verb and done.verb in item.words else 0)
        if done.vague and shared < len(item.words):
            return 0.0
        if shared < min(2, len(item.words)) or 2 * shared < len(item.words):
            return 0.0
        return shared / len(item.words)
