"""Side files an importer reads beside a trace (``LICENSE*``, ``PROVENANCE.md``), read only
when they are what they claim to be.

The licence and provenance notes of an imported trace are copied into every trace written from
it, so a side file is read only if it is a **regular file** (a FIFO would block the import, a
device never ends), **small** (at most :data:`MAX_SIDE_FILE_BYTES`) and **inside the folder it
was found in** after resolving symlinks (a ``LICENSE`` symlink to ``~/.ssh/id_ed25519`` would
copy a secret into every trace). Anything else is skipped with a :class:`SideFileWarning`
naming the file and the reason; the import goes on without that note. The file is opened
without blocking and checked with ``fstat`` after opening, so a file swapped for a FIFO
between the check and the read cannot hang the import either.
"""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path

__all__ = ["MAX_SIDE_FILE_BYTES", "SideFileWarning", "side_file_text"]

#: Largest side file read (bytes): licences are a few KiB (Apache-2.0 is 11 KiB) and the
#: bundled PROVENANCE.md is under 4 KiB.
MAX_SIDE_FILE_BYTES = 64 * 1024


class SideFileWarning(UserWarning):
    """A side file beside a trace was skipped (the message names it and says why)."""


def _skip(path: Path, why: str) -> None:
    warnings.warn(f"{path}: not read ({why})", SideFileWarning, stacklevel=3)


def side_file_text(path: Path, max_bytes: int = MAX_SIDE_FILE_BYTES) -> str | None:
    """The text of side file ``path`` (UTF-8, undecodable bytes replaced), or ``None`` with a
    :class:`SideFileWarning` when it is not a regular file of at most ``max_bytes`` bytes
    inside its own folder (module doc). A missing file is ``None`` without a warning."""
    folder = path.parent.resolve()
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):  # missing, or a symlink loop
        if path.is_symlink():
            _skip(path, "a dangling or looping symlink")
        return None
    if not target.is_relative_to(folder):
        _skip(path, f"a symlink to {target}, outside the trace's folder {folder}")
        return None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        _skip(path, f"cannot open it: {exc.strerror}")
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            _skip(path, "not a regular file (a FIFO, socket, device or folder)")
            return None
        if info.st_size > max_bytes:
            _skip(path, f"{info.st_size:,} bytes, over the {max_bytes:,}-byte limit")
            return None
        data = b""
        while len(data) <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except OSError as exc:
        _skip(path, f"cannot read it: {exc.strerror}")
        return None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew after fstat
        _skip(path, f"over the {max_bytes:,}-byte limit")
        return None
    return data.decode("utf-8", "replace")
