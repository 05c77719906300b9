"""Google ADK with what a real Gemini model sends, through ADK's own runner: function calls
without ids (ADK gives them ``adk-...`` ids, then strips those from every ``LlmRequest``), in
parallel and of different tools; images and documents in the user's message and in a tool's
response. What the model receives on every call is checked.

Before the fixes: the second model call raised ``SDKInputError: messages[2].content: 'id' is
missing`` into the agent's loop (the engine held a call with the id ``""``), and an image part
raised ``SDKInputError`` ("cannot read this part")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import regio
from adapter_drivers_support import from_genai
from adapter_harness_support import engine, request_problems
from media_support import image_bytes, pdf_bytes
from regio.content import Document, Image, ToolResult, ToolUse

pytest.importorskip("google.adk")

PNG = image_bytes(32, 24)
PDF = pdf_bytes(1)


def _read(path: str) -> str:
    return f"the text of {path}"


def _size(path: str) -> str:
    return f"{path} has {len(path) * 100} bytes"


#: The model's moves: parallel calls of two tools, then two calls of one tool, then an answer.
MOVES: list[list[tuple[str, str]]] = [
    [("read_file", "src/a.py"), ("file_size", "src/b.py")],
    [("read_file", "src/c.py"), ("read_file", "src/d.py")],
]
ANSWER = "a, b, c and d are read."


def _run(eng: regio.Engine, message: Any, moves: list[list[tuple[str, str]]]) -> list[Any]:
    """One ADK run over ``eng`` with a Gemini stand-in making ``moves`` without call ids;
    returns the requests it received."""
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from regio.adapters.google_adk import RegioCallbacks

    requests: list[Any] = []

    class Gemini(BaseLlm):
        model: str = "gemini-2.5-flash"

        async def generate_content_async(self, llm_request, stream=False):  # type: ignore[no-untyped-def]
            requests.append(llm_request.model_copy(deep=True))
            n = len(requests)
            if n > len(moves):
                parts = [types.Part(text=ANSWER)]
            else:
                parts = [
                    types.Part(function_call=types.FunctionCall(name=tool, args={"path": path}))
                    for tool, path in moves[n - 1]
                ]
            yield LlmResponse(content=types.Content(role="model", parts=parts))

    def read_file(path: str) -> str:
        """Read a file."""
        return _read(path)

    def file_size(path: str) -> str:
        """A file's size."""
        return _size(path)

    callbacks = RegioCallbacks(eng)
    agent = LlmAgent(
        name="gemini",
        model=Gemini(),
        instruction="You read files.",
        tools=[read_file, file_size],
        before_model_callback=callbacks.before_model,
        after_model_callback=callbacks.after_model,
    )
    runner = InMemoryRunner(agent=agent, app_name="gemini")

    async def run() -> None:
        session = await runner.session_service.create_session(app_name="gemini", user_id="u")
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass

    asyncio.run(run())
    return requests


def _user(*parts: Any) -> Any:
    from google.genai import types

    return types.Content(role="user", parts=list(parts))


def test_gemini_calls_without_ids_are_paired_by_order_and_name_and_sent_without_ids() -> None:
    from google.genai import types

    eng = engine()
    requests = _run(eng, _user(types.Part(text="Read a, b, c and d.")), MOVES)
    assert len(requests) == len(MOVES) + 1
    expected = {"read_file": _read, "file_size": _size}
    for n, request in enumerate(requests, 1):
        call = from_genai(list(request.contents), request.config.system_instruction)
        assert not request_problems(call), f"call {n}: {request_problems(call)[:2]}"
        for content in request.contents:
            for part in content.parts or []:
                sent = part.function_call or part.function_response
                assert sent is None or sent.id is None, f"call {n}: an id was sent: {sent.id}"
        args = {p.id: p.args["path"] for _, parts in call.messages for p in parts if p.args}
        names = {
            p.function_call.id or f"placed-{i}-{k}": p.function_call.name
            for i, c in enumerate(request.contents)
            for k, p in enumerate(c.parts or [])
            if p.function_call is not None
        }
        for _, parts in call.messages:
            for p in parts:
                if p.kind == "result":
                    assert p.text == expected[names[p.id]](args[p.id]), f"call {n}: {p.text}"
    calls = [
        b for r in eng.transcript() if r.entry for b in r.entry.blocks if isinstance(b, ToolUse)
    ]
    results = {
        b.tool_use_id: b.content
        for r in eng.transcript()
        if r.entry
        for b in r.entry.blocks
        if isinstance(b, ToolResult)
    }
    assert len(calls) == 4 and len({c.id for c in calls}) == 4 and all(c.id for c in calls)
    for c in calls:
        assert results[c.id] == expected[c.name](c.input["path"]), c


def test_the_users_image_and_document_reach_the_engine_and_come_back_to_gemini() -> None:
    from google.genai import types

    eng = engine()
    message = _user(
        types.Part(text="What are these?"),
        types.Part(inline_data=types.Blob(data=PNG, mime_type="image/png")),
        types.Part(inline_data=types.Blob(data=PDF, mime_type="application/pdf")),
        types.Part(file_data=types.FileData(file_uri="gs://bucket/b.png", mime_type="image/png")),
    )
    requests = _run(eng, message, [])
    media = [b for r in eng.transcript() if r.entry for b in r.entry.blocks]
    assert [type(b) for b in media if isinstance(b, Image | Document)] == [Image, Document, Image]
    (request,) = requests
    sent = [p for c in request.contents for p in c.parts or []]
    blobs = [p.inline_data for p in sent if p.inline_data is not None]
    assert [(b.mime_type, b.data) for b in blobs] == [("image/png", PNG), ("application/pdf", PDF)]
    files = [p.file_data.file_uri for p in sent if p.file_data is not None]
    assert files == ["gs://bucket/b.png"]


def test_a_function_responses_image_is_its_results_media() -> None:
    from google.adk.models.llm_request import LlmRequest
    from google.genai import types

    from regio.adapters.google_adk import RegioCallbacks

    eng = engine()
    callbacks = RegioCallbacks(eng)
    call = types.FunctionCall(id="c1", name="screenshot", args={})
    blob = types.FunctionResponseBlob(data=PNG, mime_type="image/png")
    answer = types.FunctionResponse(
        id="c1",
        name="screenshot",
        response={"result": "the screen"},
        parts=[types.FunctionResponsePart(inline_data=blob)],
    )
    request = LlmRequest(
        contents=[
            _user(types.Part(text="Look at the screen.")),
            types.Content(role="model", parts=[types.Part(function_call=call)]),
            _user(types.Part(function_response=answer)),
        ],
        config=types.GenerateContentConfig(),
    )
    callbacks.before_model(None, request)
    (result,) = [
        b for r in eng.transcript() if r.entry for b in r.entry.blocks if isinstance(b, ToolResult)
    ]
    assert result.content == "the screen" and [type(m) for m in result.media] == [Image]
    # the model gets it in the user turn after the response, where not every Gemini model
    # reads media inside a function response
    (turn,) = [c for c in request.contents if any(p.function_response for p in c.parts or [])]
    kinds = [
        "response" if p.function_response else "image" if p.inline_data else "text"
        for p in turn.parts or []
    ]
    assert kinds[0] == "response" and "image" in kinds
    assert [p.inline_data.data for p in turn.parts or [] if p.inline_data] == [PNG]


def test_an_audio_part_is_refused_naming_its_place() -> None:
    from google.adk.models.llm_request import LlmRequest
    from google.genai import types

    from regio.adapters.google_adk import RegioCallbacks
    from regio.sdk._objects import SDKInputError

    audio = types.Part(inline_data=types.Blob(data=b"RIFF....", mime_type="audio/wav"))
    request = LlmRequest(
        contents=[_user(types.Part(text="Listen."), audio)], config=types.GenerateContentConfig()
    )
    with pytest.raises(SDKInputError, match=r"contents\[0\]\.parts\[1\].*audio/wav"):
        RegioCallbacks(engine()).before_model(None, request)
