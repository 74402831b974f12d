"""Build bench/data/tool_routing.json.gz from the Berkeley Function Calling Leaderboard.

Reads BFCL v4's ``simple_python`` and ``multiple`` categories (JSON lines, each with a
user question, its candidate functions and, in ``possible_answer/``, the function the
question needs) and writes one compact set: every distinct function (name, description,
parameter names and descriptions — all that routing reads) and every question with the
name of its expected tool. See bench/data/README.md for source and licence.

Usage: python bench/data/build_tool_routing.py DATA_DIR
(DATA_DIR: berkeley-function-call-leaderboard/bfcl_eval/data of the gorilla repository.)
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

CATEGORIES = ("BFCL_v4_simple_python", "BFCL_v4_multiple")
OUT = Path(__file__).with_name("tool_routing.json.gz")


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _compact(function: dict[str, Any]) -> dict[str, Any]:
    """Only what a router reads; the parameters keep their names and descriptions."""
    properties = function.get("parameters", {}).get("properties", {})
    params = {
        name: {"description": str(spec.get("description", ""))}
        for name, spec in properties.items()
        if isinstance(spec, dict)
    }
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "parameters": {"type": "object", "properties": params},
    }


def main(data_dir: Path) -> None:
    tools: dict[str, dict[str, Any]] = {}
    queries: list[dict[str, Any]] = []
    for category in CATEGORIES:
        answers = {a["id"]: a for a in _lines(data_dir / "possible_answer" / f"{category}.json")}
        for entry in _lines(data_dir / f"{category}.json"):
            for function in entry["function"]:
                tools.setdefault(function["name"], _compact(function))
            expected = [next(iter(call)) for call in answers[entry["id"]]["ground_truth"]]
            text = " ".join(m["content"] for turn in entry["question"] for m in turn)
            queries.append({"id": entry["id"], "query": text, "expected": expected})
    data = {"tools": list(tools.values()), "queries": queries}
    OUT.write_bytes(gzip.compress(json.dumps(data, ensure_ascii=False).encode(), mtime=0))
    print(f"{len(tools)} tools, {len(queries)} queries -> {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
