"""``toolwire inspect RUN``: one logged run, tool system first.

    toolwire inspect last
    toolwire inspect 3f2a --json
    toolwire inspect 3f2a --price-in 0.4 --price-out 1.6   # USD per million tokens

RUN is a full run id, an unambiguous prefix, or ``last``. It shows the rounds with
each call's status and latency, each request's notices (a repaired or dropped call,
text shaped like a call, a retry), the tool distribution, suspicious loops (one call
signature more than --loop-threshold times), failures by class with what to check
first, and tokens (and cost, given prices) per round.
"""

from __future__ import annotations

import argparse
from typing import Any

from .logdb import add_db_option, db_path

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``inspect`` subcommand."""
    parser = subparsers.add_parser(
        "inspect",
        help="show one logged run: calls, latencies, loops, failures, tokens",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_ref", metavar="RUN", help="run id, unambiguous prefix, or 'last'")
    add_db_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--loop-threshold",
        type=int,
        default=2,
        metavar="N",
        help="flag a call signature seen more than N times (default 2)",
    )
    parser.add_argument("--price-in", type=float, metavar="USD", help="per million input tokens")
    parser.add_argument("--price-out", type=float, metavar="USD", help="per million output tokens")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the analysis of one run."""
    import json

    from ..checks import check_number
    from ..errors import CallerError
    from ..observe.inspect import inspect_run
    from ..observe.query import load_run
    from ..observe.store import connect, log_errors
    from .arguments import check_count
    from .terminal import printable

    check_count("--loop-threshold", args.loop_threshold)
    if (args.price_in is None) != (args.price_out is None):
        raise CallerError("give both --price-in and --price-out, or neither")
    prices = None
    if args.price_in is not None:
        prices = tuple(
            float(check_number(name, value, positive=False, finite=True))
            for name, value in (("--price-in", args.price_in), ("--price-out", args.price_out))
        )
    path = db_path(args)
    conn = connect(path, readonly=True)
    try:
        with log_errors(path):  # a damaged log: one line naming the file
            report = inspect_run(
                load_run(conn, args.run_ref, path),
                loop_threshold=args.loop_threshold,
                prices=prices,  # type: ignore[arg-type]
            )
            text = json.dumps(report, indent=2) if args.json else render(report)
    finally:
        conn.close()
    print(printable(text))  # a log's text is shown, never obeyed
    return 0


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} ms"


def _notice_lines(request: dict[str, Any]) -> list[str]:
    """A request's notices, one line each: why an answer was labelled or a call dropped."""
    return [
        f"  notice {n['kind']}"
        + ("" if n["index"] is None else f" [{n['index']}]")
        + f": {n['message'][:200]}"
        for n in request.get("notices", ())
    ]


def render(report: dict[str, Any]) -> str:
    """The report as text."""
    lines = [
        f"run {report['run_id']}  {report['model']}  {report['time']}  {report['outcome']}",
    ]
    if report["error"]:
        lines.append(f"  error: {report['error_type']}: {report['error']}")
    if report["prompt"]:
        lines.append(f"  prompt: {report['prompt'][:120]}")
    for request in report["requests"]:
        if request.get("error"):
            status = f"HTTP {request['error_status']}, " if request.get("error_status") else ""
            lines.append(
                f"round {request['round']}: model request failed after "
                f"{_ms(request['latency_ms'])} ({status}{request['error_type']}): "
                f"{request['error'][:200]}"
            )
            lines += _notice_lines(request)
            continue  # its round's calls are listed under the request that was answered
        usage = request["usage"]
        cost = "" if usage["cost"] is None else f", ${usage['cost']:.6f}"
        lines.append(
            f"round {request['round']}: model {_ms(request['latency_ms'])} "
            f"({request['finish_reason']}, {usage['input_tokens']} in / "
            f"{usage['output_tokens']} out tokens{cost})"
        )
        if request.get("refused"):
            lines.append(f"  refused: {request['refusal_preview'][:110] or '(no text)'}")
        lines += _notice_lines(request)
        for call in report["calls"]:
            if call["round"] != request["round"]:
                continue
            flags = "".join(
                f" [{flag}]"
                for flag, on in (
                    ("early", call["early"]),
                    ("repaired", call["repaired"]),
                    (f"{call['retries']} retries", call["retries"]),
                    ("images refused", call.get("images_refused")),
                )
                if on
            )
            lines.append(
                f"  [{call['index']}] {call['tool']}({call['arguments'][:80]}) "
                f"{call['status']} {_ms(call['latency_ms']) if call['attempts'] else 'not run'}{flags}"
            )
            lines.append(f"      → {call['result_preview'][:110]}")
    from ..observe.inspect import describe_event

    lines += [describe_event(entry) for entry in report.get("timeline", ())]
    lines.append(f"rounds: {report['rounds']}  calls: {len(report['calls'])}")
    distribution = ", ".join(f"{k} x{v}" for k, v in report["tool_distribution"].items())
    lines.append(f"tools: {distribution or 'none'}")
    for loop in report["suspicious_loops"]:
        lines.append(
            f"suspicious loop: {loop['signature'][:100]} x{loop['count']} (rounds {loop['rounds']})"
        )
    for kind, count in report["failures_by_class"].items():
        lines.append(f"failures: {kind} x{count} — {report['failure_hints'].get(kind, '')}")
    usage = report["usage"]
    cost = "" if usage["cost"] is None else f", ${usage['cost']:.6f}"
    lines.append(f"tokens: {usage['input_tokens']} in / {usage['output_tokens']} out{cost}")
    return "\n".join(lines)
