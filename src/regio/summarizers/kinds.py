"""The kinds of durable items and how a statement is sorted into one.

Kinds, in priority order (a summary lists them in this order; a budget drops the last kind
first): ``constraint`` (a rule or prohibition, with or without a modal word), ``preference``,
``goal``, ``todo`` (an open to-do), ``fact`` (a named value: a setting, a number, a name, an
identifier with what it is), ``decision``, ``error``. Open to-dos and facts come before
decisions and errors: they are few and live on only through the summary, while tool output
reports errors by the dozen (measured on the bench's generated coding sessions, see
``docs/runtime.md``, "Summarizers").

:func:`classify` sorts one statement of a user's or the agent's own text:

1. a **label** decides (``SAFETY RULE:``, ``Constraint:``, ``USER PREFERENCE:``, ``GOAL
   STATE:``, ``TODO:``, ``Decision:``, ``FACT:``, ``Error:``: a label word of
   :data:`regio.summarizers.statements.LABEL_KINDS`); a weak label (``Note:``, ``Reminder:``,
   ``Status:``) gives its kind only when the rest of the statement gives none; ``Update:``,
   ``Correction:`` decide nothing, and a label that names a subject (``Release timing has
   changed:``) is read as part of the statement;
2. a **modal of obligation or prohibition** (must, never, do not, only, always, make sure,
   avoid, at most, ...) makes a constraint when the user says it (the agent's own only with
   must / never / do not / always);
3. a **completion** (``done: X``, ``we fixed X``) is no to-do and no error, but may state a
   value or a decision; a **to-do** marker (``TODO``, ``Next step``, ``still need to``) makes a
   to-do; an **error report** an error;
4. a **preference** (``I prefer``, ``I would rather``, ``the user wants``) and a **goal**
   (``the goal is``, ``current task is``, ``we are working on``);
5. a **value statement** (:func:`regio.summarizers.valuestatements.value_key`), or the user's
   **named value** (a sentence with a concrete token -- a number, an identifier, a path, a
   proper name -- and a verb that names, places or changes it: ``is``, ``moved to``, ``is
   called``, ``owns``, ``runs in``; or a ``KEY: VALUE`` line such as ``Codeword for
   CLAUDE.md: AMBER-FALCON-4821``) makes a fact (the agent's narration, ``the file is in
   src/``, is not one);
6. the user's **imperative** makes a constraint when its verb says how to work (``use``,
   ``keep``, ``report``, ``show``, ``stick to``: :data:`RULE_VERBS`; after an opening phrase
   such as ``From now on,`` or a label-like ``New ceiling for trip costs:``; any verb after
   ``please``) and a to-do when it names a task (``fix``, ``add``, ``implement``:
   :data:`TASK_VERBS`); a prohibition opening with ``No`` (``No external network calls``) is
   a constraint;
7. a **decision** marker (decided, we will, going with, instead of) makes a decision.

Steps 4-6 read only sentence-like text (it opens with a capital letter or follows a label,
and reads as prose: :func:`prose`; an instruction may also be a message of one lower-case
line of plain words, ``use metric, not imperial``): a fragment of pasted output or code is
not a preference, an instruction or a fact. A question is no item (even with a short tag
after it: ``What is the cap? -- recorded.``).

Tool output -- tool results, and environment observations sent as user text -- has no
authority to instruct: :func:`classify` never reads it. It gives three things only:

* **error lines** (:func:`tool_errors`, at most :data:`MAX_TOOL_ERRORS` per result; a stack
  trace is one line, its exception line and innermost frame);
* **reported values** (:mod:`regio.summarizers.toolfacts`): a short top-level ``KEY: VALUE``
  report line (``Job ID: 7f3a91``), always a ``fact``, never a constraint or a to-do, kept
  with the tool's authority only (:class:`regio.summarizers.items.ItemSet`);
* **quotes** (:mod:`regio.summarizers.toolnotes`): a sentence that states a rule, a to-do or
  a value (what :func:`classify` would give the agent's own sentence), kept verbatim under a
  heading of its own, never as a constraint, a to-do or a value of anyone's.
"""

from __future__ import annotations

import re

from .openitems import TODO
from .statements import LABEL, WEAK_LABEL_KINDS, label_kind, label_of, strip_label
from .tracebacks import condense
from .valuestatements import failure_state, value_key

__all__ = [
    "DECISION",
    "ERROR",
    "HEADINGS",
    "KINDS",
    "MAX_TOOL_ERRORS",
    "RULE_VERBS",
    "SECTIONS",
    "TASK_VERBS",
    "TOOL_ERROR",
    "classify",
    "named_value",
    "pair_line",
    "prose",
    "reports_error",
    "tool_errors",
]

#: Item kinds, most important first.
KINDS = ("constraint", "preference", "goal", "todo", "fact", "decision", "error")
#: The heading each kind is listed under in a summary (``Open items`` and ``Values`` are the
#: headings extractive summaries have always used for to-dos and values).
HEADINGS = {
    "constraint": "Constraints",
    "preference": "Preferences",
    "goal": "Goals",
    "todo": "Open items",
    "fact": "Values",
    "decision": "Decisions",
    "error": "Errors",
}
#: The headings, in the order a summary lists them.
SECTIONS = tuple(HEADINGS[kind] for kind in KINDS)
_CONSTRAINT = re.compile(
    r"\b(?:must|mustn(?:'|\u2019)?t|never|do\s+not|don(?:'|\u2019)?t|does\s+not|always|"
    r"should\s+not|shouldn(?:'|\u2019)?t|shall\s+not|cannot|can(?:'|\u2019)?t|may\s+not|"
    r"required?|requirements?|make\s+sure|ensure|avoid|forbidden|not\s+allowed|prohibited|"
    r"at\s+most|at\s+least|no\s+more\s+than|no\s+later\s+than|without|under\s+no\s+circumstances)\b",
    re.IGNORECASE,
)
#: ``only`` restricts when it opens a clause (``Only Python 3.11``), follows a modal (``you may
#: only``) or precedes a verb (``only use``); ``the TTL is only a backstop`` describes.
_ONLY = re.compile(
    r"(?:^|[;:,(]\s*|\b(?:can|may|must|should|shall|will|to|please)\s+)only\b"
    r"|\bonly\s+(?:use|run|send|write|call|touch|edit|change|deploy|push|answer|reply|respond|"
    r"accept|allow|read|access|modify|commit|merge|install|work|ever)\b",
    re.IGNORECASE,
)
_STRONG = re.compile(r"\b(?:must|never|do\s+not|always)\b", re.IGNORECASE)
DECISION = re.compile(
    r"\b(?:decided|decide|decision|we(?:'|\u2019)?ll|we\s+will|i(?:'|\u2019)?ll|i\s+will|"
    r"going\s+with|go\s+with|chose|chosen|choose|switch(?:ed)?\s+to|instead\s+of|"
    r"settled\s+on|agreed|approach|plan\s+is)\b",
    re.IGNORECASE,
)
ERROR = re.compile(
    r"(?:\b[A-Z]\w*(?:Error|Exception)\b|\berror\b|\bexception\b|\btraceback\b|\bfailed\b|"
    r"\bfailure\b|\bfatal\b|\bpanic\b|\bexit\s+(?:code|status)\s+[1-9]\d*|\bFAILED\b)",
    re.IGNORECASE,
)
#: An error line of tool output (stronger than :data:`ERROR`: source code that merely names
#: an exception is not a failure report).
TOOL_ERROR = re.compile(
    r"(?:^\W{0,3}(?:[\w.]*(?:Error|Exception)|error|fatal|FAILED|ERROR|E)\b\s*[:\s]"
    r"|Traceback \(most recent call last\)|\bexit\s+(?:code|status)\s+[1-9]\d*"
    r"|\b\d+\s+(?:failed|errors?)\b)"
)
#: Most error lines kept from one tool result.
MAX_TOOL_ERRORS = 3

#: Where a sentence's clauses meet: a later clause can report what went wrong after the
#: completion of the first.
_CLAUSE = re.compile(
    r"[;:]\s+|,\s*(?:and|but|though|although|however|yet|while|then|so)?\s*"
    r"|\s+(?:and|but|though|although|however|yet|while|whereas)\s+",
    re.IGNORECASE,
)
#: A clause that reports a failure (not one that names the error it fixed).
_REPORT = re.compile(
    r"\b(?:fails?|failed|failing|rais(?:es|ed)|throws?|threw|crash(?:es|ed)|errors?\s+out|"
    r"errored|broke|breaks|reports?|reported|gives?|gave|shows?|showed|exit(?:s|ed)?\s+with)\b"
    r"|\bexit\s+(?:code|status)\s+[1-9]\d*|\btraceback\b|\b[A-Z]\w*(?:Error|Exception):",
    re.IGNORECASE,
)


def reports_error(sentence: str) -> bool:
    """Whether a clause after the first of ``sentence`` (a completion) reports a failure:
    ``Fixed the TypeError, but now test_dump fails with AssertionError`` does, ``Fixed the
    TypeError and the ValueError`` does not (it names the errors it fixed)."""
    clauses = _CLAUSE.split(sentence)[1:]
    return any(
        (ERROR.search(c) and _REPORT.search(c)) or failure_state(c[:1].upper() + c[1:])
        for c in clauses
        if c
    )


#: Verbs of an imperative that says how to work: a rule.
RULE_VERBS = frozenset(
    {"use", "keep", "report", "put", "show", "stick", "format", "reply", "respond", "answer",
     "cite", "mention", "include", "exclude", "limit", "wait", "ask", "quote", "follow",
     "prefer", "treat", "write", "send", "stay", "log", "store", "save", "address", "name",
     "refer", "express", "give", "present", "display", "print", "round", "sign", "spell",
     "call", "target", "pin", "run", "check", "confirm", "double-check", "verify", "stop",
     "escalate", "notify", "tell", "let", "assume", "default", "require", "route", "copy",
     "cc", "document", "make", "be", "do", "try", "speak", "talk", "mark", "tag", "label",
     "convert", "translate", "measure", "count", "bill", "charge", "price", "sort", "order"}
)  # fmt: skip
#: Verbs of an imperative that names a task: a to-do.
TASK_VERBS = frozenset(
    {"fix", "add", "implement", "create", "update", "refactor", "rename", "remove", "delete",
     "migrate", "investigate", "look", "review", "test", "deploy", "push", "commit", "merge",
     "release", "finish", "complete", "draft", "prepare", "schedule", "book", "cancel",
     "rotate", "clean", "replace", "upgrade", "bump", "backfill", "wire", "set", "install",
     "configure", "build", "debug", "find", "reproduce", "revert"}
)  # fmt: skip
#: Phrases that may open an imperative (``From now on,``, ``Please``, ``For status
#: reports,``).
_LEAD = re.compile(
    r"^(?:(?:from\s+now\s+on|going\s+forward|in\s+future|in\s+the\s+future|henceforth|"
    r"for\s+[^,;:]{1,40}|when\s+[^,;:]{1,40}|if\s+[^,;:]{1,40}|otherwise|also|and|then)\s*,\s*)?"
    r"(?:please\s+|kindly\s+|always\s+)?",
    re.IGNORECASE,
)
_PLEASE = re.compile(r"^(?:[^,;:]{1,40},\s*)?(?:please|kindly)\s+\w", re.IGNORECASE)
_PROHIBITION = re.compile(r"^(?:no|zero)\s+\w+", re.IGNORECASE)
_PREFERENCE = re.compile(
    r"\b(?:i|user|the\s+user|users|they|he|she|we|customer|the\s+customer|client)"
    r"(?:(?:'|\u2019)d|\s+would|\s+really|\s+also|\s+still|\s+now)?\s+"
    r"(?:prefers?|preferred|rather|likes?|wants?|wanted|like)\b"
    r"|\b(?:preference|preferred)\b|\bwould\s+rather\b",
    re.IGNORECASE,
)
_GOAL = re.compile(
    r"^(?:our|the|my|current|overall|main)?\s*(?:goal|objective|aim|mission|focus|task|"
    r"current\s+task)\s+(?:is|was|remains|:)"
    r"|\b(?:we|i)\s+(?:are|am)\s+(?:working\s+on|trying\s+to|migrating|building|in\s+phase)\b"
    r"|\bcurrently\s+(?:working\s+on|migrating|building)\b|\bphase\s+\d+\s+of\b",
    re.IGNORECASE,
)
#: A verb that names, places, owns or changes a value (a named value's verb).
_NAMING = re.compile(
    r"\b(?:is|are|was|were|now|moved|changed|switched|renamed|called|named|calling|"
    r"designated|owns|owned|belongs|runs|running|lives|hosted|located|based|scheduled|lands|"
    r"ships?|uses|points|set|equals|becomes?)\b|=",
    re.IGNORECASE,
)
_WORD = re.compile(r"[\w$][\w$.,/@:+#'-]*")
_MONTHS = frozenset(
    {"january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"}
)  # fmt: skip


def _concrete(token: str) -> bool:
    """A token that is a value by its form: a number, an identifier, a path, a URL, an
    amount."""
    word = token.rstrip(".,;:!)")
    return bool(
        re.search(r"\d", word)
        or "/" in word
        or "@" in word
        or "$" in word
        or re.search(r"\w_\w", word)
        or re.search(r"[a-z]\.[a-z]", word, re.IGNORECASE)
    )


#: Function words of English prose (a share of them tells a sentence from a fragment of code
#: or pasted output).
_FUNCTION = frozenset(
    {"the", "a", "an", "to", "of", "in", "on", "at", "for", "with", "by", "from", "and",
     "or", "but", "is", "are", "was", "were", "be", "been", "it", "this", "that", "these",
     "those", "we", "i", "you", "they", "he", "she", "my", "our", "your", "their", "not",
     "no", "never", "always", "only", "all", "any", "every", "each", "please", "now",
     "should", "must", "will", "would", "can", "could", "may", "do", "does", "don't", "if",
     "when", "than", "then", "so", "as", "up", "out", "into", "under", "below", "above",
     "over", "until", "before", "after", "about", "them", "it's", "let's", "us", "me"}
)  # fmt: skip
#: Tokens of code or tool output, not prose.
_CODE = re.compile(
    r"^(?:\w*_\w*|None|True|False|elif|def|self|import|return|raise|except|assert|lambda|"
    r"kwargs|args|str|int|dict|len|PASSED|FAILED|SKIPPED|ERROR|\W+)$"
)


def prose(text: str) -> bool:
    """Whether ``text`` reads as prose, not a fragment of code or output: among four or more
    words, at least one in seven is an English function word and at most one in five a token
    of code (an identifier with ``_``, a keyword, a bare symbol)."""
    words = [w for w in text.split() if len(w) > 1 or w.isalnum()]  # "-", "[", "]" say nothing
    if len(words) < 4:
        return True
    function = sum(w.lower().strip(".,;:!?()\"'") in _FUNCTION for w in words)
    code = sum(bool(_CODE.match(w.strip(".,;:!?()\"'") or w)) for w in words)
    return 7 * function >= len(words) and 5 * code <= len(words)


_PAIR = re.compile(r"^(?P<key>[A-Za-z][\w .'/-]{1,60}?):\s+(?P<value>\S+(?:\s+\S+)?)\s*$")


def pair_line(body: str) -> bool:
    """``KEY: VALUE``: a name of at most five words without numbers, then one or two tokens
    with a concrete one (``Codeword for CLAUDE.md: AMBER-FALCON-4821``)."""
    match = _PAIR.match(body.strip())
    if match is None:
        return False
    key = match.group("key").split()
    if len(key) > 5 or any(w.isdigit() for w in key):
        return False
    return any(_concrete(w) for w in match.group("value").split())


def named_value(body: str) -> bool:
    """Whether ``body`` names a value: a ``KEY: VALUE`` line, or a sentence (it ends with a
    full stop or an exclamation mark) with a concrete token (:func:`_concrete`, a month, or a
    capitalised word after the first: a proper name) and a naming verb with a word before it
    in its clause (its subject; module doc)."""
    if pair_line(body):
        return True
    words = _WORD.findall(body)
    if len(words) < 3 or not body.rstrip().rstrip(")\"'").endswith((".", "!")):
        return False
    clause = next((c for c in re.split(r"[:;]", body) if _NAMING.search(c)), None)
    if clause is None:
        return False
    verb = _NAMING.search(clause)
    assert verb is not None
    if not re.search(r"[A-Za-z]{2,}", clause[: verb.start()]):
        return False
    for i, word in enumerate(words):
        if _concrete(word) or word.lower().strip(".,;:") in _MONTHS:
            return True
        if i > 0 and word[:1].isupper() and word not in ("I", "I'm", "I've"):
            return True
    return False


def _imperative(body: str) -> str | None:
    """``"constraint"`` or ``"todo"`` when ``body`` (or a clause after its first ``:``) is an
    imperative (module doc), else ``None``."""
    clauses = [body]
    if LABEL.match(body):  # "New ceiling for trip costs: keep them below ..."
        clauses.append(body.split(":", 1)[1].strip())
    for clause in clauses:
        rest = clause[_LEAD.match(clause).end() :]  # type: ignore[union-attr]
        first = rest.split(" ", 1)[0].lower().strip(".,;:!")
        if first in TASK_VERBS:
            return "todo"
        if first in RULE_VERBS or _PLEASE.match(clause):
            return "constraint"
    return None


def _question(body: str) -> bool:
    """Whether ``body`` asks rather than states: it ends with a question mark, or one is
    followed by at most three words (``What is the cap? -- recorded.``)."""
    if "?" not in body:
        return False
    return len(body.rsplit("?", 1)[1].split()) <= 3


def _sentence_like(statement: str, labelled: bool) -> bool:
    return labelled or statement[:1].isupper() or statement[:1] in "\"'("


def classify(
    statement: str, role: str | None, *, completed: bool = False, alone: bool = False
) -> str | None:
    """The kind of ``statement`` (module doc), or ``None`` when it is no item. ``role``:
    ``"user"``, ``"assistant"`` or ``None`` (a previous summary's line: the user's
    authority); ``completed``: the statement completes an open to-do (it is then no to-do and
    no error, but may still be a fact or a decision); ``alone``: it is the whole message, so a
    lower-case line of plain words may be an instruction (``use metric, not imperial``)."""
    label = label_of(statement)
    kind = label_kind(label)
    if kind is not None:
        return kind
    body = strip_label(statement)
    if _question(body):
        return None
    found = _by_content(statement, body, role, label is not None, completed, alone)
    return found or label_kind(label, WEAK_LABEL_KINDS)


def _by_content(
    statement: str, body: str, role: str | None, labelled: bool, completed: bool, alone: bool
) -> str | None:
    """The kind ``body`` (``statement`` without its label) has by what it says."""
    by_user = role != "assistant"
    sentence = _sentence_like(statement, labelled) and prose(body)
    restricts = _CONSTRAINT.search(body) or _ONLY.search(body)
    if restricts and (by_user or _STRONG.search(body)):
        return "constraint"
    if completed and not reports_error(body):
        if value_key(body) is not None:
            return "fact"
        return "decision" if DECISION.search(body) else None
    if TODO.search(body) and prose(body):  # "... open items ... elif_3f86 ..." is output
        return "todo"
    if reports_error(body):
        return "error"
    if sentence and _PREFERENCE.search(body):
        return "preference"
    if sentence and _GOAL.search(body):
        return "goal"
    if value_key(body) is not None:
        return "fact"
    if ERROR.search(body) or failure_state(body):
        return "error"
    plain = alone and prose(body) and not re.search(r"[\d_]", body)  # "use metric, not imperial"
    if by_user and (sentence or plain):
        if _PROHIBITION.match(body):
            return "constraint"
        imperative = _imperative(body)
        if imperative is not None:
            return imperative
    if sentence and by_user and named_value(body):  # the agent's narration names no values
        return "fact"
    if DECISION.search(body):
        return "decision"
    return None


def tool_errors(text: str) -> list[str]:
    """The first :data:`MAX_TOOL_ERRORS` error lines of one tool result (never constraints:
    tool output has no authority to instruct; its values are
    :func:`regio.summarizers.toolfacts.tool_facts`); a stack trace is one error line, its
    exception line and innermost frame (:func:`regio.summarizers.tracebacks.condense`)."""
    kept: list[str] = []
    for raw, trace in condense(text.splitlines(), 400):
        line = raw.strip()
        if len(kept) >= MAX_TOOL_ERRORS:
            break
        if line and len(line) <= 400 and (trace or TOOL_ERROR.search(line)):
            kept.append(line)
    return kept
