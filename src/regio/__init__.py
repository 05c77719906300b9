"""regio: typed context-window regions and a cache-aware prompt layout for LLM agents."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
