"""A package's public names, imported from their modules on first use (PEP 562).

A package face built with :func:`lazy_exports` imports nothing when the package is imported,
so importing one of its modules (``regio.compaction._cuts``) never runs the rest of the
package first, and ``import regio.engine`` stays cheap. ``exports`` maps each public name to
the module that defines it, relative to the package (``"._engine"``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of package ``package`` (its ``__name__``), whose
    globals are ``namespace``. An unknown name raises :class:`AttributeError`."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
