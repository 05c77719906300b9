"""Value statements: a sentence that sets a setting or a stated value, and the key it sets.

:func:`value_key` returns the normalized key of a sentence that states the current value of
something, or ``None``. The extractive summary keeps these sentences under ``Values:``, one
per key: a later statement of the same key supersedes the earlier one ("the deploy target is
now ...", "change the timeout to 60s"), so a summary never carries a stale value beside the
current one. The forms, each a whole sentence (an optional label such as ``Update:`` or
``Note:`` first, an optional final ``.`` or ``!``):

* ``set|change|switch|update|bump|move|point|rename KEY to|= VALUE`` (also after ``I``,
  ``we``, ``I've``, ``we have``, ``please``, ``let's``), and ``KEY has been|was
  set|changed|updated|moved|switched|bumped|renamed to VALUE``;
* ``KEY is|are now VALUE`` (any short value);
* ``the|my|our|... KEY is|are VALUE`` when VALUE is one concrete token: a path, URL, host,
  id, version, date or number (``The staging host is db-07.internal``, ``My user ID is
  amelia_8890``) -- a plain ``X is Y`` of words is a description, not a setting;
* ``use VALUE for|as KEY``;
* an entity's value: ``[the] NOUN ID is|are VALUE`` where ID names the entity (a token of
  letters and digits, or ``#`` and a number: ``reservation ABC123 is for May 3``, ``order
  ORD-7312 is now cancelled``; a bare number is a quantity, not an identifier); VALUE is
  short (at most :data:`MAX_ENTITY_WORDS` words) and holds a concrete token, or follows
  ``now``.

KEY is one to five words of letters (inner ``_``, ``-``, ``.`` allowed; articles and
possessives dropped, case folded), plus at most one entity identifier, its last word: the
key of ``reservation ABC123 ...`` is ``reservation abc123``, so two reservations are two
values and a later statement supersedes only the same entity's. A key opening with a word with
a digit is an identifier, not a setting's name. VALUE is at most :data:`MAX_CHANGE_WORDS` words
(one token in the plain ``X is Y`` form), not opening with a verb (``update the README to
mention ...`` is an instruction). The forms are the plain-English ways of changing a setting
(``set X to Y``, ``X is now Y``); tool output is never read for them (it has no authority to
change what the user set: its ``KEY: VALUE`` reports are facts of a tool's authority,
:func:`regio.summarizers.toolfacts.tool_facts`).

**A generic noun alone is one report, not a setting.** ``The result is 5.`` states what one
run gave: in the plain ``X is Y`` form, a key of one noun of :data:`GENERIC_NOUNS` (result,
output, answer, value, count, ...) includes its value (``result is 5``), so a later ``The
result is 0.`` about another run is kept beside it instead of dropping it. Qualified (``the
test result is 5``), with an entity, changed (``the output is now yaml``) or set explicitly
(``set the output to json``) it is a key as usual, and the newest statement wins.

**A state is not a value.** ``X is|are [now|still|...] S`` where S is a status word
(:data:`STATUS_WORDS`: failing, broken, passing, fixed, done, running, ...) reports how a task
or a run is going, not a setting: :func:`value_key` returns ``None`` for it and
:func:`failure_state` tells a failure (``the test is now failing``), which the summary files
under ``Errors``, from a success, which it files nowhere.

**A constraint can set a value.** :func:`constraint_key` gives the key of a constraint that
fixes a value (``the port must be 9000``, ``make sure the timeout is 30s``, ``always use uv for
installs``); the summary keeps the sentence under ``Constraints`` and drops the older value
of that key from ``Values``.
"""

from __future__ import annotations

import re

__all__ = [
    "GENERIC_NOUNS",
    "MAX_CHANGE_WORDS",
    "MAX_ENTITY_WORDS",
    "STATUS_WORDS",
    "constraint_key",
    "failure_state",
    "requires_form",
    "value_key",
    "value_statement",
]

#: Longest value an explicit change (``set X to Y``, ``X is now Y``) sets, in words, counting
#: a reason given after it ("... is now prod-eu-1 because ..."); a longer tail is prose.
MAX_CHANGE_WORDS = 24
#: Longest value of an entity's plain ``NOUN ID is VALUE`` statement, in words.
MAX_ENTITY_WORDS = 6
#: Words that state how a task, a test or a run is going (``the build is broken``): a state,
#: not the value of a setting. The failures among them are :data:`FAILURE_WORDS`.
STATUS_WORDS = frozenset(
    {"failing", "failed", "broken", "crashing", "crashed", "erroring", "flaky", "hanging",
     "passing", "passed", "fixed", "done", "complete", "completed", "finished", "resolved",
     "working", "running", "succeeding", "succeeded", "ready", "merged", "closed", "open",
     "pending", "blocked", "stuck", "ok", "fine"}
)  # fmt: skip
FAILURE_WORDS = frozenset(
    {"failing", "failed", "broken", "crashing", "crashed", "erroring", "flaky", "hanging",
     "stuck"}
)  # fmt: skip
#: Adverbs between ``is`` and a state (``is now failing``, ``are still broken``).
_STATE_ADVERBS = frozenset(
    {"now", "still", "again", "all", "also", "already", "currently", "consistently",
     "intermittently", "completely", "fully", "finally", "totally", "partly", "mostly"}
)  # fmt: skip
#: A value opening with one of these verbs is an instruction ("update the README to mention
#: the flag"), not a value.
_VERB_VALUE = frozenset(
    {"use", "mention", "add", "include", "remove", "support", "handle", "show", "make", "fix",
     "call", "read", "return", "work", "run", "do", "be", "have", "get", "go", "take", "say"}
)  # fmt: skip

_LABEL = r"(?:(?:update|note|fyi|correction|change|changed|heads\s+up)\s*[:,-]\s*)?"
_SUBJECT = (
    r"(?:(?:please|let(?:'|\u2019)?s|i|we|i(?:'|\u2019)?ve|we(?:'|\u2019)?ve|i\s+have|"
    r"we\s+have|i\s+just|we\s+just)\s+)?"
)
_KEY = r"(?P<key>[\w.\-/#]+(?:\s+[\w.\-/#]+){0,6}?)"
_VALUE = r"(?P<value>\S.*?)"
_END = r"\s*[.!]?$"
_VERB = r"(?:set|change|changed|switch|switched|update|updated|bump|bumped|move|moved|point|rename)"
_FORMS = (
    re.compile(rf"^{_LABEL}{_SUBJECT}{_VERB}\s+{_KEY}\s+(?:to|=)\s+{_VALUE}{_END}", re.I),
    re.compile(
        rf"^{_LABEL}{_KEY}\s+(?:has|have)?\s*(?:been|was|were|got)\s+"
        rf"(?:set|changed|updated|moved|switched|bumped|renamed|pointed)\s+to\s+{_VALUE}{_END}",
        re.I,
    ),
    re.compile(rf"^{_LABEL}{_KEY}\s+(?:is|are)\s+now\s+{_VALUE}{_END}", re.I),
    re.compile(rf"^{_LABEL}{_SUBJECT}use\s+{_VALUE}\s+(?:for|as)\s+{_KEY}{_END}", re.I),
)
_IS = re.compile(rf"^{_LABEL}{_KEY}\s+(?:is|are)\s+(?P<value>\S.*?){_END}", re.I)
#: A concrete value of the plain ``X is Y`` form: a path, URL, host, id, version, date or
#: number (a token with a digit, a ``/``, or an inner ``.``/``-``/``_`` between word
#: characters).
_CONCRETE = re.compile(r"^(?:\S*\d\S*|\S*/\S*|\w+(?:[.\-_]\w+)+)$")
_DROP = frozenset({"the", "a", "an", "our", "my", "your", "their", "its", "this", "that"})
#: Words that make the key a pronoun or a clause, not a named setting.
_NOT_A_KEY = frozenset(
    {"it", "this", "that", "there", "here", "what", "which", "who", "he", "she", "they", "we",
     "me", "you", "us", "them", "him", "her", "up"}
)  # fmt: skip


#: Nouns too generic to name a setting on their own: ``the result is 5`` and ``the result is
#: 0`` report what two runs gave, so in the plain ``X is Y`` form the key of one of them alone
#: includes its value (both are kept, neither supersedes the other). Qualified (``the test
#: result is 5``), with an entity (``order ORD-7312 is ...``), changed (``the output is now
#: yaml``) or set explicitly (``set the output to json``) they are keys as usual.
GENERIC_NOUNS = frozenset(
    {"result", "results", "output", "outputs", "answer", "answers", "value", "values",
     "number", "count", "total", "sum", "response", "reply", "return", "problem", "issue",
     "error", "reason", "cause", "difference", "change", "fix", "thing", "one", "first",
     "last", "next", "other", "rest", "same", "case", "line", "file", "item", "message",
     "status", "state", "code", "text", "data", "info", "note", "point", "question", "idea"}
)  # fmt: skip


#: A word of a key: letters, with inner ``_``, ``-`` or ``.`` (``LOG_LEVEL``, ``base-url``); a
#: word with a digit is a value or an identifier, not the name of a setting.
_KEY_WORD = re.compile(r"^[a-z]+(?:[_.\-][a-z]+)*$")
#: An entity's identifier inside a key (``ABC123``, ``ORD-7312``, ``#42``): a token with a digit.
#: A bare number (``value 8022``, ``items 3929``) is a quantity, not an entity's identifier.
_ENTITY_ID = re.compile(r"^(?:#\d+|(?=[^\s]*[a-z])(?=[^\s]*\d)[a-z0-9]+(?:[_.\-/][a-z0-9]+)*)$")
#: Function words that cannot open an entity's key (``if tests 8242 is ...`` is no statement).
_NOT_A_NOUN = frozenset(
    {"if", "for", "in", "on", "at", "to", "of", "as", "by", "with", "from", "and", "or", "not",
     "is", "are", "was", "were", "be", "been", "else", "elif", "def", "return", "true",
     "false", "none", "null", "import", "print", "raise", "try", "except", "while", "when"}
)  # fmt: skip


def _key(key: str, *, determiner: bool = False) -> tuple[str, bool] | None:
    """The key's words (case folded, articles and possessives dropped) and whether it names an
    entity (module doc), or ``None`` when it names no setting; ``determiner``: a key without
    an entity must open with an article or a possessive."""
    raw = key.lower().rstrip(".,;:!").split()
    words = [w for w in raw if w not in _DROP]
    if not words or words[0] in _NOT_A_KEY or not _KEY_WORD.match(words[0]):
        return None
    ids = [w for w in words if not _KEY_WORD.match(w)]
    # an entity: NOUN ... ID, the identifier last ("the seat of booking PEP4E0")
    entity = ids == words[-1:] and bool(_ENTITY_ID.match(ids[0])) and words[0] not in _NOT_A_NOUN
    if (ids and not entity) or len(words) - len(ids) > 5:
        return None
    if determiner and not entity and raw[0] not in _DROP:
        return None
    # one setting spelled LOG_LEVEL, log-level or "log level" is one key; an id stays verbatim
    return " ".join(w if w in ids else w.replace("_", " ").replace("-", " ") for w in words), entity


def _state(value: str) -> str | None:
    """The status word a value states (``now failing`` -> ``failing``), or ``None``."""
    for word in value.lower().split():
        word = word.strip(".,;:!")
        if word not in _STATE_ADVERBS:
            return word if word in STATUS_WORDS else None
    return None


def _concrete(words: list[str]) -> bool:
    return any(_CONCRETE.match(w.rstrip(".,;:!")) for w in words)


def value_key(sentence: str) -> str | None:
    """The normalized key (``"deploy target"``, ``"reservation abc123"``) of ``sentence``
    when it states a value (module doc), else ``None``."""
    found = value_statement(sentence)
    return found[0] if found is not None else None


def value_statement(sentence: str) -> tuple[str, str] | None:
    """``(key, value)`` of ``sentence`` when it states a value (:func:`value_key`; the value
    as written), else ``None``."""
    text = sentence.strip()
    for index, form in enumerate(_FORMS):
        match = form.match(text)
        if match is None:
            continue
        value = match.group("value").split()
        if len(value) > MAX_CHANGE_WORDS or value[0].lower() in _VERB_VALUE:
            continue
        if index == 2 and _state(match.group("value")) is not None:
            return None  # "X is now failing": a state, not a value
        key = _key(match.group("key"))
        return (key[0], match.group("value")) if key else None
    match = _IS.match(text)
    if match is None or _state(match.group("value")) is not None:
        return None
    value = match.group("value").split()
    key = _key(match.group("key"), determiner=True)
    if key is None or value[0].lower() in _VERB_VALUE:
        return None
    if len(value) == 1 and _CONCRETE.match(value[0].rstrip(".,;:!")):
        if not key[1] and key[0] in GENERIC_NOUNS:  # "the result is 5": one run's report
            return f"{key[0]} is {value[0].rstrip('.,;:!').lower()}", match.group("value")
        return key[0], match.group("value")
    if key[1] and len(value) <= MAX_ENTITY_WORDS and _concrete(value):
        return key[0], match.group("value")  # "reservation ABC123 is for May 3"
    return None


_STATE = re.compile(
    r"^(?P<subject>\S+(?:\s+\S+){0,6}?)\s+(?:is|are|was|were|has\s+been|have\s+been|keeps|"
    r"started|remains?|stays?)\s+(?P<value>\S.*?)\s*[.!]?$",
    re.I,
)


def failure_state(sentence: str) -> bool:
    """Whether ``sentence`` reports a failure state (``the test is now failing``, ``the build
    is still broken``: a subject, ``is`` and a word of :data:`FAILURE_WORDS`); such a
    sentence is an error report, not a value."""
    match = _STATE.match(sentence.strip())
    if match is None:
        return False
    return _state(match.group("value")) in FAILURE_WORDS


_MODAL = re.compile(
    rf"^{_LABEL}{_KEY}\s+(?:must|should|shall|has\s+to|have\s+to|needs?\s+to)\s+"
    rf"(?:(?:always|still|now|only|also)\s+)*(?:be|stay|remain)\s+(?:set\s+to\s+)?{_VALUE}{_END}",
    re.I,
)
#: A required kind or property (``must be an integer``, ``must be positive``) fixes no value:
#: it constrains the key without replacing a stated value or another constraint.
_KIND = re.compile(r"^(?:a|an|any|some|one\s+of)\s", re.I)
_PROPERTIES = frozenset(
    {"positive", "negative", "non-negative", "nonnegative", "nonzero", "non-zero", "non-empty",
     "nonempty", "empty", "unique", "valid", "optional", "required", "sorted", "lowercase",
     "uppercase", "even", "odd", "finite", "ascii", "immutable", "readonly", "read-only",
     "public", "private", "set", "unset", "defined", "null", "none", "numeric", "short", "long",
     "small", "large", "consistent", "stable", "deterministic", "idempotent", "secure"}
)  # fmt: skip
_ENSURE = re.compile(r"^(?:please\s+)?(?:make\s+sure|ensure|always|only)\s+(?:that\s+)?", re.I)


def requires_form(sentence: str) -> bool:
    """Whether ``sentence`` is a modal constraint (``X must be Y``) that requires a state, a
    kind, a property or a form rather than a value (``the port must be a number``, ``the
    value must be positive``): it constrains its key without fixing a value, so it supersedes
    nothing."""
    return _MODAL.match(sentence.strip()) is not None and constraint_key(sentence) is None


def constraint_key(sentence: str) -> str | None:
    """The key of a constraint that fixes a value (``the port must be 9000`` -> ``"port"``,
    ``make sure the timeout is 30s``, ``always use uv for installs``), else ``None``; a
    required state (``the tests must be passing``), kind (``must be an integer``) or property
    (``must be positive``) fixes no value."""
    text = sentence.strip()
    match = _MODAL.match(text)
    if match is not None:
        value = match.group("value").split()
        if len(value) > MAX_CHANGE_WORDS or value[0].lower() in _VERB_VALUE:
            return None
        if _state(match.group("value")) is not None:
            return None
        if len(value) > 1 and value[0].lower().endswith("ed"):
            return None  # "must be enclosed in backticks": a required form, not a value
        if _KIND.match(match.group("value")) or (
            len(value) == 1 and value[0].lower().strip(".,;:!") in _PROPERTIES
        ):
            return None  # "must be an integer", "must be positive": no concrete value
        key = _key(match.group("key"))
        return key[0] if key else None
    stripped = _ENSURE.sub("", text, count=1)
    if stripped != text:
        stripped = stripped[:1].upper() + stripped[1:]
        return value_key(stripped) or value_key("The " + stripped)
    return value_key(text)
