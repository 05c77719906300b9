"""``custom`` regions: Python hooks named by ``module:function``.

Constructor (keyword-only)::

    Custom(name=, budget=, render: str | None = None, on_write: str | None = None,
           on_overflow: str | None = None, allow_custom_hooks: bool = False, ...)

Hooks are imported only when ``allow_custom_hooks=True`` (the window / blueprint loader passes
its own flag); otherwise construction raises :class:`CustomHooksNotAllowedError`. Hook shapes:

* ``render(region) -> str``: replaces :meth:`Region.render_text`;
* ``on_write(region, entry) -> Entry | None``: may return a transformed entry (its token count
  is the entry's own, so re-make it with ``Window.make_entry``); ``None`` refuses the write;
* ``on_overflow(region, tokens_to_free) -> Iterable[str]``: entry ids the region should drop
  (it must not mutate the region). Used when a write does not fit and in window reclaim
  phase 1.5. Without it the region rolls off oldest units like ``temporary``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, ClassVar

import attrs

from regio.content import Entry
from regio.errors import CustomHooksNotAllowedError, RegionConfigError
from regio.regions.base import ReclaimPhase, Refusal, Region, WritePlan

__all__ = ["Custom", "load_hook"]


def load_hook(ref: str, *, region: str, hook: str) -> Callable[..., Any]:
    """Import ``module:function``. Raises :class:`RegionConfigError` naming the region/hook."""
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise RegionConfigError(f"region {region!r}: hook {hook}={ref!r} must be 'module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RegionConfigError(
            f"region {region!r}: cannot import module {module_name!r} for hook {hook}: {exc}"
        ) from exc
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise RegionConfigError(
                f"region {region!r}: module {module_name!r} has no {attr!r} (hook {hook})"
            )
        target = getattr(target, part)
    if not callable(target):
        raise RegionConfigError(f"region {region!r}: hook {hook}={ref!r} is not callable")
    return target


@attrs.define(eq=False, kw_only=True)
class Custom(Region):
    """A region whose behaviour is given by the author's hooks."""

    kind: ClassVar[str] = "custom"
    reclaim_phase: ClassVar[ReclaimPhase | None] = ReclaimPhase.HOOK
    agent_writable: ClassVar[bool] = True
    renders_itself: ClassVar[bool] = True

    render: str | None = None
    on_write: str | None = None
    on_overflow: str | None = None
    allow_custom_hooks: bool = False
    _hooks: dict[str, Callable[..., Any]] = attrs.field(factory=dict, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        named = {h: getattr(self, h) for h in ("render", "on_write", "on_overflow")}
        named = {h: ref for h, ref in named.items() if ref}
        if named and not self.allow_custom_hooks:
            refs = ", ".join(f"{h}={r!r}" for h, r in named.items())
            raise CustomHooksNotAllowedError(
                f"region {self.name!r} (custom) names Python hooks ({refs}) but custom hooks are "
                "not allowed: create the window / load the blueprint with "
                "allow_custom_hooks=True if you trust this code"
            )
        for hook, ref in named.items():
            self._hooks[hook] = load_hook(ref, region=self.name, hook=hook)

    def render_text(self) -> str:
        """The ``render`` hook's text, else the default heading + entries."""
        fn = self._hooks.get("render")
        return str(fn(self)) if fn else super().render_text()

    def overflow_ids(self, tokens_to_free: int) -> list[str]:
        """Entry ids the ``on_overflow`` hook asks to drop (only ids that exist)."""
        fn = self._hooks.get("on_overflow")
        if fn is None:
            return []
        known = {e.id for e in self.entries}
        return [i for i in fn(self, tokens_to_free) if i in known]

    @property
    def has_overflow_hook(self) -> bool:
        """True when an ``on_overflow`` hook is loaded."""
        return "on_overflow" in self._hooks

    def plan_write(self, entry: Entry) -> WritePlan | Refusal:
        """Run ``on_write`` first (it may transform or refuse), then plan as usual."""
        fn = self._hooks.get("on_write")
        if fn is not None:
            out = fn(self, entry)
            if out is None:
                return self.refusal(entry, "hook")
            if not isinstance(out, Entry):
                raise RegionConfigError(
                    f"region {self.name!r}: on_write hook returned {type(out).__name__}; "
                    "return an Entry or None"
                )
            entry = out
        return super().plan_write(entry)

    def _plan(self, entry: Entry) -> WritePlan | Refusal:
        if not self.has_overflow_hook or self.used_tokens + entry.tokens <= self.budget:
            return self.plan_rolloff(entry)
        if self.admission == "reject":
            return self.refusal(entry, "region_full")
        need = self.used_tokens + entry.tokens - self.budget
        ids = self.overflow_ids(need)
        freed = sum(e.tokens for e in self.entries if e.id in set(ids))
        if freed < need:
            return self.refusal(entry, "region_full")
        return WritePlan(entry, evict_ids=tuple(ids), evict_reason="hook")
