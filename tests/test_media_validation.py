"""Bad image fields are refused when the block is made, not by the provider later."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from media_support import image_bytes
from regio.media import Image, MediaError, URLSource
from regio.sdk._objects import message_of


@given(st.text(max_size=12).filter(lambda d: d not in ("auto", "low", "high")))
def test_image_detail_outside_the_openai_values_is_refused(detail):
    with pytest.raises(MediaError, match="detail"):
        Image(URLSource("https://example.com/a.png"), detail=detail)  # type: ignore[arg-type]


@pytest.mark.parametrize("detail", ["auto", "low", "high"])
def test_image_detail_of_the_openai_values_is_kept(detail):
    assert Image(URLSource("https://example.com/a.png"), detail=detail).detail == detail


def test_sdk_image_part_with_an_unknown_detail_is_refused_naming_the_values():
    part = {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "ultra"}
    with pytest.raises(MediaError, match="auto, low, high"):
        message_of({"role": "user", "content": [part]})


@pytest.mark.parametrize("size", [1.5, "1024", True, 0, -3])
def test_image_size_that_is_not_a_positive_integer_is_refused(size):
    with pytest.raises(MediaError, match="positive integer of pixels"):
        Image(URLSource("https://example.com/a.png"), width=size, height=10)  # type: ignore[arg-type]


def test_image_with_a_valid_size_and_bytes_keeps_the_measured_size():
    img = Image.from_bytes(image_bytes(40, 30), "image/png", detail="low")
    assert (img.width, img.height, img.detail) == (40, 30, "low")


@pytest.mark.parametrize("pages", [0, -1, "3", 2.5, True])
def test_document_pages_that_are_not_a_positive_integer_are_refused(pages):
    from regio.media import Document

    with pytest.raises(MediaError, match="pages must be an integer of at least 1"):
        Document(URLSource("https://example.com/a.pdf"), pages=pages)  # type: ignore[arg-type]


def test_patch_count_of_a_scaled_image_has_no_float_error_row():
    from regio.tokens.media import openai_image_tokens

    # 1279 x 3885 scales to exactly 22 x 66.8 patches: 22 * 67 = 1,474 (float error made 23 cols)
    assert openai_image_tokens(1279, 3885, "high", "gpt-5-mini") == math.ceil(1474 * 1.62)


@given(
    w=st.integers(1, 5000),
    h=st.integers(1, 5000),
    k=st.integers(2, 6),
)
def test_patch_count_over_the_cap_depends_only_on_the_aspect_ratio(w, h, k):
    from regio.tokens.media import _MAX_PATCHES, _patches

    if math.ceil(w / 32) * math.ceil(h / 32) <= _MAX_PATCHES:
        return
    # the guide's rule scales to r = sqrt(32^2 * 1536 / (w * h)): w * r is the same for k*w
    assert _patches(w, h) == _patches(w * k, h * k) <= _MAX_PATCHES


def test_patch_models_are_not_monotone_at_the_cap_by_the_documented_rule():
    from regio.tokens.media import _patches

    # 1516 x 1015 needs exactly 48 x 32 = 1,536 patches (sent as is); four times larger it is
    # scaled down with floored patch counts to 47 x 32
    assert (_patches(1516, 1015), _patches(6064, 4060)) == (1536, 1504)
