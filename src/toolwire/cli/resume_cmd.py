"""``toolwire resume RUN``: go on with a logged run that paused or whose process stopped.

    toolwire resume last
    toolwire resume 3f2a --tools calc.py:TOOLS -m openai:gpt-4.1-mini

RUN is a full run id, an unambiguous prefix, or ``last``. By default the run goes on
with the model and tools that ``toolwire run`` recorded for it (--model and --tools
replace them). Each call that waits for approval is asked about at the terminal
(y, n, or type why not; --yes allows them all); a call whose tool cannot be loaded any
more is denied, with a reason the model reads. Calls whose results are in the log never
run again; a call that was running when the process stopped runs again only if its
tool is harmless to repeat, otherwise it is answered ``interrupted``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .logdb import add_db_option, db_path

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``resume`` subcommand."""
    parser = subparsers.add_parser(
        "resume",
        help="go on with a paused or interrupted run from the audit log",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_ref", metavar="RUN", help="run id, unambiguous prefix, or 'last'")
    parser.add_argument(
        "--model", "-m", metavar="SPEC", help="model spec (default: the one the run recorded)"
    )
    parser.add_argument("--base-url", metavar="URL", help="API root of a served model")
    parser.add_argument(
        "--tools",
        action="append",
        metavar="MODULE[:ATTR]",
        help="tools to offer (repeatable; default: the ones the run recorded)",
    )
    parser.add_argument(
        "--yes", "-y", action="store_true", help="allow every tool call without asking"
    )
    add_db_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Resume the run and print its answer (or what it waits for)."""
    from ..observe import AuditLog
    from ..observe.store import connect
    from ..run import Agent
    from .approve import TerminalApprover, cli_permissions
    from .terminal import printable

    path = db_path(args)
    connect(path, readonly=True).close()  # a missing or newer log: its own clear error
    log = AuditLog(path)
    saved = log.load_run(args.run_ref)
    launch = saved.settings.get("launch") or {}
    tools = _tools(args.tools or launch.get("tools") or None)
    agent = Agent(
        _model(args, launch, saved.model),
        tools,
        system=launch.get("system"),
        max_rounds=int(saved.settings.get("max_rounds", 6)),
        permissions=cli_permissions(yes=args.yes, deny=None, ask=None),
        approve=TerminalApprover(),
        log=log,
    )
    approvals = _ask(saved, agent, TerminalApprover(), yes=args.yes)
    import getpass

    result = agent.resume_sync(saved.run_id, approvals, by=f"terminal:{getpass.getuser()}")
    if result.paused:
        waiting = ", ".join(f"{p.tool} ({p.call_id})" for p in result.pending)
        print(printable(f"paused again: waiting for {waiting}"), file=sys.stderr)
    else:
        print(printable(result.output))
    print(f"logged to {path}: toolwire inspect {result.run_id[:8]}", file=sys.stderr)
    return 0


def _model(args: argparse.Namespace, launch: dict[str, Any], logged: str) -> Any:
    from ..errors import CallerError
    from ..providers import resolve

    spec = args.model or launch.get("model")
    if not spec:
        raise CallerError(
            f"the run did not record its model spec (its model was {logged!r}, and it was "
            "not started by toolwire run)",
            hint="pass -m SPEC",
        )
    return resolve(spec, base_url=args.base_url or launch.get("base_url"))


def _tools(specs: list[str] | None) -> list[Any]:
    """The tools of each spec that loads, and the specs that do not (said on stderr:
    their pending calls are denied by the resume, with a reason)."""
    from ..errors import CallerError
    from .run_cmd import load_tools

    if not specs:
        return load_tools(None)
    tools: list[Any] = []
    for spec in specs:
        try:
            tools += load_tools([spec])
        except CallerError as exc:
            print(f"toolwire: cannot load --tools {spec}: {exc}", file=sys.stderr)
    return tools


def _ask(saved: Any, agent: Any, approver: Any, *, yes: bool) -> dict[str, bool | str]:
    """The answers to the pending calls whose tools loaded (the others are denied by
    the resume: their tool is gone)."""
    from ..turn import ToolRequest
    from ..wire.assembler import parse_arguments

    answers: dict[str, bool | str] = {}
    for item in saved.pending:
        call = item.call
        if call.name not in agent.toolset:
            continue
        if yes:
            answers[call.id] = True
            continue
        value, _ = parse_arguments(call.name, call.arguments)
        answers[call.id] = approver(ToolRequest(call.id, call.name, call.arguments, value))
    return answers
