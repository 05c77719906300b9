"""Rich consoles for the command line.

When stdout is not a terminal (a pipe, a file, CI logs) rich falls back to 80 columns and folds
tables mid-word; regio's tables need about 110. :func:`stdout_console` gives them that width
off a terminal and the terminal's own width on one.
"""

from __future__ import annotations

import sys

from rich.console import Console

__all__ = ["PIPE_WIDTH", "stderr_console", "stdout_console"]

#: Columns used when stdout is not a terminal.
PIPE_WIDTH = 120


def stdout_console() -> Console:
    """A console on stdout: the terminal's width, or :data:`PIPE_WIDTH` columns off one."""
    return Console() if sys.stdout.isatty() else Console(width=PIPE_WIDTH)


def stderr_console() -> Console:
    """A console on stderr, for error messages."""
    return Console(stderr=True)
