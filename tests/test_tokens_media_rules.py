"""Image token rules by provider: Gemini's own rule (not OpenAI's) for Gemini models, and the
Chat Completions wrapper of a tool result's media counted in the budget."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from media_support import png
from regio.content import Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.media import Image, URLSource
from regio.tokens import counter_for_model, get_counter
from regio.tokens.media import (
    CHAT_MEDIA_FOLLOWS,
    GEMINI_IMAGE_TOKENS,
    GEMINI_UNKNOWN_IMAGE_TILES,
    chat_media_carrier_text,
    gemini_image_tokens,
    image_tokens,
    openai_image_tokens,
)

SIDES = st.integers(1, 8000)


def test_a_small_gemini_image_counts_258_tokens():
    assert gemini_image_tokens(384, 384) == 258
    assert gemini_image_tokens(1, 300) == 258


def test_a_large_gemini_image_counts_258_per_768_pixel_tile():
    assert gemini_image_tokens(1920, 1080) == 3 * 2 * 258
    assert gemini_image_tokens(385, 100) == 258
    assert gemini_image_tokens(769, 769) == 4 * 258


@settings(max_examples=200, deadline=None)
@given(w=SIDES, h=SIDES)
def test_gemini_count_is_whole_tiles_covering_the_image_and_grows_with_each_side(w, h):
    n = gemini_image_tokens(w, h)
    assert n % GEMINI_IMAGE_TOKENS == 0 and n >= GEMINI_IMAGE_TOKENS
    tiles = n // GEMINI_IMAGE_TOKENS
    # the tiles cover the image (never fewer than its area in 768 x 768 tiles) and no tile
    # row or column is wholly outside it
    assert tiles * 768 * 768 >= w * h
    assert tiles <= (w / 768 + 1) * (h / 768 + 1)
    assert gemini_image_tokens(w + 1, h) >= n and gemini_image_tokens(w, h + 1) >= n


# Each provider's rule written out from its documentation, independently of regio.tokens.media,
# so a wrong rule or a wrong choice of rule fails the tests below.


def gemini_rule(w: int, h: int) -> int:
    """https://ai.google.dev/gemini-api/docs/tokens ("Multimodal tokens"): both sides at most
    384 px: 258 tokens; else 258 per 768 x 768 tile (regio reads the tiles of the uncropped
    image)."""
    if w <= 384 and h <= 384:
        return 258
    return -(-w // 768) * -(-h // 768) * 258


def anthropic_rule(w: int, h: int) -> int:
    """https://platform.claude.com/docs/en/build-with-claude/vision ("Calculate image costs"):
    tokens = (width px * height px) / 750, for an image Anthropic does not resize (long edge
    at most 1,568 px, at most 784 x 1,568 px of area)."""
    assert max(w, h) <= 1568 and w * h <= 784 * 1568, "the image would be resized"
    return max(1, -(-(w * h) // 750))


def openai_gpt4o_rule(w: int, h: int, detail: str) -> int:
    """https://platform.openai.com/docs/guides/images-vision ("Calculating costs", gpt-4o):
    ``low`` costs 85 tokens; otherwise 85 + 170 per 512-px tile of the image as sent, for an
    image that needs no scaling (fits in 2048 x 2048, shortest side at most 768 px)."""
    if detail == "low":
        return 85
    assert max(w, h) <= 2048 and min(w, h) <= 768, "the image would be scaled"
    return 85 + 170 * -(-w // 512) * -(-h // 512)


UNSCALED_ANTHROPIC = st.tuples(st.integers(1, 1568), st.integers(1, 784)).flatmap(
    lambda s: st.sampled_from([s, s[::-1]])
)
UNSCALED_OPENAI = st.tuples(st.integers(1, 2048), st.integers(1, 768)).flatmap(
    lambda s: st.sampled_from([s, s[::-1]])
)
DETAILS = st.sampled_from(["auto", "low", "high"])


def _url_image(w: int, h: int, detail: str = "auto") -> Image:
    return Image(URLSource("https://example.invalid/a.png"), detail=detail, width=w, height=h)


def test_the_documented_worked_examples_hold():
    # Gemini: a 384 x 384 image is one 258-token image, 1920 x 1080 is 3 x 2 tiles.
    assert gemini_rule(384, 384) == 258 and gemini_rule(1920, 1080) == 1548
    # Anthropic's table: 1,000 x 1,000 px is ~1,334 tokens, 200 x 200 px ~54.
    assert anthropic_rule(1000, 1000) == 1334 and anthropic_rule(200, 200) == 54
    # OpenAI: 1,024 x 1,024 "high" is scaled to 768 x 768, 4 tiles: 765 tokens; 2,048 x 4,096
    # to 768 x 1,536, 6 tiles: 1,105 tokens.
    assert openai_image_tokens(1024, 1024, "high", "gpt-4o") == 85 + 170 * 4
    assert openai_image_tokens(2048, 4096, "high", "gpt-4o") == 85 + 170 * 6
    assert openai_image_tokens(4096, 8192, "low", "gpt-4o") == 85


@settings(max_examples=50, deadline=None)
@given(w=SIDES, h=SIDES, detail=DETAILS)
def test_gemini_models_never_use_the_openai_rule(w, h, detail):
    image = _url_image(w, h, detail)
    for model in ("gemini-2.5-flash", "google/gemini-2.5-pro", "models/gemini-2.0-flash"):
        for chat_format in ("openai_chat", "anthropic", "none"):
            got = image_tokens(image, chat_format=chat_format, model=model)
            assert got == gemini_rule(w, h)


@settings(max_examples=100, deadline=None)
@given(size=UNSCALED_ANTHROPIC, detail=DETAILS)
def test_the_anthropic_format_counts_width_times_height_over_750(size, detail):
    w, h = size
    for model in ("", "claude-sonnet-4-6", "gpt-4o"):
        got = image_tokens(_url_image(w, h, detail), chat_format="anthropic", model=model)
        assert got == anthropic_rule(w, h)


@settings(max_examples=100, deadline=None)
@given(size=UNSCALED_OPENAI, detail=DETAILS)
def test_openai_tile_models_count_85_plus_170_per_512_pixel_tile(size, detail):
    w, h = size
    for model in ("gpt-4o", "gpt-4o-2024-08-06", "openai/gpt-4.1", ""):
        for chat_format in ("openai_chat", "none"):
            got = image_tokens(_url_image(w, h, detail), chat_format=chat_format, model=model)
            assert got == openai_gpt4o_rule(w, h, detail)


def test_a_gemini_counter_counts_a_screenshot_by_gemini_rule():
    counter = counter_for_model("gemini-2.5-flash")
    shot = png(1920, 1080)
    assert counter.count_block(shot) == 1548
    assert counter.count_block(shot) != openai_image_tokens(1920, 1080, "auto", "")


def test_a_gemini_image_of_unknown_size_counts_the_assumed_tiles():
    url = Image(URLSource("https://example.invalid/a.png"))
    got = counter_for_model("gemini-2.5-flash").count_block(url)
    assert got == GEMINI_UNKNOWN_IMAGE_TILES * GEMINI_IMAGE_TOKENS


# ------------------------------------------------------- the Chat wrapper of tool media


def test_a_chat_tool_result_with_media_counts_the_wrapper_message():
    c = get_counter("o200k_base", chat_format="openai_chat")
    image = png(64, 64)
    bare = ToolResult("call_7", "the page")
    with_media = ToolResult("call_7", "the page", media=(image,))
    wrapper = (
        c.count("\n" + CHAT_MEDIA_FOLLOWS)
        + c.count(chat_media_carrier_text("call_7"))
        + c.overhead.tokens_per_message
    )
    assert c.count_block(with_media) == c.count_block(bare) + c.count_block(image) + wrapper


def test_formats_without_the_wrapper_count_only_text_and_media():
    image = png(64, 64)
    for chat_format in ("anthropic", "none"):
        c = get_counter("o200k_base", chat_format=chat_format)
        result = ToolResult("call_7", "the page", media=(image,))
        assert c.count_block(result) == c.count("the page") + c.count_block(image)


def _blueprint(model: str) -> str:
    return (
        "version: 1\nname: media\n"
        f"model: {{provider: openai, name: {model}, context_window: 200000, "
        "max_output_tokens: 1000}\n"
        "tokenizer: o200k_base\n"
        "regions:\n"
        '  - {name: system, kind: pinned, volatility: stable, budget: 1000, seed: "Be careful."}\n'
        "  - {name: conversation, kind: sliding_window, budget: 190000}\n"
    )


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 4), call_id=st.text("abcdefgh_0123456789", min_size=1, max_size=12))
def test_the_budget_holds_every_text_the_chat_wrapper_adds(n, call_id):
    engine = Engine.from_blueprint(_blueprint("gpt-5"))
    counter = engine.counter
    engine.add_user("take screenshots")
    calls = [ToolUse(f"{call_id}{k}", "shot", {}) for k in range(n)]
    engine.add_assistant("", calls)
    before = engine.window.used_tokens
    for call in calls:
        engine.add_message(Message.tool((ToolResult(call.id, "ok", media=(png(32, 32),)),)))
    added = engine.window.used_tokens - before
    _, payload = engine.request("openai")
    tools = [m for m in payload["messages"] if m["role"] == "tool"]
    carriers = [m for m in payload["messages"] if m["role"] == "user"][-n:]
    assert all(m["content"].endswith("\n" + CHAT_MEDIA_FOLLOWS) for m in tools)
    rendered = sum(
        counter.count(m["content"]) + counter.count(c["content"][0]["text"])
        for m, c in zip(tools, carriers, strict=True)
    )
    media = n * counter.count_block(png(32, 32))
    overhead = 2 * n * counter.overhead.tokens_per_message  # tool + carrier message
    assert added >= rendered + media + overhead - n  # tokenizing the suffix apart: <= 1 each
