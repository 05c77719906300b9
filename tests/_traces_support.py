"""Where the shared real traces are: ``../shared/traces/raw`` from the project root.

Resolved, in order: ``$REGIO_SHARED_DIR`` (a ``shared`` folder), ``<project root>/../shared``,
and, for a git worktree (``.git`` is a file naming the main repository), ``../shared`` beside
the main checkout. Tests that need them skip with a reason when none exists.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def _main_checkout(root: Path) -> Path | None:
    dotgit = root / ".git"
    if not dotgit.is_file():
        return None
    text = dotgit.read_text(encoding="utf-8", errors="replace").strip()
    if not text.startswith("gitdir:"):
        return None
    gitdir = (root / text.split(":", 1)[1].strip()).resolve()
    common = gitdir / "commondir"
    if common.is_file():
        gitdir = (gitdir / common.read_text().strip()).resolve()
    return gitdir.parent


def shared_dir() -> Path | None:
    """The ``shared`` folder, or ``None`` when it is absent."""
    candidates = []
    if os.environ.get("REGIO_SHARED_DIR"):
        candidates.append(Path(os.environ["REGIO_SHARED_DIR"]))
    candidates.append(PROJECT_ROOT.parent / "shared")
    main = _main_checkout(PROJECT_ROOT)
    if main is not None:
        candidates.append(main.parent / "shared")
    return next((c for c in candidates if (c / "traces" / "raw").is_dir()), None)


def raw_traces_dir() -> Path:
    """``shared/traces/raw``; skips the calling test when it is absent."""
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared/traces/raw (beside the project root) is absent")
    return shared / "traces" / "raw"
