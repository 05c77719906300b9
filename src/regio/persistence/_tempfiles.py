"""The temporary files of an atomic state-file save
(:func:`regio.persistence._statefile.save_engine`).

A save writes ``.<target name>.<pid>.<random>.regio-tmp`` in the target's directory, fsyncs
it and renames it over the target. A process killed during a save cannot remove its own
temporary; :func:`remove_stale_temporaries` removes every temporary of a process that no
longer runs (and temporaries of older regio versions, ``.<name>.*.tmp``, an hour after they
were written). Temporaries are never read.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["TEMP_SUFFIX", "fsync_dir", "remove_stale_temporaries", "stale_temporaries"]

#: Ending of the temporary files a save writes (module doc).
TEMP_SUFFIX = ".regio-tmp"
_LEGACY_TEMP_AGE = 3600.0  # seconds before an old-style ``.<name>.*.tmp`` counts as stale


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's) or unknown: keep its file
    return True


def _is_stale(path: Path, prefix: str, now: float) -> bool:
    name = path.name
    if name.endswith(TEMP_SUFFIX):
        pid_text = name[len(prefix) :].split(".", 1)[0]
        if not pid_text.isdigit():
            return False
        pid = int(pid_text)
        return pid != os.getpid() and not _pid_alive(pid)
    if name.endswith(".tmp"):  # written by regio before temporaries carried a pid
        try:
            return now - path.stat().st_mtime > _LEGACY_TEMP_AGE
        except OSError:
            return False
    return False


def stale_temporaries(target: str | os.PathLike[str]) -> list[Path]:
    """Temporaries of dead saves next to ``target`` (and old-style ones over an hour old)."""
    target = Path(target)
    prefix = f".{target.name}."
    try:
        candidates = [p for p in target.parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return []
    now = time.time()
    return sorted(p for p in candidates if _is_stale(p, prefix, now))


def remove_stale_temporaries(target: str | os.PathLike[str]) -> int:
    """Delete :func:`stale_temporaries` of ``target``; returns how many were removed."""
    removed = 0
    for path in stale_temporaries(target):
        try:
            path.unlink()
            removed += 1
        except OSError:
            pass  # gone already, or not ours to delete: it is never read either way
    return removed


def fsync_dir(directory: Path) -> None:
    """fsync ``directory`` (so a rename in it is durable); errors are ignored."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
