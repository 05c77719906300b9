"""Builders of the image / document tests: real image and PDF bytes made here (Pillow, pypdf)."""

from __future__ import annotations

import io

from PIL import Image as PILImage
from pypdf import PdfWriter

from regio.media import Document, Image

FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}


def image_bytes(width: int, height: int, media_type: str = "image/png") -> bytes:
    """The bytes of a ``width`` x ``height`` image file of ``media_type``."""
    buf = io.BytesIO()
    PILImage.new("RGB", (width, height), (200, 30, 30)).save(buf, FORMATS[media_type])
    return buf.getvalue()


def png(width: int = 1024, height: int = 768) -> Image:
    """A PNG image block of that size."""
    return Image.from_bytes(image_bytes(width, height), "image/png")


def pdf_bytes(pages: int) -> bytes:
    """The bytes of a PDF with ``pages`` blank letter-size pages."""
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(612, 792)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def pdf(pages: int = 3, title: str | None = "report") -> Document:
    """A PDF document block with ``pages`` pages."""
    return Document.pdf(pdf_bytes(pages), title=title)
