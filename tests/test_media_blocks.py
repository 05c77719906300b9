"""Image and document blocks: made from real bytes, counted by each provider's documented rule,
rendered for Anthropic / OpenAI Chat / Responses, kept in their turn group, saved and loaded,
and never handed to a summarizer as bytes."""

from __future__ import annotations

import base64

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from media_support import FORMATS, image_bytes, pdf, png
from regio.content import (
    Block,
    Document,
    Entry,
    Image,
    Message,
    Text,
    ToolResult,
    ToolUse,
    block_text,
)
from regio.engine import Engine
from regio.layout import check_anthropic, check_openai_chat
from regio.media import Base64Source, MediaError, TextSource, URLSource, describe
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.summarizers._llm import entries_as_transcript
from regio.tokens import counter_for_model, get_counter
from regio.tokens.media import (
    ANTHROPIC_UNKNOWN_IMAGE_TOKENS,
    PDF_TOKENS_PER_PAGE,
    UNKNOWN_PDF_PAGES,
    anthropic_image_tokens,
    openai_image_tokens,
)
from regio.turngroups import group_entries

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def blueprint(provider: str = "anthropic", model: str = "claude-sonnet-4-6", window: int = 200_000):
    return (
        "version: 1\nname: media\n"
        f"model: {{provider: {provider}, name: {model}, context_window: {window}, "
        "max_output_tokens: 1000}\n"
        "tokenizer: heuristic\n"
        "regions:\n"
        '  - {name: system, kind: pinned, volatility: stable, budget: 1000, seed: "Be careful."}\n'
        f"  - {{name: conversation, kind: sliding_window, budget: {window - 4000}}}\n"
    )


def screenshot_turn(engine: Engine, n: int, image: Image | Document) -> None:
    engine.add_user(f"step {n}: take a screenshot")
    engine.add_assistant("Taking it.", [ToolUse(f"call_{n}", "screenshot", {"n": n})])
    engine.add_message(Message.tool((ToolResult(f"call_{n}", f"shot {n}", media=(image,)),)))


# --------------------------------------------------------------------------- content model


@pytest.mark.parametrize("media_type", sorted(FORMATS))
def test_image_size_is_read_from_the_base64_bytes(media_type):
    img = Image.from_bytes(image_bytes(321, 123, media_type), media_type)
    assert (img.width, img.height) == (321, 123)


def test_mislabelled_image_is_refused_naming_the_real_type():
    data = base64.standard_b64encode(image_bytes(10, 10, "image/png")).decode()
    with pytest.raises(MediaError, match="image/png"):
        Image(Base64Source("image/jpeg", data))


def test_image_data_that_is_not_base64_is_refused_with_the_fix():
    with pytest.raises(MediaError, match="base64"):
        Image(Base64Source("image/png", "not base64 at all!"))


def test_unknown_media_types_are_refused_naming_the_accepted_ones():
    with pytest.raises(MediaError, match="image/png"):
        Image(URLSource("https://example.com/a.tiff", "image/tiff"))
    with pytest.raises(MediaError, match="application/pdf"):
        Document(Base64Source("application/msword", "AAAA"))


def test_pdf_page_count_is_read_from_the_pdf():
    assert pdf(7).pages == 7


def test_unreadable_pdf_is_refused():
    bad = base64.standard_b64encode(b"%PDF-1.4 nonsense").decode()
    with pytest.raises(MediaError, match="PDF"):
        Document(Base64Source("application/pdf", bad))


def test_url_sources_keep_unknown_size_and_are_never_fetched():
    img = Image.from_url("https://example.invalid/cat.png")
    doc = Document(URLSource("https://example.invalid/paper.pdf"))
    assert (img.width, img.height, doc.pages) == (None, None, None)
    assert "size unknown" in block_text(img) and "pages unknown" in block_text(doc)


def test_description_names_type_size_and_tokens():
    assert describe(png(1024, 768)) == "[image image/png 1024x768, ~1,049 tokens]"
    assert describe(pdf(3, "Q3")) == '[document "Q3" application/pdf, 3 pages]'


def test_media_in_a_tool_result_joins_the_call_turn_group():
    entries = [
        Entry("e1", (Text("look"),), role="user"),
        Entry("e2", (ToolUse("c1", "screenshot", {}),), role="assistant"),
        Entry("e3", (ToolResult("c1", "here", media=(png(),)),), role="tool"),
    ]
    grouping = group_entries(entries)
    assert grouping.group_of(1) == grouping.group_of(2)
    assert not grouping.open_groups


# --------------------------------------------------------------------------- counting vectors


@pytest.mark.parametrize(
    ("width", "height", "tokens"),
    [
        (1024, 768, 1049),  # no scaling: ceil(786432 / 750)
        (200, 200, 54),  # ceil(40000 / 750)
        (1092, 1092, 1590),  # the guide's largest unscaled 1:1 size (~1,590 tokens)
        (951, 1268, 1608),  # the guide's largest unscaled 3:4 size
        (784, 1568, 1640),  # the guide's largest unscaled 1:2 size: ceil(1229312 / 750)
        (2000, 2000, 1640),  # scaled to the 784 x 1568 area (1109 x 1109)
        (3000, 1000, 1093),  # long edge 3000 -> 1568 x 522.7: ceil(819541 / 750)
    ],
)
def test_anthropic_image_counts_follow_the_documented_rule(width, height, tokens):
    assert anthropic_image_tokens(width, height) == tokens


@pytest.mark.parametrize(
    ("width", "height", "detail", "model", "tokens"),
    [
        (1024, 1024, "high", "gpt-4o", 765),  # the guide's example: 768x768, 4 tiles
        (2048, 4096, "high", "gpt-4o", 1105),  # the guide's example: 768x1536, 6 tiles
        (4096, 8192, "low", "gpt-4o", 85),  # low detail: the base only
        (1024, 1024, "auto", "gpt-5", 630),  # gpt-5: 70 + 4 x 140
        (1024, 1024, "high", "gpt-4.1-mini", 1659),  # 1,024 patches x 1.62
        (1800, 2400, "high", "gpt-4.1-mini", 2353),  # the guide's 1,452 patches x 1.62
    ],
)
def test_openai_image_counts_follow_the_documented_rule(width, height, detail, model, tokens):
    assert openai_image_tokens(width, height, detail, model) == tokens


def test_counters_pick_the_provider_rule_by_chat_format_and_model():
    img = png(1024, 1024)
    assert counter_for_model("claude-sonnet-4-6").count_block(img) == 1399
    assert counter_for_model("gpt-4o").count_block(img) == 765
    assert counter_for_model("gpt-5").count_block(img) == 630
    assert get_counter("heuristic").count_block(img) == 765  # model unknown: gpt-4o's rule


def test_unknown_sizes_count_the_documented_ceiling():
    url = Image.from_url("https://example.invalid/a.png")
    assert get_counter("heuristic", chat_format="anthropic").count_block(url) == (
        ANTHROPIC_UNKNOWN_IMAGE_TOKENS
    )
    assert get_counter("heuristic").count_block(url) == 85 + 8 * 170
    doc = Document(URLSource("https://example.invalid/a.pdf"))
    assert get_counter("heuristic").count_block(doc) == UNKNOWN_PDF_PAGES * PDF_TOKENS_PER_PAGE


def test_tool_result_counts_its_text_and_its_media():
    c = get_counter("heuristic", chat_format="anthropic")
    result = ToolResult("c1", "twelve chars", media=(png(1024, 768), pdf(2, title=None)))
    assert c.count_block(result) == c.count("twelve chars") + 1049 + 2 * PDF_TOKENS_PER_PAGE


def test_plain_text_document_counts_its_text_and_title():
    c = get_counter("o200k_base")
    doc = Document.text("hello world " * 50, title="notes")
    assert c.count_block(doc) == c.count("hello world " * 50) + c.count("notes")


@SETTINGS
@given(
    w=st.integers(1, 5000),
    h=st.integers(1, 5000),
    k=st.integers(1, 6),
    model=st.sampled_from(["", "gpt-5", "gpt-5-mini"]),
)
def test_image_count_is_monotone_in_size_and_capped(w, h, k, model):
    # Monotone as an image grows with its aspect ratio kept: a longer thin strip may cost less
    # than a shorter one once its long edge is scaled down (both providers' documented rules).
    small, big = anthropic_image_tokens(w, h), anthropic_image_tokens(w * k, h * k)
    assert 1 <= small <= big <= ANTHROPIC_UNKNOWN_IMAGE_TOKENS
    o_small, o_big = (
        openai_image_tokens(w, h, "high", model),
        openai_image_tokens(w * k, h * k, "high", model),
    )
    cap = openai_image_tokens(None, None, "high", model)
    if model == "gpt-5-mini":
        # patch models are not monotone at the cap: an image of exactly 1,536 patches is
        # sent as is, a larger one is scaled with floored patch counts (1516 x 1015: 1,536
        # patches; x4: 47 x 32 = 1,504); both stay at or under the cap
        assert o_small <= cap and o_big <= cap
    else:
        assert o_small <= o_big <= cap


@SETTINGS
@given(w=st.integers(1, 9000), h=st.integers(1, 9000), model=st.sampled_from(["", "gpt-5"]))
def test_openai_tile_count_lies_between_base_and_the_unknown_size_ceiling(w, h, model):
    # The tile rule is not monotone (700x1030 costs 6 tiles, 800x1030 4 after scaling), so
    # the invariant is its range: the base at least, the unknown-size ceiling at most.
    base = openai_image_tokens(w, h, "low", model)
    assert (
        base
        <= openai_image_tokens(w, h, "high", model)
        <= openai_image_tokens(None, None, "high", model)
    )


@SETTINGS
@given(pages=st.integers(1, 12), more=st.integers(0, 5))
def test_pdf_count_is_monotone_in_pages(pages, more):
    c = get_counter("heuristic", chat_format="anthropic")
    assert c.count_block(Document(URLSource("u"), pages=pages)) <= c.count_block(
        Document(URLSource("u"), pages=pages + more)
    )


# --------------------------------------------------------------------------- never as bytes

media_blocks = st.one_of(
    st.builds(
        lambda w, h, t: Image.from_bytes(image_bytes(w, h, t), t),
        st.integers(1, 64),
        st.integers(1, 64),
        st.sampled_from(sorted(FORMATS)),
    ),
    st.builds(lambda n, t: pdf(n, t), st.integers(1, 3), st.none() | st.text(max_size=10)),
    st.builds(
        lambda u, w: Image(URLSource(u), width=w, height=w),
        st.text(min_size=1, max_size=20),
        st.none() | st.integers(1, 5000),
    ),
    st.builds(lambda s, t: Document(TextSource(s), t), st.text(max_size=40), st.none()),
)


@SETTINGS
@given(block=media_blocks, text=st.text(max_size=30))
def test_media_blocks_round_trip_through_json_and_msgpack(block, text):
    result = ToolResult("c1", text, media=(block,))
    for encode, decode in (
        (msgspec.json.encode, msgspec.json.decode),
        (msgspec.msgpack.encode, msgspec.msgpack.decode),
    ):
        assert decode(encode([block, result]), type=list[Block]) == [block, result]


def _payload_of(block: Image | Document) -> str | None:
    src = block.source
    return src.data if isinstance(src, Base64Source) and len(src.data) >= 16 else None


@SETTINGS
@given(block=media_blocks, said=st.sampled_from(["the login page is red", "error banner"]))
def test_summarizer_input_never_holds_media_bytes_but_keeps_what_the_turn_said(block, said):
    filler = "".join(f"\nchecked panel {n} of the page" for n in range(40))
    entries = [
        Entry("e1", (Text(said + filler), block), role="user", tokens=400),
        Entry("e2", (ToolUse("c1", "shot", {}),), role="assistant", tokens=5),
        Entry("e3", (ToolResult("c1", said, media=(block,)),), role="tool", tokens=400),
    ]
    transcript = entries_as_transcript(entries)
    summary = ExtractiveSummarizer()(entries, "", None)
    data = _payload_of(block)
    for text in (transcript, summary, *(e.text for e in entries)):
        if data is not None:
            assert data not in text
    assert said in transcript and said in summary
    assert ("[image" in transcript) or ("[document" in transcript)


def test_extractive_summary_records_that_an_image_was_there():
    entries = [
        Entry("e1", (Text("The chart shows revenue doubling."), png(640, 480)), role="user"),
    ]
    summary = ExtractiveSummarizer()(entries, "", None)
    assert "[image image/png 640x480" in summary and "revenue doubling" in summary


# --------------------------------------------------------------------------- rendering


def test_anthropic_payload_carries_image_and_document_blocks_with_sources():
    engine = Engine.from_blueprint(blueprint())
    engine.add_message(Message.user("What is in these?", media=(png(), pdf(2, "spec"))))
    screenshot_turn(engine, 1, png(800, 600))
    _, payload = engine.request("anthropic")
    assert check_anthropic(payload) == []
    first = payload["messages"][0]["content"]
    assert first[0]["type"] == "image" and first[0]["source"]["type"] == "base64"
    assert first[1] == {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": pdf(2).source.data},
        "title": "spec",
    }
    result = payload["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert [c["type"] for c in result["content"]] == ["text", "image"]


def test_openai_chat_moves_tool_media_to_a_user_message_after_the_turn_results():
    engine = Engine.from_blueprint(blueprint("openai", "gpt-5"))
    engine.add_user("Compare two screenshots")
    engine.add_assistant("", [ToolUse("a", "shot", {}), ToolUse("b", "shot", {})])
    engine.add_message(Message.tool((ToolResult("a", "first", media=(png(),)),)))
    engine.add_message(Message.tool((ToolResult("b", "second", media=(png(64, 64),)),)))
    _, payload = engine.request("openai")
    assert check_openai_chat(payload) == []
    roles = [m["role"] for m in payload["messages"]]
    assert roles[-4:] == ["tool", "tool", "user", "user"]
    carriers = payload["messages"][-2:]
    assert [p["type"] for p in carriers[0]["content"]] == ["text", "image_url"]
    url = carriers[1]["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")


def test_openai_chat_renders_user_images_and_pdfs_as_parts():
    engine = Engine.from_blueprint(blueprint("openai", "gpt-5"))
    engine.add_message(Message.user("Read this", media=(png(), pdf(1, "a"))))
    _, payload = engine.request("openai")
    parts = payload["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["image_url", "file", "text"]
    assert parts[1]["file"]["filename"] == "a.pdf"
    assert parts[1]["file"]["file_data"].startswith("data:application/pdf;base64,")


def test_responses_payload_uses_input_image_input_file_and_list_outputs():
    engine = Engine.from_blueprint(blueprint("openai_responses", "gpt-5"))
    engine.add_message(Message.user("Read", media=(Image.from_url("https://x.invalid/a.png"),)))
    engine.add_message(Message.user("and", media=(Document(URLSource("https://x.invalid/p.pdf")),)))
    screenshot_turn(engine, 1, png())
    _, payload = engine.request("openai_responses")
    items = payload["input"]
    assert items[0]["content"][0] == {
        "type": "input_image",
        "image_url": "https://x.invalid/a.png",
        "detail": "auto",
    }
    assert {"type": "input_file", "file_url": "https://x.invalid/p.pdf"} in items[0]["content"]
    out = next(i for i in items if i.get("type") == "function_call_output")["output"]
    assert [p["type"] for p in out] == ["input_text", "input_image"]


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai_responses"])
def test_eviction_keeps_each_screenshot_with_its_call(provider):
    model = "claude-sonnet-4-6" if provider == "anthropic" else "gpt-5"
    engine = Engine.from_blueprint(blueprint(provider, model, window=12_000))
    for n in range(20):
        screenshot_turn(engine, n, png(900, 700))
        _, payload = engine.request(provider)  # raises LayoutError on a malformed payload
        if provider == "anthropic":
            assert check_anthropic(payload) == []
        elif provider == "openai":
            assert check_openai_chat(payload) == []
    kept = engine.window.conversation.entries
    results = {b.tool_use_id for e in kept for b in e.blocks if isinstance(b, ToolResult)}
    calls = {b.id for e in kept for b in e.blocks if isinstance(b, ToolUse)}
    assert results <= calls and len(results) < 20


# --------------------------------------------------------------------------- persistence


def test_engine_state_with_media_survives_save_and_load(tmp_path):
    engine = Engine.from_blueprint(blueprint())
    engine.add_message(Message.user("look", media=(png(), pdf(2), Document.text("notes"))))
    screenshot_turn(engine, 1, png(300, 200))
    before = engine.request("anthropic")[1]
    for name in ("state.json", "state.msgpack"):
        loaded = Engine.load(engine.save(tmp_path / name))
        assert loaded.window.conversation.entries == engine.window.conversation.entries
        assert loaded.request("anthropic")[1]["messages"] == before["messages"]


def test_sqlite_store_round_trips_media_entries(tmp_path):
    from regio.persistence.store import SQLiteStore

    store = SQLiteStore(tmp_path / "sessions.db")
    engine = Engine.from_blueprint(blueprint())
    screenshot_turn(engine, 1, png(300, 200))
    engine.save_to(store, "s1")
    screenshot_turn(engine, 2, pdf(1))
    engine.save_to(store, "s1")
    loaded = Engine.load_from(store, "s1")
    assert loaded.window.conversation.entries == engine.window.conversation.entries


def test_add_tool_result_carries_the_tools_media_into_the_payload():
    engine = Engine.from_blueprint(blueprint())
    engine.add_user("take a screenshot")
    engine.add_assistant("Taking it.", [ToolUse("call_1", "screenshot", {})])
    engine.add_tool_result("call_1", "the page", media=(png(),))
    _, payload = engine.request()
    check_anthropic(payload)
    result = payload["messages"][-1]["content"][-1]
    assert result["type"] == "tool_result"
    assert [part["type"] for part in result["content"]] == ["text", "image"]
