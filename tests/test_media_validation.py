"""Bad image fields are refused when the block is made, not by the provider later."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from media_support import image_bytes
from regio.media import Image, MediaError, URLSource
from regio.runtime.sdk import message_of


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
