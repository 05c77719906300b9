"""Image and document blocks: screenshots, photos, PDFs and plain-text files.

Both follow the providers' own shapes (Anthropic ``image`` / ``document`` content blocks,
https://platform.claude.com/docs/en/build-with-claude/vision and
https://platform.claude.com/docs/en/build-with-claude/pdf-support; OpenAI image and file inputs,
https://platform.openai.com/docs/guides/images-vision and
https://platform.openai.com/docs/guides/pdf-files):

* a **source** is :class:`Base64Source` (``media_type`` plus base64 ``data``), :class:`URLSource`
  (a ``url``; regio never downloads it) or, for documents, :class:`TextSource` (plain text);
* :class:`Image` holds a JPEG, PNG, GIF or WebP source plus its pixel ``width`` and ``height``,
  read once from the base64 bytes (Pillow reads only the header) and ``None`` for a URL whose
  size the caller did not give; ``detail`` is OpenAI's ``low`` / ``high`` / ``auto``;
* :class:`Document` holds a PDF (base64 or URL) or plain text, an optional ``title`` and its
  page count, read once from the PDF (pypdf) and ``None`` for a URL the caller did not size.

Blocks may appear in user messages and inside a :class:`regio.content.ToolResult`
(``media``). They never reach a summarizer or any text consumer as bytes:
:func:`describe` gives the short text ``[image image/png 1024x768, ~1,049 tokens]`` that
:func:`regio.content.block_text` returns for them.

Bad input (unknown media type, data that is not base64 or not the image it claims, a PDF pypdf
cannot read) raises :class:`MediaError` naming the block and the fix.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
from typing import Literal

import msgspec

from regio.errors import RegioError

__all__ = [
    "ANTHROPIC_MAX_LONG_EDGE",
    "ANTHROPIC_MAX_PIXELS",
    "DOCUMENT_MEDIA_TYPES",
    "IMAGE_MEDIA_TYPES",
    "Base64Source",
    "Document",
    "Image",
    "MediaError",
    "TextSource",
    "URLSource",
    "anthropic_image_tokens",
    "describe",
]

#: Image media types all three APIs accept (Anthropic vision guide; OpenAI images guide).
IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
#: Document media types regio carries: PDF and plain text.
DOCUMENT_MEDIA_TYPES = frozenset({"application/pdf", "text/plain"})
#: Anthropic scales an image whose long edge exceeds 1,568 px down to it (vision guide,
#: "Evaluate image size": https://platform.claude.com/docs/en/build-with-claude/vision).
ANTHROPIC_MAX_LONG_EDGE = 1568
#: ... and to at most ~1,600 tokens of area: the same section's table of the largest sizes that
#: are not resized (1092 x 1092 for 1:1, 951 x 1268 for 3:4, ..., 784 x 1568 for 1:2) tops out
#: at 784 x 1568 = 1,229,312 pixels, so that is the area limit used here (its "1.15
#: megapixels" is a latency recommendation, not the resize threshold), pixels.
ANTHROPIC_MAX_PIXELS = 1_229_312

#: The ``detail`` values OpenAI accepts for an image input (images guide).
_DETAILS = ("auto", "low", "high")

_PIL_FORMATS = {"JPEG": "image/jpeg", "PNG": "image/png", "GIF": "image/gif", "WEBP": "image/webp"}


class MediaError(RegioError, ValueError):
    """An image or document block was given data it cannot hold (the message names the block
    and the fix)."""


class Base64Source(msgspec.Struct, frozen=True, tag="base64", tag_field="type"):
    """Inline bytes: ``media_type`` (``image/png``, ``application/pdf``, ...) and base64
    ``data`` (standard alphabet, no ``data:`` prefix)."""

    media_type: str
    data: str

    def raw(self) -> bytes:
        """The decoded bytes. Raises :class:`MediaError` when ``data`` is not base64."""
        try:
            return base64.b64decode(self.data, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise MediaError(
                f"{self.media_type} source: data is not valid base64 ({exc}); pass the file's "
                "bytes through base64.standard_b64encode(...).decode()"
            ) from exc

    @property
    def data_url(self) -> str:
        """``data:<media_type>;base64,<data>`` (the form OpenAI takes inline files in)."""
        return f"data:{self.media_type};base64,{self.data}"


class URLSource(msgspec.Struct, frozen=True, tag="url", tag_field="type"):
    """A file the provider fetches itself: ``url`` (``https://...``); ``media_type`` when
    known (``""`` otherwise). regio never downloads it."""

    url: str
    media_type: str = ""


class TextSource(msgspec.Struct, frozen=True, tag="text", tag_field="type"):
    """A plain-text document held as text (Anthropic's ``text`` document source)."""

    data: str
    media_type: str = "text/plain"


ImageSource = Base64Source | URLSource
DocumentSource = Base64Source | URLSource | TextSource


def _image_size(raw: bytes, claimed: str) -> tuple[int, int]:
    """(width, height) in pixels from the image header; checks the claimed media type."""
    from PIL import Image as PILImage
    from PIL import UnidentifiedImageError

    try:
        with PILImage.open(io.BytesIO(raw)) as img:
            fmt = img.format or ""
            width, height = img.size
    except PILImage.DecompressionBombError as exc:
        raise MediaError(
            f"image ({claimed}): {exc}; no provider accepts it (Anthropic refuses images over "
            "8000 x 8000 px): scale it down first"
        ) from exc
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise MediaError(
            f"image ({claimed}): the data is not a readable image ({exc}); pass a JPEG, PNG, "
            "GIF or WebP file's bytes"
        ) from exc
    actual = _PIL_FORMATS.get(fmt)
    if actual != claimed:
        raise MediaError(
            f"image: media_type is {claimed!r} but the data is {actual or fmt or 'unknown'}; "
            f"set media_type to {actual!r}"
            if actual
            else f"image: {fmt or 'unknown'} images are not accepted; convert to PNG or JPEG"
        )
    return int(width), int(height)


class Image(msgspec.Struct, frozen=True, tag="image", tag_field="type"):
    """An image: ``source`` (base64 or URL), OpenAI's ``detail`` (``auto``, ``low``,
    ``high``), and ``width`` / ``height`` in pixels (read from base64 data when not given;
    ``None`` for a URL of unknown size, counted by the conservative defaults of
    :mod:`regio.tokens.media`).

    Raises :class:`MediaError` for a media type other than JPEG, PNG, GIF or WebP, data that
    is not base64 or not that image, a ``detail`` other than ``auto`` / ``low`` / ``high``
    (the values OpenAI accepts, https://platform.openai.com/docs/guides/images-vision), or a
    size that is not a positive integer of pixels.
    """

    source: ImageSource
    detail: Literal["auto", "low", "high"] = "auto"
    width: int | None = None
    height: int | None = None

    def __post_init__(self) -> None:
        src = self.source
        if self.detail not in _DETAILS:
            raise MediaError(
                f"image: detail {self.detail!r} is not accepted; use one of {', '.join(_DETAILS)}"
            )
        if src.media_type and src.media_type not in IMAGE_MEDIA_TYPES:
            raise MediaError(
                f"image: media_type {src.media_type!r} is not accepted; use one of "
                f"{', '.join(sorted(IMAGE_MEDIA_TYPES))}"
            )
        if isinstance(src, Base64Source):
            if not src.media_type:
                raise MediaError("image: a base64 source needs its media_type (image/png, ...)")
            if self.width is None or self.height is None:
                w, h = _image_size(src.raw(), src.media_type)
                msgspec.structs.force_setattr(self, "width", w)
                msgspec.structs.force_setattr(self, "height", h)
        for name in ("width", "height"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value <= 0
            ):
                raise MediaError(
                    f"image: {name} must be a positive integer of pixels, not {value!r}"
                )

    @classmethod
    def from_bytes(cls, data: bytes, media_type: str, **kw: object) -> Image:
        """An image from raw file bytes (base64-encoded here)."""
        return cls(Base64Source(media_type, base64.standard_b64encode(data).decode()), **kw)  # type: ignore[arg-type]

    @classmethod
    def from_url(cls, url: str, **kw: object) -> Image:
        """An image the provider fetches (``width`` / ``height`` may be given in ``kw``)."""
        return cls(URLSource(url), **kw)  # type: ignore[arg-type]

    @property
    def media_type(self) -> str:
        """The source's media type (``""`` for a URL that does not say)."""
        return self.source.media_type


def _pdf_pages(raw: bytes) -> int:
    """The page count of a PDF (pypdf). Raises :class:`MediaError` for unreadable data."""
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        return len(PdfReader(io.BytesIO(raw)).pages)
    except (PdfReadError, OSError, ValueError, KeyError, TypeError) as exc:
        raise MediaError(
            f"document (application/pdf): the data is not a readable PDF ({exc}); pass an "
            "unencrypted PDF file's bytes"
        ) from exc


class Document(msgspec.Struct, frozen=True, tag="document", tag_field="type"):
    """A document: ``source`` (base64 PDF or text, a URL, or :class:`TextSource`), an
    optional ``title`` (also the file name OpenAI is given) and ``pages`` (read from a
    base64 PDF when not given; ``None`` for a URL of unknown length).

    Raises :class:`MediaError` for a media type other than ``application/pdf`` or
    ``text/plain``, data that is not base64 or not a readable PDF, or ``pages`` that is not
    an integer of at least 1.
    """

    source: DocumentSource
    title: str | None = None
    pages: int | None = None

    def __post_init__(self) -> None:
        src = self.source
        if src.media_type and src.media_type not in DOCUMENT_MEDIA_TYPES:
            raise MediaError(
                f"document: media_type {src.media_type!r} is not accepted; use application/pdf "
                "or text/plain (send other files as text)"
            )
        if isinstance(src, Base64Source):
            raw = src.raw()
            if src.media_type == "application/pdf" and self.pages is None:
                msgspec.structs.force_setattr(self, "pages", _pdf_pages(raw))
            elif src.media_type == "text/plain":
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise MediaError(
                        f"document (text/plain): the data is not UTF-8 text ({exc}); decode it "
                        "and pass a TextSource"
                    ) from exc
        pages = self.pages
        if pages is not None and (
            isinstance(pages, bool) or not isinstance(pages, int) or pages < 1
        ):
            raise MediaError(f"document: pages must be an integer of at least 1, not {pages!r}")

    @classmethod
    def pdf(cls, data: bytes, *, title: str | None = None) -> Document:
        """A PDF document from its file bytes."""
        return cls(Base64Source("application/pdf", base64.standard_b64encode(data).decode()), title)

    @classmethod
    def text(cls, text: str, *, title: str | None = None) -> Document:
        """A plain-text document."""
        return cls(TextSource(text), title)

    @property
    def media_type(self) -> str:
        """The source's media type (``""`` for a URL that does not say)."""
        return self.source.media_type

    @property
    def is_pdf(self) -> bool:
        """True for a PDF (a URL without a media type is taken as a PDF, as the APIs do)."""
        return self.media_type in ("application/pdf", "")

    def plain_text(self) -> str | None:
        """The text of a plain-text document, else ``None``."""
        src = self.source
        if isinstance(src, TextSource):
            return src.data
        if isinstance(src, Base64Source) and src.media_type == "text/plain":
            return src.raw().decode("utf-8")
        return None


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic's estimate for one image, tokens: ``ceil(w * h / 750)`` (the area taken
    before rounding to whole pixels) after scaling the long edge to at most 1,568 px and the
    area to at most :data:`ANTHROPIC_MAX_PIXELS` (~1,600 tokens), keeping the aspect ratio
    (https://platform.claude.com/docs/en/build-with-claude/vision, "Evaluate image size" and
    "Calculate image costs")."""
    area = float(width * height)
    long_edge = max(width, height)
    if long_edge > ANTHROPIC_MAX_LONG_EDGE:
        area *= (ANTHROPIC_MAX_LONG_EDGE / long_edge) ** 2
    area = min(area, ANTHROPIC_MAX_PIXELS)
    return max(1, math.ceil(round(area, 6) / 750))


def describe(block: Image | Document, tokens: int | None = None) -> str:
    """The short text a summarizer sees instead of the bytes:
    ``[image image/png 1024x768, ~1,049 tokens]``, ``[image https://... size unknown]``,
    ``[document "Q3 report" application/pdf, 12 pages]``. ``tokens`` defaults to the Anthropic
    estimate for images of known size."""
    if isinstance(block, Image):
        src = block.source
        what = src.media_type or (src.url if isinstance(src, URLSource) else "")
        if isinstance(src, URLSource) and src.media_type:
            what = f"{src.media_type} {src.url}"
        if block.width is None or block.height is None:
            return f"[image {what}, size unknown]"
        n = tokens if tokens is not None else anthropic_image_tokens(block.width, block.height)
        return f"[image {what} {block.width}x{block.height}, ~{n:,} tokens]"
    src_d = block.source
    parts = ["document"]
    if block.title:
        parts.append(f'"{block.title}"')
    if isinstance(src_d, URLSource):
        parts.append(src_d.url)
    parts.append(block.media_type or "application/pdf")
    head = " ".join(parts)
    text = block.plain_text()
    if text is not None:
        return f"[{head}, {len(text):,} characters]"
    if block.pages is None:
        return f"[{head}, pages unknown]"
    return f"[{head}, {block.pages} page{'s' if block.pages != 1 else ''}]"
