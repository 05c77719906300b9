"""Token counts of image and document blocks, by each provider's documented rule.

Images (:class:`regio.media.Image`):

* **Anthropic** (chat format ``anthropic``): ``ceil(w * h / 750)`` after scaling the long
  edge to at most 1,568 px and the area to ~1,600 tokens (the largest unscaled size of the
  guide's table, 784 x 1568; :data:`regio.media.ANTHROPIC_MAX_PIXELS`)
  (https://platform.claude.com/docs/en/build-with-claude/vision, "Evaluate image size");
* **Gemini** (a ``gemini*`` model in any chat format; Google's OpenAI-compatible endpoint
  included), from https://ai.google.dev/gemini-api/docs/tokens ("Multimodal tokens", image
  inputs): an image with both sides at most 384 px counts 258 tokens; a larger one is cropped
  and scaled into 768 x 768 tiles of 258 tokens each; regio counts ``ceil(w / 768) *
  ceil(h / 768)`` tiles (Google does not publish the crop, this reading is the tile count of
  the uncropped image, never fewer). ``detail`` does not apply;
* **OpenAI** (every other model and chat format), from
  https://platform.openai.com/docs/guides/images-vision ("Calculating costs"):
  *tile models* (gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1, o3; the default when the model is not
  known: gpt-4o's 85 / 170): ``detail: low`` costs the base tokens; ``high`` and ``auto``
  scale the image to fit in 2048 x 2048, then its shortest side down to 768 px, and cost base
  + tile tokens per 512-px tile; *patch models* (gpt-4.1-mini / -nano, gpt-5-mini / -nano,
  o4-mini): 32-px patches, at most 1,536 (the image scaled down to fit), times the model's
  multiplier.

Unknown size (a URL source without ``width`` / ``height``; regio never downloads): the
largest count the rule can give, so the window budget is never short: Anthropic 1,640 (the
documented "~1,600 tokens" ceiling: the 784 x 1568 table size), OpenAI tile models base + 8
tiles (768 x 2048 after scaling), patch models 1,536 patches times the multiplier, Gemini
:data:`GEMINI_UNKNOWN_IMAGE_TILES` tiles (regio's assumption: Google publishes no largest size).

The Chat Completions wrapper of a tool result's media: a ``role: tool`` message takes text only,
so the OpenAI chat renderer appends :data:`CHAT_MEDIA_FOLLOWS` to the tool message and sends
the media in a ``user`` message opened by :func:`chat_media_carrier_text`
(:mod:`regio.layout.render.media`). :func:`chat_media_wrapper_tokens` counts both texts and the
extra message's overhead, so the budget holds what the payload carries.

Documents (:class:`regio.media.Document`): a PDF counts :data:`PDF_TOKENS_PER_PAGE` per page
(Anthropic: each page is sent as its extracted text plus an image of the page, "1,500-3,000
tokens per page" of text plus the page image,
https://platform.claude.com/docs/en/build-with-claude/pdf-support, "Estimate your costs";
OpenAI sends the same pair per page, https://platform.openai.com/docs/guides/pdf-files); we
take the upper end of the text range plus a page image at Anthropic's ceiling. A PDF URL of
unknown length counts :data:`UNKNOWN_PDF_PAGES` pages (regio's assumption, no provider gives
one; pass ``pages=`` when you know it). A plain-text document counts its text and title with
the counter's tokenizer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from regio.media import ANTHROPIC_MAX_PIXELS, Document, Image, anthropic_image_tokens

__all__ = [
    "ANTHROPIC_UNKNOWN_IMAGE_TOKENS",
    "CHAT_MEDIA_CARRIER_PREFIX",
    "CHAT_MEDIA_FOLLOWS",
    "GEMINI_IMAGE_TOKENS",
    "GEMINI_UNKNOWN_IMAGE_TILES",
    "PDF_TOKENS_PER_PAGE",
    "UNKNOWN_PDF_PAGES",
    "anthropic_image_tokens",
    "chat_media_carrier_text",
    "chat_media_wrapper_tokens",
    "document_tokens",
    "gemini_image_tokens",
    "image_tokens",
    "is_gemini",
    "media_tokens",
    "openai_image_tokens",
]

#: Anthropic, an image of unknown size: the documented ceiling ("~1,600 tokens"), tokens.
ANTHROPIC_UNKNOWN_IMAGE_TOKENS = math.ceil(ANTHROPIC_MAX_PIXELS / 750)
#: Gemini: tokens of an image with both sides at most 384 px, and of each 768 x 768 tile of a
#: larger one (https://ai.google.dev/gemini-api/docs/tokens).
GEMINI_IMAGE_TOKENS = 258
#: Gemini, an image of unknown size: 3 x 3 tiles (an image up to 2304 x 2304 px), regio's
#: assumption.
GEMINI_UNKNOWN_IMAGE_TILES = 9
#: Appended (after a newline) to a Chat Completions ``tool`` message whose result carried media.
CHAT_MEDIA_FOLLOWS = "[the images and documents of this result follow in the next user message]"
#: How the text part opening a Chat Completions media-carrier ``user`` message begins.
CHAT_MEDIA_CARRIER_PREFIX = "[media of tool result "
#: One PDF page: 3,000 text tokens (upper end of Anthropic's 1,500-3,000) + a 1,600-token
#: page image.
PDF_TOKENS_PER_PAGE = 4600
#: Pages assumed for a PDF URL of unknown length (regio's assumption, see the module doc).
UNKNOWN_PDF_PAGES = 10

# (model prefix, base tokens, tile tokens); first match wins, longest prefixes first.
_TILE_MODELS: tuple[tuple[str, int, int], ...] = (
    ("gpt-4o-mini", 2833, 5667),
    ("gpt-5-chat", 70, 140),
    ("gpt-5", 70, 140),
    ("gpt-4o", 85, 170),
    ("chatgpt-4o", 85, 170),
    ("gpt-4.1", 85, 170),
    ("gpt-4.5", 85, 170),
    ("o1", 75, 150),
    ("o3", 75, 150),
    ("computer-use", 65, 129),
)
# (model prefix, tokens per 32-px patch); checked before the tile models.
_PATCH_MODELS: tuple[tuple[str, float], ...] = (
    ("gpt-5-mini", 1.62),
    ("gpt-5-nano", 2.46),
    ("gpt-4.1-mini", 1.62),
    ("gpt-4.1-nano", 2.46),
    ("o4-mini", 1.72),
)
_DEFAULT_TILE = (85, 170)
_MAX_PATCHES = 1536


def _bare(model: str) -> str:
    return re.sub(r"^(openai/|ft:)", "", model.strip().lower())


def _tile_tokens(width: int, height: int, base: int, tile: int) -> int:
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        s = 2048 / max(w, h)
        w, h = w * s, h * s
    if min(w, h) > 768:
        s = 768 / min(w, h)
        w, h = w * s, h * s
    tiles = math.ceil(round(w) / 512) * math.ceil(round(h) / 512)
    return base + tile * max(1, tiles)


def _patches(width: int, height: int) -> int:
    raw = math.ceil(width / 32) * math.ceil(height / 32)
    if raw <= _MAX_PATCHES:
        return raw
    r = math.sqrt(32 * 32 * _MAX_PATCHES / (width * height))
    r *= min(
        math.floor(width * r / 32) / (width * r / 32),
        math.floor(height * r / 32) / (height * r / 32),
    )
    # rounded before ceil: width * r is a whole number of patches by construction, and float
    # error (22.000000000000004) must not add a row of patches
    cols = math.ceil(round(width * r / 32, 9))
    rows = math.ceil(round(height * r / 32, 9))
    return min(_MAX_PATCHES, cols * rows)


def openai_image_tokens(
    width: int | None, height: int | None, detail: str = "auto", model: str = ""
) -> int:
    """OpenAI's count for one image, tokens (rules in the module docstring). ``width`` /
    ``height`` ``None``: the rule's largest count."""
    bare = _bare(model)
    for prefix, mult in _PATCH_MODELS:
        if bare.startswith(prefix):
            patches = _MAX_PATCHES if width is None or height is None else _patches(width, height)
            return math.ceil(patches * mult)
    base, tile = next(((b, t) for p, b, t in _TILE_MODELS if bare.startswith(p)), _DEFAULT_TILE)
    if detail == "low":
        return base
    if width is None or height is None:
        return base + tile * 8
    return _tile_tokens(width, height, base, tile)


def gemini_image_tokens(width: int | None, height: int | None) -> int:
    """Gemini's count for one image, tokens (rule in the module docstring): 258 when both
    sides are at most 384 px, else 258 per 768 x 768 tile; ``None`` sides: the assumed
    :data:`GEMINI_UNKNOWN_IMAGE_TILES` tiles."""
    if width is None or height is None:
        return GEMINI_UNKNOWN_IMAGE_TILES * GEMINI_IMAGE_TOKENS
    if width <= 384 and height <= 384:
        return GEMINI_IMAGE_TOKENS
    return math.ceil(width / 768) * math.ceil(height / 768) * GEMINI_IMAGE_TOKENS


def is_gemini(model: str) -> bool:
    """Whether ``model`` names a Gemini model (``gemini-2.5-flash``, ``google/gemini-...``,
    ``models/gemini-...``)."""
    return model.strip().lower().rsplit("/", 1)[-1].startswith("gemini")


def image_tokens(image: Image, *, chat_format: str, model: str = "") -> int:
    """Tokens of ``image`` under the provider of ``model`` and ``chat_format``: Gemini's rule
    for a Gemini ``model``, Anthropic's for the ``anthropic`` chat format, else OpenAI's for
    ``model``."""
    if is_gemini(model):
        return gemini_image_tokens(image.width, image.height)
    if chat_format == "anthropic":
        if image.width is None or image.height is None:
            return ANTHROPIC_UNKNOWN_IMAGE_TOKENS
        return anthropic_image_tokens(image.width, image.height)
    return openai_image_tokens(image.width, image.height, image.detail, model)


def document_tokens(document: Document, count: Callable[[str], int]) -> int:
    """Tokens of ``document``: a PDF's pages times :data:`PDF_TOKENS_PER_PAGE`
    (:data:`UNKNOWN_PDF_PAGES` when unknown); a text document's text and title through
    ``count`` (the counter's tokenizer)."""
    title = count(document.title) if document.title else 0
    text = document.plain_text()
    if text is not None:
        return count(text) + title
    pages = document.pages if document.pages is not None else UNKNOWN_PDF_PAGES
    return pages * PDF_TOKENS_PER_PAGE + title


def chat_media_carrier_text(tool_use_id: str) -> str:
    """The text part that opens the Chat Completions ``user`` message carrying the media of
    tool result ``tool_use_id``."""
    return f"{CHAT_MEDIA_CARRIER_PREFIX}{tool_use_id}]"


def chat_media_wrapper_tokens(
    tool_use_id: str, count: Callable[[str], int], tokens_per_message: int
) -> int:
    """Tokens the Chat Completions wrapper adds to a tool result with media: the newline and
    :data:`CHAT_MEDIA_FOLLOWS` on the tool message, the carrier text, and one more message's
    overhead (``tokens_per_message``)."""
    follows = count("\n" + CHAT_MEDIA_FOLLOWS)
    return follows + count(chat_media_carrier_text(tool_use_id)) + tokens_per_message


def media_tokens(
    block: Image | Document, *, chat_format: str, model: str, count: Callable[[str], int]
) -> int:
    """Tokens of an image or document block (:func:`image_tokens`, :func:`document_tokens`)."""
    if isinstance(block, Image):
        return image_tokens(block, chat_format=chat_format, model=model)
    return document_tokens(block, count)
