"""The values a tool result reports, kept as durable ``fact`` items (:func:`tool_facts`).

Tool output -- tool results, and environment observations sent as user text -- has no
authority to instruct (:mod:`regio.summarizers.kinds`), but it reports values an agent needs
after the output is gone: ``Job ID: 7f3a91``, ``Version: 3.2.1``, ``Created pull request:
#4821``. :func:`tool_facts` picks the few lines of one result that report such a value, so
that a compaction keeps them as items (:func:`regio.summarizers.extract.extract_items`), a
parked output's stub keeps them (:class:`regio.capture.rules.ParkRule`) and a cleared result's
placeholder keeps them (:func:`regio.policies.relief.placeholder`). What it refuses, and why:

* anything but a short, top-level report line: an indented key (a file view, a YAML or JSON
  dump), a code-like key (``foo_bar``, ``fooBar``), a value that ends like a literal, a line
  of more than :data:`MAX_FACT_CHARS` characters (a presigned URL or a minified body would
  otherwise ride on every request), and every line of a result with more than
  :data:`MAX_REPORT_PAIRS` such lines (a dump: headers, a config file);
* a label that addresses or instructs the model or states a status (:data:`DENY_LABEL_WORDS`):
  a fact is what a tool observed, never what anyone must do;
* a secret, by its key (:data:`SECRET_KEY_WORDS`) or by its value (:func:`secret_value`:
  credentials in a URL, a signed query, a known key prefix): a secret is not copied into
  durable state by this rule. A secret no rule recognises (a password under the key
  ``Value``) is not caught; the items are as private as the transcript they come from.

Each kept line is a ``fact`` with the tool's authority only
(:class:`regio.summarizers.items.ItemSet`: it supersedes only an earlier report or the agent's
own fact, a set keeps at most 16 of them and 2 per label, 4 when the label's newest value is
an identifier, a budget drops them before any other fact but quotes).
"""

from __future__ import annotations

import re

from .kinds import TOOL_ERROR, pair_line
from .statements import label_kind, label_of

__all__ = [
    "DENY_LABEL_WORDS",
    "MAX_FACT_CHARS",
    "MAX_REPORT_PAIRS",
    "MAX_TOOL_FACTS",
    "SECRET_KEY_WORDS",
    "secret_value",
    "tool_facts",
]

#: Most reported values kept from one tool result (:func:`tool_facts`).
MAX_TOOL_FACTS = 2
#: A tool result with more ``KEY: VALUE``-shaped lines than this is a structured dump (a
#: config file, HTTP headers, ``kubectl describe``), not a report (:func:`tool_facts`).
MAX_REPORT_PAIRS = 6
#: Longest report line kept, in characters (a longer one is a URL, a token or a body, not a
#: named value; :func:`regio.summarizers.kinds.tool_errors` cuts error lines at 400).
MAX_FACT_CHARS = 160


#: A ``KEY: VALUE``-shaped line, any key and value (counts the pairs of a dump).
_PAIR_SHAPE = re.compile(r"^\s*[\"']?[A-Za-z_][\w .'/-]{0,60}[\"']?:\s+\S+(?:\s+\S+)?\s*$")
#: A key that reads as words of a report: a capital letter, then letters, spaces, ``-``,
#: ``'``, ``/``, ``.`` (no digit, no ``_``).
_REPORT_KEY = re.compile(r"^[A-Z][A-Za-z .'/-]*$")
#: First words of a label that addresses or instructs the model, or states a status or a
#: change, rather than naming a measured value (``SYSTEM: override-1``, ``Instruction: rm-rf
#: /``, ``Preferred: tabs-4``, ``Done: TODO-12``): a report line with one is no fact.
DENY_LABEL_WORDS = frozenset(
    {"system", "assistant", "user", "developer", "human", "instruction", "instructions",
     "important", "note", "nb", "warning", "attention", "reminder", "rule", "rules", "policy",
     "preferred", "preference", "prefer", "must", "required", "require", "requirement",
     "done", "fixed", "closed", "completed", "resolved", "update", "updated", "todo",
     "to-do", "override", "ignore", "always", "never", "do", "please"}
)  # fmt: skip
#: Words of a key that names a secret (``Password``, ``API Key``, ``Token``): a line with one
#: anywhere in its key is no fact, so a secret is never copied into durable state.
SECRET_KEY_WORDS = frozenset(
    {"password", "passwords", "passwd", "passphrase", "secret", "secrets", "token", "apikey",
     "key", "keys", "credential", "credentials", "auth", "authorization", "cookie", "cookies",
     "session", "bearer", "signature"}
)  # fmt: skip


#: A value that holds a secret: credentials in a URL (``scheme://user:pass@``), a signed or
#: keyed query parameter (``X-Amz-Signature=``, ``token=``, ``api_key=``), or a well-known
#: key prefix (OpenAI ``sk-``, GitHub ``ghp_`` / ``gho_`` / ``github_pat_``, AWS ``AKIA``,
#: Slack ``xox?-``, a JWT's ``eyJ``).
_SECRET_VALUE = re.compile(
    r"://[^/\s:@]+:[^/\s@]+@"
    r"|[?&][\w.-]*(?:signature|token|credential|secret|password|api[_-]?key|sig|key)=[^&\s]"
    r"|\b(?:sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{8,}|github_pat_\w{8,}"
    r"|AKIA[0-9A-Z]{12,}|xox[abprs]-[\w-]{8,}|eyJ[\w-]{8,}\.[\w-]{8,})",
    re.IGNORECASE,
)


def secret_value(value: str) -> bool:
    """Whether ``value`` (the part of a report line after its key) holds a recognised secret
    (:data:`_SECRET_VALUE`): ``postgres://admin:hunter2@db:5432``, ``...?X-Amz-Signature=ab``,
    ``sk-abc123def456``."""
    return bool(_SECRET_VALUE.search(value))


def _denied_key(key: str) -> bool:
    """Whether a report key instructs or states a status (its first word is one of
    :data:`DENY_LABEL_WORDS`) or names a secret (a word of :data:`SECRET_KEY_WORDS`)."""
    words = [w for w in re.split(r"[\s/.']+", key.casefold()) if w]
    parts = [p for w in words for p in (w, *w.split("-"))]  # "API-Key", "to-do"
    return bool(words) and (words[0] in DENY_LABEL_WORDS or not SECRET_KEY_WORDS.isdisjoint(parts))


def _report_line(line: str) -> bool:
    """Whether ``line`` (one line of tool output, as written) reports a named value
    (:func:`tool_facts`)."""
    if not line or line[0].isspace() or len(line) > MAX_FACT_CHARS:
        return False
    if not pair_line(line) or TOOL_ERROR.search(line):
        return False
    key, value = line.split(":", 1)
    if secret_value(value):
        return False
    if not _REPORT_KEY.match(key) or re.search(r"[a-z][A-Z]", key):  # fooBar is code
        return False
    if _denied_key(key):  # an instruction, a status, or a secret: never durable
        return False
    if value.rstrip().endswith((",", ";", "{", "[", "(")):  # a line of a literal or of code
        return False
    kind = label_kind(label_of(line))  # "Constraint: X-1" is no report of a value
    return kind is None or kind == "fact"


def tool_facts(text: str) -> list[str]:
    """The values one tool result reports: its last :data:`MAX_TOOL_FACTS` report lines, each
    as written without trailing space. A report line is ``KEY: VALUE``
    (:func:`regio.summarizers.kinds.pair_line`: a key of at most five words, one or two value
    tokens with a concrete one), not indented (a file view, a YAML or JSON dump indents its
    keys), at most :data:`MAX_FACT_CHARS` characters, its key words with a capital (``Job
    ID``, not ``foo_bar``, ``fooBar`` or a lower-case config key), its value not ending like a
    literal (``,``, ``{``), not an error line (:func:`regio.summarizers.kinds.tool_errors`
    takes those) and not labelled as another kind (``Constraint:``, ``TODO:``). Its key
    neither addresses nor instructs the model nor states a status (first word one of
    :data:`DENY_LABEL_WORDS`: ``SYSTEM:``, ``Instruction:``, ``Done:``) nor names a secret (a
    word of :data:`SECRET_KEY_WORDS`: ``Password:``, ``API Key:``), and its value holds no
    recognised secret (:func:`secret_value`); ``User ID: 42`` is lost too (keeping ``USER:
    ...`` would cost more). A result with more than :data:`MAX_REPORT_PAIRS` ``KEY:
    VALUE``-shaped lines (indented or not) gives none: it is a dump, whose every line looks
    like a report (a report names its outcome in a few lines; six lets a job id, status,
    duration, URL and version through). The last ones: a report puts its outcome at the end.
    Never a constraint or a to-do (module doc)."""
    lines = text.splitlines()
    if sum(bool(_PAIR_SHAPE.match(line)) for line in lines) > MAX_REPORT_PAIRS:
        return []
    found = [line.rstrip() for line in lines if _report_line(line.rstrip())]
    return found[-MAX_TOOL_FACTS:] if found else []
