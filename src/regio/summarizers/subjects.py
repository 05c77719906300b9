"""The key of a durable item: the subject it is about, so that a later statement of the same
subject supersedes the earlier one.

A key is one of three forms, tried in order:

1. **A stated value** (``value:deploy target``): the words a value statement or a constraint
   that fixes a value sets (:mod:`regio.summarizers.valuestatements`); when they name a
   concept (below), its concept key.
2. **A concept and its scope** (``budget:project``, ``timezone:``): the first word of the
   statement that names a common subject of agent sessions (:data:`CONCEPTS`: a budget,
   a date, a name, a time zone, an on-call duty, a branch, a style, units, a secret code, a
   database, a region, a host, tests, a language, a version, a port, a commit, a phase, the
   next step), with its synonyms (``budget``, ``spend``, ``costs``, ``ceiling`` are one
   concept). The **scope** is what qualifies it: the words right before it (``project`` in
   ``project budget cap``; a hyphenated word counts as its parts: ``field-trip expenses``,
   ``access-code rotation``), an ``of`` / ``for`` phrase after it (``ceiling for trip costs``;
   an identifier there names the entity: ``the owner of repo-7``), and for a verb that names
   (``calling the project X``, ``this effort is designated X``) its object or subject. Values
   are never scope (numbers, identifiers, proper names, amounts), nor are words that qualify
   nothing (``new``, ``current``, ``total``, ``internal``: :data:`GENERIC`). Some concepts
   are **unscoped**: their modifiers are their values (``terse answers``, ``metric units``,
   ``Pacific time``), so every statement of them has one key. A concept word inside a
   quantified phrase (``every reply must cite ...``) names what the rule ranges over, not its
   subject, and is skipped; ``code`` is a secret only when qualified (``access code``, not
   ``code examples``).
3. **The statement itself** (``text:...``; also for a constraint that requires a form, not
   a value: ``the port must be a number`` supersedes nothing), lower-cased, with the values
   that follow a copula or an assignment masked (``is #``, ``to #``): two statements that
   differ only in such a value are the same item at different times, while identifiers that
   name what the statement is about stay (``cite ticket CANARY-C-1`` and ``... CANARY-C-2``
   are two rules).

A quote of tool output (:mod:`regio.summarizers.toolnotes`) is keyed ``quote:`` and the words a
value statement sets (``quote:value:deploy target``), else its own words (two rules of tool
output about one concept, ``Never commit secrets ...`` and ``Always commit with ...``, are two
quotes): it meets only other quotes. The user's item whose key is the quote's subject
(:func:`quote_subject`, the key it would have as the agent's own sentence) replaces it.

Two concept keys of one concept whose scopes are both non-empty and one contains the other
(``trip`` and ``field trip``) are *related*: :func:`related` tells them apart from keys that
are merely alike, so that a later statement can supersede the one earlier statement it
refers to more or less specifically.
"""

from __future__ import annotations

import re

import attrs

from .statements import strip_label
from .toolnotes import QUOTE_KIND, quoted_kind
from .valuestatements import constraint_key, requires_form, value_statement

__all__ = ["CONCEPTS", "GENERIC", "Concept", "item_key", "quote_subject", "related", "scope_of"]


@attrs.frozen
class Concept:
    """A subject of agent sessions: its ``name`` (the key's first part) and whether its
    modifiers qualify it (``scoped``) or are its values."""

    name: str
    scoped: bool = True
    #: Words of the concept that are verbs naming a value (``calling``, ``owns``): their
    #: scope is their object or subject.
    verbal: frozenset[str] = frozenset()


def _concepts() -> dict[str, Concept]:
    table: dict[str, Concept] = {}

    def add(concept: Concept, words: str) -> None:
        for word in words.split(","):
            table[word.strip()] = concept

    add(Concept("budget"), "budget,budgets,cap,caps,spend,spending,spent,cost,costs,expense,"
        "expenses,expenditure,ceiling,allowance")  # fmt: skip
    add(Concept("date", verbal=frozenset({"scheduled", "ship", "ships"})),
        "deadline,deadlines,date,dates,timing,schedule,scheduled,eta,ship,ships")  # fmt: skip
    add(Concept("name", verbal=frozenset({"named", "called", "calling", "designated",
                                          "renamed"})),
        "codename,codenames,name,named,called,calling,label,designated,designation,alias,"
        "nickname,renamed")  # fmt: skip
    add(Concept("timezone", scoped=False), "timezone,timezones,time zone,tz,utc,gmt,"
        "pacific time,eastern time,central time,mountain time,clock,clocks,timestamp,"
        "timestamps")  # fmt: skip
    add(Concept("duty", verbal=frozenset({"owns", "belongs"})),
        "on-call,oncall,pager,duty,duties,shift,escalation,escalations,owner,owns,belongs,"
        "approver,reviewer,maintainer,assignee")  # fmt: skip
    add(Concept("branch", verbal=frozenset({"rebased"})), "branch,branches,rebased")
    add(Concept("style", scoped=False), "style,tone,answers,replies,responses,wording")
    add(Concept("units", scoped=False), "units,measurements,metric,imperial")
    add(Concept("secret"), "password,passwords,passcode,passphrase,secret,secrets,credential,"
        "credentials,api key,api keys,safe word")  # fmt: skip
    add(Concept("database"), "database,databases,db,datastore")
    add(Concept("region"), "region,regions,datacenter,data center,availability zone")
    add(Concept("host"), "url,urls,host,hostname,endpoint,endpoints,domain")
    add(Concept("tests"), "tests,test suite")
    add(Concept("language"), "language,languages")
    add(Concept("version"), "version,versions")
    add(Concept("port"), "port,ports")
    add(Concept("commit"), "commit,sha,revision")
    add(Concept("phase"), "phase,stage,milestone")
    add(Concept("next step", scoped=False), "next step,next steps,next up")
    return table


#: Word or phrase -> the concept it names (module doc).
CONCEPTS: dict[str, Concept] = _concepts()
_SECRET = Concept("secret")
#: Words that qualify nothing: never part of a scope.
GENERIC = frozenset(
    {"new", "old", "current", "currently", "total", "internal", "internally", "active",
     "previous", "latest", "existing", "actual", "target", "working", "overall", "general",
     "final", "real", "exact", "same", "other", "own", "whole", "entire", "full", "week",
     "day", "month", "year", "today", "tomorrow", "tonight", "time", "times", "now", "then",
     "here", "there", "user", "users", "people", "everyone", "anyone", "our", "quick",
     "update", "updated", "first", "next", "last", "later", "earlier", "further", "more"}
)  # fmt: skip
_FUNCTION = frozenset(
    {"a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her", "its",
     "their", "we", "i", "you", "he", "she", "it", "they", "them", "us", "me", "is", "are",
     "was", "were", "be", "been", "being", "am", "has", "have", "had", "do", "does", "did",
     "will", "would", "shall", "should", "can", "could", "may", "might", "must", "to", "of",
     "for", "in", "on", "at", "by", "with", "from", "into", "onto", "over", "under", "below",
     "above", "and", "or", "but", "not", "no", "never", "always", "only", "also", "just",
     "still", "as", "than", "so", "if", "when", "while", "until", "unless", "about", "per",
     "via", "without", "within", "after", "before", "up", "down", "out", "off", "all", "any",
     "each", "every", "some", "both", "either", "neither", "very", "please", "let", "lets",
     "let's", "away", "free", "alone", "ever", "again", "too", "which", "who",
     "what", "where", "how", "why", "whether", "there", "here", "because", "since"}
)  # fmt: skip
_QUANTIFIERS = frozenset({"every", "each", "all", "any", "no"})
_NUMBER_WORDS = frozenset(
    {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
     "twelve", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
     "hundred", "thousand", "million", "billion", "dollars", "dollar", "euros", "euro",
     "pounds", "percent", "january", "february", "march", "april", "may", "june", "july",
     "august", "september", "october", "november", "december"}
)  # fmt: skip
_VERBS = frozenset(
    {"use", "keep", "report", "put", "show", "stick", "make", "run", "write", "send", "add",
     "get", "give", "take", "set", "go", "say", "tell", "need", "needs", "want", "wants",
     "prefer", "prefers", "like", "likes", "disclose", "reveal", "share", "exceed", "push",
     "pass", "stay", "stays", "let", "lets", "handle", "handling", "see", "look", "move",
     "change", "switch", "call", "lands", "land", "hits", "hit", "uses", "runs", "lives"}
)  # fmt: skip
_TOKEN = re.compile(r"[$]?[\w][\w./@#:'$-]*|[$]")
_AUX = frozenset({"is", "are", "was", "were", "has", "have", "had", "be", "been"})
_ASSIGN = frozenset(
    {"is", "are", "was", "were", "be", "to", "=", "at", "now", "under", "below", "above",
     "over", "from", "as"}
)  # fmt: skip


@attrs.frozen
class _Token:
    word: str  # lower case, outer punctuation stripped
    raw: str  # as written
    index: int


def _tokens(text: str) -> list[_Token]:
    """The words of ``text``; a hyphenated word of letters is split into its parts
    (``access-code`` -> ``access``, ``code``) unless it names a concept (``on-call``)."""
    out: list[_Token] = []
    for match in _TOKEN.finditer(text):
        raw = match.group(0).rstrip(".,;:!)'")
        if raw.lower().endswith(("'s", "\u2019s")):
            raw = raw[:-2]
        if not raw:
            continue
        parts = raw.split("-")
        if len(parts) > 1 and raw.lower() not in CONCEPTS and all(p.isalpha() for p in parts):
            out.extend(_Token(p.lower(), p, len(out) + k) for k, p in enumerate(parts))
        else:
            out.append(_Token(raw.lower(), raw, len(out)))
    return out


def _is_value(tokens: list[_Token], i: int) -> bool:
    tok = tokens[i]
    word = tok.word
    if re.search(r"\d", word) or "/" in word or "@" in word or "$" in word:
        return True
    if re.search(r"\w_\w", word) or re.search(r"[a-z]\.[a-z]", word) or word in _NUMBER_WORDS:
        return True
    if tok.raw[:1].isupper() and word not in CONCEPTS:
        if i > 0:
            return True  # a proper name after the first word (Postgres, OAuth, Priya)
        return len(tokens) > 1 and tokens[1].raw[:1].isupper()  # "Priya Natarajan owns ..."
    return False


def _content(tokens: list[_Token], i: int) -> bool:
    word = tokens[i].word
    if word in _FUNCTION or word in _VERBS or _is_value(tokens, i):
        return False
    return not (word.endswith("ed") or word.endswith("ing")) or word in CONCEPTS


def _phrase_at(tokens: list[_Token], i: int) -> tuple[Concept, int] | None:
    """The concept a phrase starting at token ``i`` names, and the phrase's length."""
    for size in (2, 1):
        if i + size <= len(tokens):
            phrase = " ".join(t.word for t in tokens[i : i + size])
            if phrase in CONCEPTS:
                return CONCEPTS[phrase], size
    word = tokens[i].word
    if word in ("code", "codes") and i > 0 and _content(tokens, i - 1):
        return _SECRET, 1  # "access code", "vault code": not "code examples"
    return None


def _quantified(tokens: list[_Token], i: int) -> bool:
    return any(t.word in _QUANTIFIERS for t in tokens[max(0, i - 2) : i])


_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "our", "my", "your", "its", "their"})


def _modifier(tokens: list[_Token], j: int) -> bool:
    """A word ending in -ing or -ed right after an article (``the staging database``) is a
    modifier, not a verb."""
    word = tokens[j].word
    if not (word.endswith("ing") or word.endswith("ed")) or word in _VERBS:
        return False
    return j == 0 or tokens[j - 1].word in _DETERMINERS


_ENTITY = re.compile(r"^(?:#\d+|(?=\S*[a-z])(?=\S*\d)[a-z0-9]+(?:[-_./][a-z0-9]+)*)$")


def _collect(
    tokens: list[_Token], indexes: range, concept: Concept, out: list[str], *, entity: bool = False
) -> None:
    """Add the scope words of the content run at ``indexes`` (stopping at the first word
    that is neither content nor part of ``concept``); ``entity``: an identifier in the run
    names the entity the concept belongs to (``the owner of repo-7``) and is scope too."""
    for j in indexes:
        found = _phrase_at(tokens, j)
        if found is not None and found[0] == concept:
            continue
        if entity and _ENTITY.match(tokens[j].word):
            out.append(tokens[j].word)
            continue
        if not (_content(tokens, j) or _modifier(tokens, j)):
            break
        word = tokens[j].word
        if word not in GENERIC and word not in _FUNCTION:
            out.append(word)


def scope_of(tokens: list[_Token], head: int, size: int, concept: Concept) -> frozenset[str]:
    """The scope words of the concept at ``tokens[head : head + size]`` (module doc)."""
    out: list[str] = []
    _collect(tokens, range(head - 1, -1, -1), concept, out)
    after = head + size
    if after < len(tokens) and tokens[after].word in ("for", "of"):
        start = after + 1
        while start < len(tokens) and tokens[start].word in _FUNCTION:
            start += 1
        _collect(tokens, range(start, len(tokens)), concept, out, entity=True)
    if not out and tokens[head].word in concept.verbal:
        start = after
        while start < len(tokens) and tokens[start].word in _FUNCTION:
            start += 1
        _collect(tokens, range(start, len(tokens)), concept, out)
        if not out:  # "this effort is designated X": the subject before the auxiliary
            aux = head - 1
            while aux >= 0 and tokens[aux].word not in _AUX:
                aux -= 1
            if aux > 0:
                _collect(tokens, range(aux - 1, -1, -1), concept, out)
    return frozenset(out)


def _concept_key(text: str) -> str | None:
    tokens = _tokens(text)
    for i in range(len(tokens)):
        found = _phrase_at(tokens, i)
        if found is None or _quantified(tokens, i):
            continue
        concept, size = found
        if not concept.scoped:
            return f"{concept.name}:"
        return f"{concept.name}:" + " ".join(sorted(scope_of(tokens, i, size, concept)))
    return None


def _masked(text: str) -> str:
    """``text`` lower-cased, its values after a copula or an assignment masked."""
    tokens = _tokens(text)
    words: list[str] = []
    for i, tok in enumerate(tokens):
        after_assign = i > 0 and tokens[i - 1].word in _ASSIGN
        words.append("#" if after_assign and _is_value(tokens, i) else tok.word)
    return " ".join(words)


def _value_key(words: str, value: str | None = None) -> str:
    """The key of a stated value whose key words are ``words``: its concept and scope when
    the words name one (``the project codename is X`` -> ``name:project``), or when the
    value opens with a concept word and a value of it (``switched development to branch
    X``: the branch), else ``value:<words>``."""
    if " is " in words:  # "the result is 5": one run's report
        return f"value:{words}"
    concept = _concept_key(words)
    if concept is None and value is not None:
        tokens = _tokens(value)
        head = _phrase_at(tokens, 0) if tokens else None
        if head is not None and len(tokens) > head[1] and _is_value(tokens, head[1]):
            concept = f"{head[0].name}:"
    return concept if concept is not None else f"value:{words}"


def item_key(text: str, kind: str) -> str:
    """The key of an item of ``kind`` whose text is ``text`` (module doc). An error's key is
    its text: errors are reported, not set, so none supersedes another. A value statement is
    keyed by the words it sets (never by a concept named later in it: ``the deploy target is
    now X because the stage cluster ...`` sets the deploy target)."""
    body = strip_label(text)
    if kind == "error":
        return "text:" + " ".join(body.lower().split())
    stated = value_statement(body)
    if kind == QUOTE_KIND:  # a value by what it sets, else its own words: only quotes meet it
        return f"{QUOTE_KIND}:" + (_value_key(*stated) if stated else "text:" + _masked(body))
    if stated is not None:
        return _value_key(*stated)
    value = constraint_key(body) if kind == "constraint" else None
    if value is not None:
        return _value_key(value)
    if kind == "constraint" and requires_form(body):
        return "text:" + _masked(body)  # "the port must be a number" fixes no value
    concept = _concept_key(body)
    if concept is not None:
        return concept
    return "text:" + _masked(body)


def quote_subject(text: str) -> str:
    """The key the quote ``text`` would have as the agent's own sentence (of the kind
    :func:`regio.summarizers.toolnotes.quoted_kind` gives): the user's item of that key
    replaces the quote (:class:`regio.summarizers.items.ItemSet`)."""
    return item_key(text, quoted_kind(text) or "fact")


def related(older: str, newer: str) -> bool:
    """Whether ``newer`` may supersede ``older`` without being the same key: both name one
    concept with non-empty scopes, one containing the other (``budget:field trip`` and
    ``budget:trip``)."""
    if older == newer or ":" not in older or ":" not in newer:
        return False
    a_name, a_scope = older.split(":", 1)
    b_name, b_scope = newer.split(":", 1)
    if a_name != b_name or a_name in ("text", "value", QUOTE_KIND) or not a_scope or not b_scope:
        return False
    a, b = set(a_scope.split()), set(b_scope.split())
    return a <= b or b <= a
