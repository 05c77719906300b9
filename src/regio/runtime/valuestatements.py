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
* ``use VALUE for|as KEY``.

KEY is one to five words of letters (inner ``_``, ``-``, ``.`` allowed; a word with a digit
is an identifier, not a setting's name; articles and possessives dropped, case folded); VALUE
at most :data:`MAX_CHANGE_WORDS` words (one token in the plain ``X is Y`` form), not opening
with a verb (``update the README to mention ...`` is an instruction). The forms are the
plain-English ways of changing a setting (``set X to Y``, ``X is now Y``); tool output is never
read for them (it has no authority to change what the user set).
"""

from __future__ import annotations

import re

__all__ = ["MAX_CHANGE_WORDS", "value_key"]

#: Longest value an explicit change (``set X to Y``, ``X is now Y``) sets, in words, counting
#: a reason given after it ("... is now prod-eu-1 because ..."); a longer tail is prose.
MAX_CHANGE_WORDS = 24
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
_KEY = r"(?P<key>[\w.\-/]+(?:\s+[\w.\-/]+){0,5}?)"
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
_IS = re.compile(rf"^{_LABEL}{_KEY}\s+(?:is|are)\s+(?P<value>\S+?){_END}", re.I)
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


#: A word of a key: letters, with inner ``_``, ``-`` or ``.`` (``LOG_LEVEL``, ``base-url``); a
#: word with a digit is a value or an identifier, not the name of a setting.
_KEY_WORD = re.compile(r"^[a-z]+(?:[_.\-][a-z]+)*$")


def _normalize(key: str, *, determiner: bool = False) -> str | None:
    """The key's words (case folded, articles and possessives dropped), or ``None`` when it
    names no setting; ``determiner``: the key must open with an article or a possessive."""
    raw = key.lower().rstrip(".,;:!").split()
    if determiner and (not raw or raw[0] not in _DROP):
        return None
    words = [w for w in raw if w not in _DROP]
    if not words or len(words) > 5 or words[0] in _NOT_A_KEY:
        return None
    if not all(_KEY_WORD.match(w) for w in words):
        return None
    # one setting spelled LOG_LEVEL, log-level or "log level" is one key
    return " ".join(words).replace("_", " ").replace("-", " ")


def value_key(sentence: str) -> str | None:
    """The normalized key (``"deploy target"``) of ``sentence`` when it states a value
    (module doc), else ``None``."""
    text = sentence.strip()
    for form in _FORMS:
        match = form.match(text)
        if match is None:
            continue
        value = match.group("value").split()
        if len(value) <= MAX_CHANGE_WORDS and value[0].lower() not in _VERB_VALUE:
            return _normalize(match.group("key"))
    match = _IS.match(text)
    if match and _CONCRETE.match(match.group("value").rstrip(".,;:!")):
        return _normalize(match.group("key"), determiner=True)
    return None
