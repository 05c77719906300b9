"""Fixtures shared by several test modules."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from hypothesis import settings

from chat_server_support import serve_chat

# No per-example deadline: a property's examples are judged on what they check, never on how
# long one took (a loaded CI machine made a 200 ms deadline fail a passing property). Speed
# targets live in benchmarks/.
settings.register_profile("regio", deadline=None)
settings.load_profile("regio")


@pytest.fixture
def chat_server() -> Iterator[Callable[[dict[str, Any]], str]]:
    """Start a loopback chat server answering every POST with the given JSON body and return
    its base URL (:func:`chat_server_support.serve_chat`); every server started is stopped
    after the test."""
    with ExitStack() as stack:
        yield lambda answer: stack.enter_context(serve_chat(answer))


@pytest.fixture(autouse=True)
def _narrow_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test's command line runs at 80 columns (``$COLUMNS``, which the consoles follow:
    :mod:`regio.console`), whatever the terminal pytest runs in; a test that needs another
    width sets its own."""
    monkeypatch.setenv("COLUMNS", "80")
