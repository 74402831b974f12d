"""What `toolwire serve` is for: a public benchmark's calls, through the proxy or not.

The Berkeley Function Calling Leaderboard's ``simple_python``, ``multiple`` and
``parallel`` categories (the questions and possible answers ship in the ``bfcl-eval``
package: ``pip download --no-deps bfcl-eval``, then ``--bfcl PATH.whl``, or installed),
asked of one model server three ways (``--modes``): straight (the server's own tool-call
parsing), through ``toolwire serve`` forwarding to its chat endpoint, and through
``toolwire serve`` on its ``/completions`` (toolwire renders the prompt). A case is right
when the calls match one of its possible answers: the same number of calls, each a
function of the case with every argument among the allowed values (``""`` marks an
optional one), none extra; parallel calls in any order. A benchmark, not a test.

``--then MODES`` asks those ways in a second pass over the cases the first pass ran,
until ``--then-budget`` ends: a slow way (``completions`` shares no cached prompt with
the others) covers as many cases as fit without shrinking the required comparison.

    llama-server -m MODEL.gguf --jinja --alias Qwen2.5-Coder-0.5B-Instruct --port 8080 &
    python bench/bfcl_serve.py --server http://127.0.0.1:8080/v1 --bfcl bfcl_eval-*.whl \
        --modes server,chat --then completions --budget 2400 --then-budget 600
"""

from __future__ import annotations

import argparse
import json
import os
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
MODES = ("server", "chat", "completions")


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
    return call[0] == name and _arguments_match(call[1], allowed)


def _arguments_match(arguments: dict[str, Any], allowed: dict[str, list[Any]]) -> bool:
    """Every argument among its allowed values, every one left out optional, none extra.
    A dict-valued argument's possible answer is a dict of allowed values per key
    (``[{"math": [90], ...}]``), checked the same way."""
    for key, values in allowed.items():
        if key in arguments:
            if not _allowed(arguments[key], values):
                return False
        elif "" not in values:
            return False
    return all(key in allowed for key in arguments)


def _allowed(value: Any, values: list[Any]) -> bool:
    if value in values or _loosely_in(value, values):
        return True
    return isinstance(value, dict) and any(
        isinstance(allowed, dict) and _arguments_match(value, allowed) for allowed in values
    )


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
) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The calls the client received, and what else it got (content or an error), for the log."""
    tools, names = openai_tools(question["function"])
    try:
        response = client.chat.completions.create(
            model=model,
            messages=question["question"][0],
            tools=tools,
            temperature=0,
            max_tokens=max_tokens,
        )
    except openai.APIError as error:
        return [], f"error: {error}"
    message = response.choices[0].message
    out = []
    for call in message.tool_calls or []:
        try:
            arguments = json.loads(call.function.arguments)
        except ValueError:
            arguments = {"<not json>": call.function.arguments}
        out.append((names.get(call.function.name, call.function.name), arguments))
    return out, message.content or ""


def start_proxy(upstream: str) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    # The CLI's proxy, with a read timeout a loaded CPU's answers fit in (its default is 120 s).
    serve = (
        "import sys, uvicorn; from toolwire.providers import Timeouts; from toolwire.serve import create_app;"
        "uvicorn.run(create_app(sys.argv[1], timeouts=Timeouts(read=1800, total=1800)),"
        " host='127.0.0.1', port=int(sys.argv[2]), log_level='warning')"
    )
    process = subprocess.Popen([sys.executable, "-c", serve, upstream, str(port)], env=env)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("toolwire serve did not start")


def load_average() -> float:
    """The 1-minute load average (the run's wall times mean little without it)."""
    return os.getloadavg()[0]


def interleaved(
    bfcl: str | None, categories: list[str], limit: int
) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Case 1 of every category, then case 2 of every category, ...: a run cut short by
    ``--budget`` still has about as many cases of each."""
    by_category = {c: load(bfcl, c)[:limit] for c in categories}
    out = []
    for i in range(limit):
        for category, cases in by_category.items():
            if i < len(cases):
                out.append((category, *cases[i]))
    return out


def table(records: list[dict[str, Any]], modes: list[str]) -> str:
    """Per category and in all: right of asked and share per mode, seconds per request
    (mean per mode); then, when a mode ran on fewer cases, the same on only the cases
    every mode ran (the like-for-like comparison)."""
    out = _table(records, modes)
    common = [r for r in records if all(m in r["modes"] for m in modes)]
    if len(common) < len(records):
        out += f"\n\nOn the {len(common)} cases every way ran:\n\n" + _table(common, modes)
    return out


def _table(records: list[dict[str, Any]], modes: list[str]) -> str:
    lines = [
        "| category | cases | " + " | ".join(modes) + " |",
        "|---|---:|" + "---:|" * len(modes),
    ]
    categories = list(dict.fromkeys(r["category"] for r in records))
    for category in [*categories, "all"]:
        rows = [r for r in records if category in ("all", r["category"])]
        if not rows:
            continue
        cells = []
        for mode in modes:
            asked = [r["modes"][mode]["right"] for r in rows if mode in r["modes"]]
            share = f"{sum(asked) / len(asked):.0%}" if asked else "-"
            cells.append(f"{sum(asked)}/{len(asked)} ({share})")
        name = f"**{category}**" if category == "all" else category
        lines.append(f"| {name} | {len(rows)} | {' | '.join(cells)} |")
    seconds = []
    for mode in modes:
        times = [r["modes"][mode]["seconds"] for r in records if mode in r["modes"]]
        seconds.append(f"{mode} {sum(times) / len(times):.1f}" if times else f"{mode} -")
    return "\n".join(lines) + "\n\nSeconds per request (mean): " + ", ".join(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="the model server's /v1 URL")
    parser.add_argument(
        "--model", default="Qwen2.5-Coder-0.5B-Instruct", help="the served model's name"
    )
    parser.add_argument("--bfcl", help="a bfcl_eval wheel (default: the installed package)")
    parser.add_argument("--limit", type=int, default=100, help="cases per category")
    parser.add_argument("--max-tokens", type=int, default=256, help="per answer")
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help="server (its own parsing), chat (the proxy forwards to its chat endpoint), "
        "completions (the proxy uses its /completions and renders the prompt with the tools "
        "in the family's own format)",
    )
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument(
        "--budget", type=float, default=0, help="stop starting cases after this many seconds"
    )
    parser.add_argument(
        "--then",
        default="",
        help="modes asked in a second pass over the first pass's cases (same order)",
    )
    parser.add_argument("--then-budget", type=float, default=0, help="the second pass's --budget")
    parser.add_argument("--log", help="a JSON Lines file: every case's calls and content per mode")
    parser.add_argument(
        "--score", help="a --log file: score its answers again with this checker, ask nothing"
    )
    args = parser.parse_args()
    if args.score:
        records = score(args.score, args.bfcl, args.categories.split(","))
        print(table(records, list(dict.fromkeys(m for r in records for m in r["modes"]))))
        return
    if not args.server:
        parser.error("--server is required (or --score LOG)")
    modes = args.modes.split(",")
    later = [m for m in args.then.split(",") if m]
    proxies = []
    clients = {}
    try:
        for mode in [*modes, *later]:
            url = args.server
            if mode != "server":
                process, url = start_proxy(
                    f"completions:{args.server}" if mode == "completions" else args.server
                )
                proxies.append(process)
            clients[mode] = openai.OpenAI(base_url=url, api_key="none", max_retries=0, timeout=600)
        cases = interleaved(args.bfcl, args.categories.split(","), args.limit)
        log = open(args.log, "w") if args.log else None  # noqa: SIM115 -- closed below
        try:
            first = {m: clients[m] for m in modes}
            records = run(cases, first, args, args.budget, log)
            if later:
                done = {r["id"] for r in records}
                again = [c for c in cases if c[1]["id"] in done]
                extra = {r["id"]: r for r in run(again, {m: clients[m] for m in later},
                                                 args, args.then_budget, log)}  # fmt: skip
                for record in records:
                    record["modes"].update(extra.get(record["id"], {}).get("modes", {}))
        finally:
            if log:
                log.close()
    finally:
        for process in proxies:  # SIGTERM: a background job's children ignore SIGINT
            process.terminate()
            process.wait(30)
    print(table(records, [*modes, *later]))


def score(path: str, bfcl: str | None, categories: list[str]) -> list[dict[str, Any]]:
    """A ``--log`` file's cases (both passes' lines merged), each answer scored again."""
    answers = {q["id"]: a for c in categories for q, a in load(bfcl, c)}
    records: dict[str, dict[str, Any]] = {}
    with open(path) as lines:
        for line in lines:
            logged = json.loads(line)
            record = records.setdefault(logged["id"], {**logged, "modes": {}})
            record["modes"].update(logged["modes"])
    for record in records.values():
        for answer in record["modes"].values():
            answer["right"] = right(answer["calls"], answers[record["id"]])
    return list(records.values())


def run(
    cases: list[tuple[str, dict[str, Any], dict[str, Any]]],
    clients: dict[str, openai.OpenAI],
    args: argparse.Namespace,
    budget: float,
    log: Any,
) -> list[dict[str, Any]]:
    """Every case asked of every mode in turn (one request at a time: the modes that send the
    same prompt share the server's cached prefix), until ``budget`` seconds have gone."""
    began = time.monotonic()
    print(f"{','.join(clients)}: load at start {load_average():.1f}", file=sys.stderr)
    records: list[dict[str, Any]] = []
    for category, question, answer in cases:
        if budget and time.monotonic() - began > budget:
            break
        record: dict[str, Any] = {"category": category, "id": question["id"], "modes": {}}
        for mode, client in clients.items():
            start = time.monotonic()
            calls, content = ask(client, args.model, question, args.max_tokens)
            record["modes"][mode] = {
                "right": right(calls, answer),
                "seconds": round(time.monotonic() - start, 2),
                "calls": calls,
                "content": content,
            }
        record["load"] = round(load_average(), 1)
        records.append(record)
        if log:
            log.write(json.dumps(record) + "\n")
            log.flush()
        marks = " ".join(f"{m}={int(r['right'])}" for m, r in record["modes"].items())
        print(f"{question['id']}: {marks} load {record['load']}", file=sys.stderr, flush=True)
    print(
        f"{','.join(clients)}: {len(records)} cases in {time.monotonic() - began:.0f} s, "
        f"load at end {load_average():.1f}",
        file=sys.stderr,
    )
    return records


if __name__ == "__main__":
    main()
