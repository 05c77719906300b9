"""Provider cache rules as dated data.

A rules file is YAML (``schema: regio.cache-rules/1``) with a list of ``rules``. Each rule is
keyed by ``provider`` + ``platform`` + ``model_family`` (fnmatch globs) + ``as_of`` (the date of
the doc copy: ``YYYY-MM-DD`` | ``YYYY-MM`` | ``YYYY-Hn`` | ``YYYY``, compared by period start).
``extends: <id>`` copies another rule, then overrides its top-level keys. The package ships
``regio/data/cache-rules.yaml``; :func:`load_rules` reads it or a user's own file.

Selection (:meth:`RuleSet.resolve`): among rules matching provider, platform (any when
``None``) and model, keep those with ``as_of <= sim_date`` (all when ``sim_date`` is ``None``);
the latest ``as_of`` wins; ties by status ``official > secondary >
newest_doc_not_cross_checked > unconfirmed > conflicting``, then by the most specific glob
(longest pattern) [D], then the later rule in the file.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import functools
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import cattrs
import yaml

from regio.cache.types import CacheRuleError
from regio.cache.walk import LOOKBACK_POSITIONS

__all__ = [
    "SCHEMA",
    "STATUS_RANK",
    "Lookback",
    "Price",
    "Rule",
    "RuleSet",
    "default_rules",
    "load_rules",
    "parse_period",
    "resolve",
]

SCHEMA = "regio.cache-rules/1"

#: Tie-break order for rules with the same ``as_of`` (higher wins).
STATUS_RANK: dict[str, int] = {
    "official": 5,
    "secondary": 4,
    "newest_doc_not_cross_checked": 3,
    "unconfirmed": 2,
    "conflicting": 1,
}

_PERIOD = re.compile(r"^(\d{4})(?:-(?:(\d{2})(?:-(\d{2}))?|H([12])))?$")


def parse_period(value: str) -> _dt.date:
    """Start of the period ``YYYY-MM-DD`` | ``YYYY-MM`` | ``YYYY-Hn`` | ``YYYY`` as a date.

    Raises ``ValueError`` for anything else (e.g. an unquoted YAML date turned into a
    ``datetime.date`` is accepted by callers after ``str()``).
    """
    m = _PERIOD.match(str(value).strip())
    if not m:
        raise ValueError(
            f"bad date {value!r}: use YYYY-MM-DD, YYYY-MM, YYYY-H1/YYYY-H2 or YYYY (quoted)"
        )
    year, month, day, half = m.groups()
    if half:
        return _dt.date(int(year), 1 if half == "1" else 7, 1)
    return _dt.date(int(year), int(month or 1), int(day or 1))


@attrs.frozen
class Price:
    """Base prices in USD per million tokens; ``None`` = not recorded."""

    input: float | None = None
    output: float | None = None


@attrs.frozen
class Lookback:
    """Anthropic read lookback: ``positions`` probed per breakpoint (the breakpoint is #1) and
    block kinds whose consecutive runs collapse into one position."""

    positions: int = LOOKBACK_POSITIONS
    collapse_runs: tuple[str, ...] = ()


@attrs.frozen
class Rule:
    """One resolved cache rule (after ``extends``). Mechanism-specific keys live in ``extra``;
    :meth:`param` reads them with the rule's ``sim`` default for undocumented (``null``) values.
    """

    id: str
    provider: str
    model_family: tuple[str, ...]
    as_of: str
    status: str
    mechanism: str
    platform: str | None = None
    min_tokens: int | None = None
    max_breakpoints: int | None = None
    automatic_mode: bool = False
    lookback: Lookback | None = None
    ttl_s: Any = None
    price: Price = Price()
    mult: dict[str, float] = attrs.field(factory=dict)
    render_level: dict[str, str] = attrs.field(factory=dict)
    scope: tuple[str, ...] = ()
    conflict: str | None = None
    note: str | None = None
    sim: dict[str, Any] = attrs.field(factory=dict)
    extra: dict[str, Any] = attrs.field(factory=dict)
    order: int = 0

    @property
    def as_of_date(self) -> _dt.date:
        """Start of the ``as_of`` period."""
        return parse_period(self.as_of)

    def param(self, key: str, default: object = None) -> Any:
        """Value of ``key`` (typed field or extra); a ``null`` falls back to ``sim[key]``, then
        ``default``."""
        value = getattr(self, key) if key in _TYPED else self.extra.get(key)
        if value is None:
            value = self.sim.get(key, default)
        return value

    def m(self, kind: str, default: float = 1.0) -> float:
        """Price multiplier ``mult[kind]`` (x base input), ``default`` when absent."""
        return float(self.mult.get(kind, default))

    def matches(self, provider: str, model: str, platform: str | None) -> bool:
        """True when provider, platform (``None`` = any) and a model_family glob match."""
        if self.provider != provider:
            return False
        if platform is not None and self.platform is not None and self.platform != platform:
            return False
        return any(fnmatch.fnmatchcase(model, g) for g in self.model_family)

    def specificity(self, model: str) -> int:
        """Length of the longest matching glob (more literal characters = more specific)."""
        return max(
            (len(g.replace("*", "")) for g in self.model_family if fnmatch.fnmatchcase(model, g)),
            default=-1,
        )


_TYPED = {f.name for f in attrs.fields(Rule)} - {"extra", "order"}
_REQUIRED = ("provider", "model_family", "as_of", "status", "mechanism")
_converter = cattrs.Converter()


@attrs.frozen
class RuleSet:
    """All rules of one file, in file order, plus the file they came from."""

    rules: tuple[Rule, ...]
    source: str = "<package>"

    def by_id(self, rule_id: str) -> Rule:
        """The rule with this id (``KeyError`` naming the known ids)."""
        for r in self.rules:
            if r.id == rule_id:
                return r
        raise KeyError(f"no cache rule {rule_id!r} in {self.source}; known: {self.ids()}")

    def ids(self) -> list[str]:
        """Rule ids in file order."""
        return [r.id for r in self.rules]

    def resolve(
        self,
        provider: str,
        model: str,
        platform: str | None = None,
        sim_date: str | None = None,
        mechanism: str | None = None,
    ) -> Rule:
        """Pick the rule for (provider, model, platform, sim_date)

        ``mechanism`` optionally restricts the choice (e.g. ``explicit_object`` for Gemini
        explicit caches). Raises :class:`CacheRuleError` when nothing matches.
        """
        limit = parse_period(sim_date) if sim_date is not None else None
        cands = [
            r
            for r in self.rules
            if r.matches(provider, model, platform)
            and (mechanism is None or r.mechanism == mechanism)
            and (limit is None or r.as_of_date <= limit)
        ]
        if not cands:
            fams = sorted({g for r in self.rules if r.provider == provider for g in r.model_family})
            raise CacheRuleError(
                f"no cache rule for provider={provider!r} model={model!r} platform={platform!r}"
                f" sim_date={sim_date!r} mechanism={mechanism!r} in {self.source}; "
                f"model families known for {provider!r}: {fams or 'none'}; "
                "add a rule to your rules file or pick another model/date"
            )
        return max(
            cands,
            key=lambda r: (
                r.as_of_date,
                STATUS_RANK.get(r.status, 0),
                r.specificity(model),
                r.order,
            ),
        )


def _err(rule_id: str, key: str, msg: str, source: str) -> CacheRuleError:
    return CacheRuleError(f"{source}: rule {rule_id!r}, key {key!r}: {msg}")


def _num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _validate(rid: str, d: Mapping[str, Any], source: str) -> None:
    for key in _REQUIRED:
        if d.get(key) in (None, "", []):
            raise _err(rid, key, "missing (required, directly or through extends)", source)
    for key in ("provider", "mechanism", "status"):
        if not isinstance(d[key], str):
            raise _err(rid, key, f"must be a string, got {d[key]!r}", source)
    if d["status"] not in STATUS_RANK:
        raise _err(
            rid, "status", f"unknown {d['status']!r}; use one of {list(STATUS_RANK)}", source
        )
    fam = d["model_family"]
    if not isinstance(fam, list) or not all(isinstance(g, str) for g in fam):
        raise _err(rid, "model_family", "must be a list of glob strings", source)
    try:
        parse_period(str(d["as_of"]))
    except ValueError as e:
        raise _err(rid, "as_of", str(e), source) from None
    for key in ("min_tokens", "max_breakpoints"):
        v = d.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise _err(rid, key, f"must be a non-negative integer or null, got {v!r}", source)
    price = d.get("price", {})
    if not isinstance(price, dict):
        raise _err(rid, "price", "must be a mapping {input: USD/MTok, output: USD/MTok}", source)
    for k, v in price.items():
        if k not in ("input", "output") or (v is not None and not _num(v)):
            raise _err(
                rid, f"price.{k}", f"must be input/output with a number or null: {v!r}", source
            )
    mult = d.get("mult", {})
    if not isinstance(mult, dict) or not all(_num(v) for v in mult.values()):
        raise _err(rid, "mult", f"must map kinds to numbers, got {mult!r}", source)
    for key in ("render_level", "sim"):
        if not isinstance(d.get(key, {}), dict):
            raise _err(rid, key, "must be a mapping", source)
    lb = d.get("lookback")
    if lb is not None and (
        not isinstance(lb, dict) or not isinstance(lb.get("positions", LOOKBACK_POSITIONS), int)
    ):
        raise _err(rid, "lookback", "must be {positions: int, collapse_runs: [kinds]}", source)


def _build(d: Mapping[str, Any], order: int) -> Rule:
    typed = {k: v for k, v in d.items() if k in _TYPED and k != "extends"}
    extra = {k: v for k, v in d.items() if k not in _TYPED and k != "extends"}
    typed["as_of"] = str(typed["as_of"])
    typed["model_family"] = tuple(typed["model_family"])
    typed["scope"] = tuple(typed.get("scope") or ())
    typed["price"] = typed.get("price") or {}
    typed["mult"] = {k: float(v) for k, v in (typed.get("mult") or {}).items()}
    if typed.get("lookback") is not None:
        lb = dict(typed["lookback"])
        lb["collapse_runs"] = tuple(lb.get("collapse_runs") or ())
        typed["lookback"] = lb
    typed["extra"] = extra
    typed["order"] = order
    return _converter.structure(typed, Rule)


def _parse(doc: object, source: str) -> RuleSet:
    if not isinstance(doc, dict):
        raise CacheRuleError(f"{source}: top level must be a mapping with 'schema' and 'rules'")
    if doc.get("schema") != SCHEMA:
        raise CacheRuleError(
            f"{source}: key 'schema' must be {SCHEMA!r}, got {doc.get('schema')!r}"
        )
    raw = doc.get("rules")
    if not isinstance(raw, list) or not raw:
        raise CacheRuleError(f"{source}: key 'rules' must be a non-empty list")
    by_id: dict[str, dict[str, Any]] = {}
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise CacheRuleError(f"{source}: rules[{i}] must be a mapping with a string 'id'")
        if item["id"] in by_id:
            raise CacheRuleError(f"{source}: rule {item['id']!r}, key 'id': duplicate id")
        by_id[item["id"]] = item

    resolved: dict[str, dict[str, Any]] = {}

    def expand(rid: str, seen: tuple[str, ...]) -> dict[str, Any]:
        if rid in resolved:
            return resolved[rid]
        item = by_id[rid]
        base: dict[str, Any] = {}
        parent = item.get("extends")
        if parent is not None:
            if parent not in by_id:
                raise _err(rid, "extends", f"unknown rule {parent!r}", source)
            if parent in seen:
                raise _err(rid, "extends", f"cycle {' -> '.join((*seen, parent))}", source)
            base = {
                k: v for k, v in expand(parent, (*seen, rid)).items() if k not in ("id", "conflict")
            }
        merged = {**base, **item}
        resolved[rid] = merged
        return merged

    rules = []
    for order, rid in enumerate(by_id):
        merged = expand(rid, (rid,))
        _validate(rid, merged, source)
        try:
            rules.append(_build(merged, order))
        except (cattrs.BaseValidationError, TypeError, ValueError) as e:
            raise _err(rid, "?", f"cannot build rule: {e}", source) from None
    return RuleSet(tuple(rules), source)


def load_rules(path: str | Path | None = None) -> RuleSet:
    """Load a rules file with ``yaml.safe_load`` and validate it.

    ``path=None`` loads the packaged ``regio/data/cache-rules.yaml``. Raises
    :class:`CacheRuleError` naming the file, rule id and key on any schema problem, and
    ``FileNotFoundError`` for a missing file.
    """
    if path is None:
        return default_rules()
    p = Path(path)
    with p.open(encoding="utf-8") as fh:
        try:
            doc = yaml.safe_load(fh)
        except yaml.YAMLError as e:
            raise CacheRuleError(f"{p}: not valid YAML: {e}") from None
    return _parse(doc, str(p))


@functools.lru_cache(maxsize=1)
def default_rules() -> RuleSet:
    """The packaged rules (loaded once)."""
    text = resources.files("regio").joinpath("data/cache-rules.yaml").read_text("utf-8")
    return _parse(yaml.safe_load(text), "regio/data/cache-rules.yaml")


def resolve(
    provider: str,
    model: str,
    platform: str | None = None,
    sim_date: str | None = None,
    *,
    mechanism: str | None = None,
    rules: RuleSet | None = None,
) -> Rule:
    """Module-level :meth:`RuleSet.resolve` over ``rules`` (default: the packaged file)."""
    return (rules or default_rules()).resolve(provider, model, platform, sim_date, mechanism)
