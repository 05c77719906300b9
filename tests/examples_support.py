"""A LangChain fake chat model for the adapter tests: answers from a list, keeps what it was
sent, binds tools to itself."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from pydantic import Field


class FakeChatModel(GenericFakeChatModel):
    """Answers from ``messages``; ``seen`` holds the messages of every call."""

    seen: list[Any] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeChatModel:
        return self

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)
