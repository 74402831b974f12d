"""``toolwire log``: the latest runs in the audit log.

toolwire log                 # id, time, model, requests, rounds, calls, failures, notices, outcome
toolwire log -n 50 --json    # -n is --limit
toolwire log --db runs.db
"""

from __future__ import annotations

import argparse
from typing import Any

from .logdb import add_db_option, db_path

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``log`` subcommand."""
    parser = subparsers.add_parser(
        "log",
        help="list the latest logged runs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_db_option(parser)
    parser.add_argument("--limit", "-n", type=int, default=20, metavar="N", help="runs to list")
    parser.add_argument("--json", action="store_true", help="print a JSON list, newest first")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the latest runs."""
    import json

    from ..observe import AuditLog
    from .arguments import check_count
    from .terminal import printable

    runs = AuditLog(db_path(args)).runs(check_count("--limit", args.limit))
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    if not runs:
        print("no runs logged yet")
        return 0
    # requests beside rounds: a round is a request whose answer held calls, and the
    # final answer takes one more, so "1 round" alone hid a run's second request.
    print(
        f"{'run':12}  {'time':19}  {'model':24}  requests  rounds  calls  failed  notices  outcome"
    )
    for r in runs:
        time = (r["time"] or "")[:19].replace("T", " ")
        line = (
            f"{r['run_id'][:12]}  {time:19}  {r['model'][:24]:24}  {r['requests']:>8}  {r['rounds']:>6}  "
            f"{r['calls']:>5}  {r['failures']:>6}  {r['notices']:>7}  {r['outcome']}"
        )
        print(printable(line))  # a log's text is shown, never obeyed
    return 0
