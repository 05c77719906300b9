"""Images and documents through the SDKs: request-side messages of the three APIs read into
blocks (SDK param dicts), and rendered media payloads accepted by the official clients."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from media_support import image_bytes, pdf, pdf_bytes, png
from regio.content import Document, Image, Message, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.media import Base64Source, MediaError, URLSource
from regio.sdk._objects import SDKInputError, message_of
from test_media_blocks import blueprint, screenshot_turn

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

PNG = base64.standard_b64encode(image_bytes(40, 30)).decode()
PDF = base64.standard_b64encode(pdf_bytes(2)).decode()


def test_anthropic_user_message_with_image_and_document_is_read():
    msg = message_of(
        {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                },
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
                    "title": "spec",
                },
                {"type": "image", "source": {"type": "url", "url": "https://x.invalid/a.jpg"}},
                {"type": "text", "text": "Compare them"},
            ],
        }
    )
    img, doc, url, text = msg.blocks
    assert isinstance(img, Image) and (img.width, img.height) == (40, 30)
    assert isinstance(doc, Document) and doc.pages == 2 and doc.title == "spec"
    assert isinstance(url, Image) and url.source == URLSource("https://x.invalid/a.jpg")
    assert text == Text("Compare them")


def test_anthropic_tool_result_with_screenshot_becomes_a_result_with_media():
    msg = message_of(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [
                        {"type": "text", "text": "screenshot taken"},
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                        },
                    ],
                }
            ],
        }
    )
    assert msg.role == "tool"
    (result,) = msg.blocks
    assert isinstance(result, ToolResult) and result.content == "screenshot taken"
    assert isinstance(result.media[0], Image)


def test_openai_chat_user_parts_with_data_urls_are_read():
    msg = message_of(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this"},
                {
                    "type": "image_url",
                    "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "low"},
                },
                {
                    "type": "file",
                    "file": {
                        "filename": "a.pdf",
                        "file_data": f"data:application/pdf;base64,{PDF}",
                    },
                },
            ],
        }
    )
    text, img, doc = msg.blocks
    assert text == Text("what is this")
    assert (
        isinstance(img, Image)
        and img.detail == "low"
        and img.source == Base64Source("image/png", PNG)
    )
    assert isinstance(doc, Document) and doc.pages == 2 and doc.title == "a.pdf"


def test_responses_items_with_media_are_read():
    user = message_of(
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "see"},
                {"type": "input_image", "image_url": "https://x.invalid/i.png", "detail": "high"},
                {"type": "input_file", "file_url": "https://x.invalid/p.pdf"},
            ],
        }
    )
    assert [type(b).__name__ for b in user.blocks] == ["Text", "Image", "Document"]
    out = message_of(
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": [
                {"type": "input_text", "text": "done"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
            ],
        }
    )
    assert out.role == "tool" and out.blocks[0].media[0].width == 40  # type: ignore[union-attr]


def test_sdk_param_objects_are_read_like_their_dicts():
    from openai.types.responses import EasyInputMessageParam

    param: EasyInputMessageParam = {"role": "user", "content": "plain"}
    assert message_of(param) == Message.user("plain")


def test_unreadable_parts_name_the_place_and_the_accepted_shapes():
    with pytest.raises(SDKInputError, match=r"content\[0\].*expected"):
        message_of({"role": "user", "content": [{"type": "audio", "data": "x"}]})
    with pytest.raises(SDKInputError, match="role"):
        message_of({"role": "robot", "content": "x"})
    with pytest.raises(MediaError, match="base64"):
        message_of(
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "!!"},
                    }
                ],
            }
        )


def test_messages_read_from_sdk_dicts_go_into_the_engine():
    engine = Engine.from_blueprint(blueprint())
    engine.add_message(message_of({"role": "user", "content": [{"type": "text", "text": "hi"}]}))
    engine.add_message(
        message_of(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "shot", "arguments": "{}"},
                    }
                ],
            }
        )
    )
    engine.add_message(message_of({"role": "tool", "tool_call_id": "c1", "content": "ok"}))
    kinds = [type(b).__name__ for e in engine.window.conversation.entries for b in e.blocks]
    assert kinds == ["Text", "ToolUse", "ToolResult"]
    assert engine.window.conversation.entries[1].blocks[0] == ToolUse("c1", "shot", {})


# --------------------------------------------------------------------------- SDK round trip

REPLIES = {
    "/messages": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    },
    "/responses": {
        "id": "r1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-5",
        "status": "completed",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    },
    "/chat/completions": {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-5",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    },
}


@pytest.fixture
def server():
    bodies: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            reply = next(v for k, v in REPLIES.items() if self.path.endswith(k))
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", bodies
    httpd.shutdown()
    httpd.server_close()


def _media_engine(provider: str, model: str) -> Engine:
    engine = Engine.from_blueprint(blueprint(provider, model))
    engine.add_message(Message.user("Look", media=(png(64, 48), pdf(1, "spec"))))
    screenshot_turn(engine, 1, png(32, 32))
    return engine


@pytest.mark.parametrize(
    ("provider", "model"),
    [("anthropic", "claude-sonnet-4-6"), ("openai", "gpt-5"), ("openai_responses", "gpt-5")],
)
def test_media_payloads_are_sent_by_the_official_clients_unchanged(server, provider, model):
    url, bodies = server
    _, payload = _media_engine(provider, model).request(provider)
    if provider == "anthropic":
        client = anthropic.Anthropic(api_key="k", base_url=url, max_retries=0)
        reply = client.messages.create(**payload)
        assert reply.content[0].text == "ok"
    elif provider == "openai":
        oc = openai.OpenAI(api_key="k", base_url=url, max_retries=0)
        assert oc.chat.completions.create(**payload).choices[0].message.content == "ok"
    else:
        oc = openai.OpenAI(api_key="k", base_url=url, max_retries=0)
        assert oc.responses.create(**payload).id == "r1"
    assert bodies[-1] == json.loads(json.dumps(payload))
