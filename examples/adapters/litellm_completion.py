"""LiteLLM: send regio's payload with litellm.completion (offline: a mock HTTP transport).

pip install 'regio[litellm]'
python examples/adapters/litellm_completion.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx
from openai import OpenAI

import regio
from regio.adapters import litellm as regio_litellm

BLUEPRINT = Path(__file__).resolve().parents[1] / "blueprints" / "coding-agent.yaml"

ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-5",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Done."}}
    ],
    "usage": {
        "prompt_tokens": 700,
        "completion_tokens": 2,
        "total_tokens": 702,
        "prompt_tokens_details": {"cached_tokens": 512},
    },
}


def main() -> tuple[regio.Engine, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    def server(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=ANSWER)

    client = OpenAI(
        api_key="sk-offline", http_client=httpx.Client(transport=httpx.MockTransport(server))
    )
    engine = regio.Engine.from_blueprint(BLUEPRINT, provider="openai", model="gpt-5")
    engine.add_user("Fix the failing test")
    reply = regio_litellm.completion(engine, model="openai/gpt-5", client=client)
    print("answer:", reply.choices[0].message.content)
    print(
        "sent", len(sent[0]["messages"]), "messages; cached", engine.ledger.last.cache_read_tokens
    )
    return engine, sent


if __name__ == "__main__":
    main()
