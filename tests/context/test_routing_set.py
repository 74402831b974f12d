"""The default router on the public tool-selection set (bench/data): the recall target.

Quality, not speed: the cost is measured in bench/bench_context.py.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from toolwire import ToolRouter

DATA = Path(__file__).resolve().parents[2] / "bench" / "data" / "tool_routing.json.gz"


def test_the_set_is_large_and_bm25_recall_at_15_is_at_least_095() -> None:
    data = json.loads(gzip.decompress(DATA.read_bytes()))
    tools, queries = data["tools"], data["queries"]
    assert len(tools) >= 300 and len(queries) >= 300
    router = ToolRouter(tools)
    hits = sum(
        any(name in router.select(q["query"], 15) for name in q["expected"]) for q in queries
    )
    assert hits / len(queries) >= 0.95
