"""Fixtures shared by several test modules."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from chat_server_support import serve_chat


@pytest.fixture
def chat_server() -> Iterator[Callable[[dict[str, Any]], str]]:
    """Start a loopback chat server answering every POST with the given JSON body and return
    its base URL (:func:`chat_server_support.serve_chat`); every server started is stopped
    after the test."""
    with ExitStack() as stack:
        yield lambda answer: stack.enter_context(serve_chat(answer))
