"""Embeddings from any OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp, ...)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from mnemoledger.ledger import InvalidInput
from mnemoledger.ledger.policy import OPENAI_MAX_ATTEMPTS
from mnemoledger.projections.embeddings.embedder import Vectors

BATCH_SIZE = 256
"""Inputs per request: well under every server's limit on inputs and tokens per call."""

_PROBE_TEXT = "dimension probe"


class OpenAIEmbedder:
    """`client.embeddings.create` in batches; vectors re-normalised, since not every model
    returns unit vectors.

    A batch is tried up to OPENAI_MAX_ATTEMPTS times (seed 004 §7) by the openai client's
    own retries: connection errors, timeouts, 408/409/429 and 5xx are retried after 0.5 s,
    then 1 s, ... (capped at 8 s); 400/401/403 and every other refusal fail at once."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout: float = 60.0,
    ) -> None:
        """`dimensions`, when given, is what the model returns (saves the probe request);
        otherwise it is learnt from the first response."""
        if not model:
            raise InvalidInput("the openai embedder needs a model name")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if key is None and base_url is None:
            raise InvalidInput(
                "the openai embedder needs an API key: set MNEMOLEDGER_OPENAI_API_KEY "
                "(or MNEMOLEDGER_OPENAI_BASE_URL for a local server)"
            )
        self.model = f"openai/{model}"
        self._model_name = model
        self._dimensions = dimensions
        import openai  # here: the client takes ~0.3 s to import, and only this embedder uses it

        # Local servers take any key, but the client refuses to start without one.
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=key or "unused",
            timeout=timeout,
            max_retries=OPENAI_MAX_ATTEMPTS - 1,
        )

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            self.passages([_PROBE_TEXT])
        assert self._dimensions is not None
        return self._dimensions

    @dimensions.setter
    def dimensions(self, value: int) -> None:
        self._dimensions = value

    def passages(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dimensions or 0), dtype=np.float32)
        batches = [
            self._embed_batch(texts[i : i + BATCH_SIZE]) for i in range(0, len(texts), BATCH_SIZE)
        ]
        return batches[0] if len(batches) == 1 else np.concatenate(batches)

    def query(self, text: str) -> Vectors:
        return self._embed_batch([text]).reshape(-1)

    def _embed_batch(self, texts: Sequence[str]) -> Vectors:
        response = self._client.embeddings.create(model=self._model_name, input=list(texts))
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(texts):
            raise RuntimeError(
                f"{self.model}: asked for {len(texts)} embeddings, the server returned {len(data)}"
            )
        vectors = np.asarray([item.embedding for item in data], dtype=np.float32)
        if self._dimensions is None:
            self._dimensions = int(vectors.shape[1])
        elif vectors.shape[1] != self._dimensions:
            raise RuntimeError(
                f"{self.model}: expected {self._dimensions}-d vectors, got {vectors.shape[1]}-d"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors /= np.maximum(norms, np.float32(1e-12))
        return vectors
