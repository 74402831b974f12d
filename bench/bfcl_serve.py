"""What `toolwire serve` is for: a public benchmark's calls, through the proxy or not.

The Berkeley Function Calling Leaderboard's ``simple_python``, ``multiple`` and
``parallel`` categories (the questions and possible answers ship in the ``bfcl-eval``
package: ``pip download --no-deps bfcl-eval``, then ``--bfcl PATH.whl``, or installed),
asked of one model server twice: straight (the server's own tool-call parsing) and
through ``toolwire serve`` in front of it. A case is right when the calls match one of
its possible answers: the same number of calls, each a function of the case with every
argument among the allowed values (``""`` marks an optional one), none extra; parallel
calls in any order. A benchmark, not a test (a few hundred cases on the CPU).

    python -m llama_cpp.server --model MODEL.gguf --port 8080 &   # or llama-server --jinja
    python bench/bfcl_serve.py --server http://127.0.0.1:8080/v1 --bfcl bfcl_eval-*.whl --limit 100
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import httpx
import openai

ROOT = Path(__file__).resolve().parents[1]
CATEGORIES = ("simple_python", "multiple", "parallel")


def load(bfcl: str | None, category: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(question, possible answer) pairs of one category."""
    names = (f"bfcl_eval/data/BFCL_v4_{category}.json",
             f"bfcl_eval/data/possible_answer/BFCL_v4_{category}.json")  # fmt: skip
    if bfcl:
        with zipfile.ZipFile(bfcl) as wheel:
            texts = [wheel.read(name).decode() for name in names]
    else:
        import bfcl_eval  # type: ignore[import-not-found]

        base = Path(bfcl_eval.__file__).parent.parent
        texts = [(base / name).read_text() for name in names]
    questions, answers = ([json.loads(line) for line in t.splitlines() if line] for t in texts)
    by_id = {a["id"]: a for a in answers}
    return [(q, by_id[q["id"]]) for q in questions]


def openai_tools(functions: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """BFCL functions as Chat tools (``dict`` → ``object``; dots are not allowed in names)."""

    def fix(schema: Any) -> Any:
        if isinstance(schema, dict):
            out = {k: fix(v) for k, v in schema.items()}
            if out.get("type") == "dict":
                out["type"] = "object"
            if out.get("type") == "float":
                out["type"] = "number"
            if out.get("type") == "tuple":
                out["type"] = "array"
            return out
        if isinstance(schema, list):
            return [fix(v) for v in schema]
        return schema

    names = {f["name"].replace(".", "_"): f["name"] for f in functions}
    tools = [{"type": "function", "function": {"name": f["name"].replace(".", "_"),
              "description": f.get("description", ""), "parameters": fix(f["parameters"])}}
             for f in functions]  # fmt: skip
    return tools, names


def matches(call: tuple[str, dict[str, Any]], truth: dict[str, dict[str, list[Any]]]) -> bool:
    ((name, allowed),) = truth.items()
    if call[0] != name:
        return False
    for key, values in allowed.items():
        if key in call[1]:
            if call[1][key] not in values and not _loosely_in(call[1][key], values):
                return False
        elif "" not in values:
            return False
    return all(key in allowed for key in call[1])


def _loosely_in(value: Any, values: list[Any]) -> bool:
    """Numbers compare as numbers, strings without case (BFCL's checker is as lenient)."""
    for allowed in values:
        if (
            isinstance(value, (int, float))
            and isinstance(allowed, (int, float))
            and value == allowed
        ):
            return True
        if isinstance(value, str) and isinstance(allowed, str) and value.lower() == allowed.lower():
            return True
    return False


def right(calls: list[tuple[str, dict[str, Any]]], answer: dict[str, Any]) -> bool:
    truths = list(answer["ground_truth"])
    if len(calls) != len(truths):
        return False
    for call in calls:
        hit = next((t for t in truths if matches(call, t)), None)
        if hit is None:
            return False
        truths.remove(hit)
    return True


def ask(
    client: openai.OpenAI, model: str, question: dict[str, Any], max_tokens: int
) -> list[tuple[str, dict[str, Any]]]:
    tools, names = openai_tools(question["function"])
    try:
        response = client.chat.completions.create(
            model=model,
            messages=question["question"][0],
            tools=tools,
            temperature=0,
            max_tokens=max_tokens,
        )
    except openai.APIError:
        return []
    out = []
    for call in response.choices[0].message.tool_calls or []:
        try:
            arguments = json.loads(call.function.arguments)
        except ValueError:
            arguments = {"<not json>": call.function.arguments}
        out.append((names.get(call.function.name, call.function.name), arguments))
    return out


def start_proxy(upstream: str) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen(
        [sys.executable, "-m", "toolwire", "serve", "--upstream", upstream, "--port", str(port)],
        env=env,
    )
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("toolwire serve did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True, help="the model server's /v1 URL")
    parser.add_argument(
        "--model", default="Qwen2.5-Coder-0.5B-Instruct", help="the served model's name"
    )
    parser.add_argument("--bfcl", help="a bfcl_eval wheel (default: the installed package)")
    parser.add_argument("--limit", type=int, default=100, help="cases per category")
    parser.add_argument("--max-tokens", type=int, default=256, help="per answer")
    parser.add_argument(
        "--completions",
        action="store_true",
        help="the proxy uses the server's /completions (toolwire renders the prompt with the "
        "tools in the family's own format) instead of forwarding to its chat endpoint",
    )
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    args = parser.parse_args()
    proxy, proxy_url = start_proxy(
        f"completions:{args.server}" if args.completions else args.server
    )
    try:
        clients = {
            "server": openai.OpenAI(
                base_url=args.server, api_key="none", max_retries=0, timeout=600
            ),
            "toolwire serve": openai.OpenAI(
                base_url=proxy_url, api_key="none", max_retries=0, timeout=600
            ),
        }
        print(f"| category | cases | {' | '.join(clients)} |\n|---|---:|" + "---:|" * len(clients))
        for category in args.categories.split(","):
            cases = load(args.bfcl, category)[: args.limit]
            scores = {
                name: sum(right(ask(c, args.model, q, args.max_tokens), a) for q, a in cases)
                for name, c in clients.items()
            }
            cells = " | ".join(f"{scores[n]} ({scores[n] / len(cases):.0%})" for n in clients)
            print(f"| {category} | {len(cases)} | {cells} |", flush=True)
    finally:
        proxy.send_signal(signal.SIGINT)
        proxy.wait(30)


if __name__ == "__main__":
    main()
