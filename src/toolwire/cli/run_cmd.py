"""``toolwire run``: run an agent on a prompt, watching its rounds and parallel calls live.

    toolwire run "What's tomorrow's weather in Beijing and Shanghai?"
    toolwire run "..." --model openai:gpt-4.1-mini
    toolwire run "..." --model openai:Qwen/Qwen3-8B --base-url http://localhost:8000/v1
    toolwire run "..." --tools mypkg.tools:TOOLS
    toolwire run --demo

Model specs: ``local`` (the default: SmolLM2-135M-Instruct in-process, needs
``toolwire[local]``), ``local:PATH.gguf``, ``local:ORG/REPO``, ``openai:NAME`` (with
``--base-url`` for vLLM, Ollama, llama.cpp...), ``responses:NAME``, ``anthropic:NAME``,
``completions:NAME`` (raw text completions parsed by toolwire). Keys come from
OPENAI_API_KEY / ANTHROPIC_API_KEY.
With no ``--tools`` the agent gets the demo tools (a code search over a bundled project
and a weather lookup over a bundled table). ``--trace`` prints every layer — requests,
deltas, assembled calls, results, the final history; ``--demo`` runs the source
articles' two demo prompts with the trace on, one round of tool calls
(``--tool-choice required --max-rounds 1`` unless given) and then the answer.
A tool that declares side effects runs only after you approve the call at the
terminal (``--yes`` allows every call; ``--deny``/``--ask`` take tool name patterns).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["DEMO_PROMPTS", "register"]

DEMO_PROMPTS = (
    'Search the code for "login" and for "session" at the same time.',
    "What's tomorrow's weather in Beijing and Shanghai?",
)
"""The two prompts of ``--demo`` (the source articles' examples)."""


def register(subparsers: Any) -> None:
    """Add the ``run`` subcommand."""
    parser = subparsers.add_parser(
        "run",
        help="run an agent on a prompt with a live view of its rounds and tool calls",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("prompt", nargs="?", help="the user prompt")
    parser.add_argument(
        "--model", default="local", metavar="SPEC", help="model spec (default: local)"
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="API root of a served model, e.g. http://localhost:8000/v1",
    )
    parser.add_argument(
        "--tools",
        action="append",
        metavar="MODULE:ATTR",
        help="tools to offer (repeatable; default: the demo tools)",
    )
    parser.add_argument("--system", help="system prompt")
    parser.add_argument(
        "--max-rounds",
        type=int,
        metavar="N",
        help="rounds with tool calls before the answer is forced (default 6; --demo: 1)",
    )
    parser.add_argument(
        "--tool-choice",
        metavar="CHOICE",
        help="auto, required, none or a tool name (default auto; --demo: required)",
    )
    parser.add_argument("--max-tokens", type=int, metavar="N", help="output tokens per model turn")
    parser.add_argument(
        "--trace", action="store_true", help="print requests, deltas, calls, results and history"
    )
    parser.add_argument(
        "--demo", action="store_true", help="run the demo prompts on the model, with --trace"
    )
    parser.add_argument(
        "--yes", "-y", action="store_true", help="allow every tool call without asking"
    )
    parser.add_argument(
        "--deny", action="append", metavar="PATTERN", help="never run tools matching PATTERN"
    )
    parser.add_argument(
        "--ask", action="append", metavar="PATTERN", help="ask before tools matching PATTERN"
    )
    from .logdb import add_log_options

    add_log_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Build the agent from the arguments and run the prompt (or the demo)."""
    from ..errors import CallerError

    if args.demo and args.prompt:
        raise CallerError("give a prompt or --demo, not both")
    if not args.demo and not args.prompt:
        raise CallerError("no prompt given", hint='toolwire run "PROMPT", or toolwire run --demo')
    agent = build_agent(args)
    prompts = DEMO_PROMPTS if args.demo else (args.prompt,)
    from .live import run_prompts

    code = run_prompts(agent, prompts, trace=args.trace or args.demo)
    for hook in agent.hooks if code == 0 else ():  # where the run went (an error: one line)
        path = getattr(hook, "path", None)
        if path is not None:
            print(f"logged to {path}: toolwire inspect last", file=sys.stderr)
    return code


def build_agent(args: argparse.Namespace) -> Any:
    """The ``Agent`` the arguments describe (no network: models connect on first use)."""
    from ..errors import CallerError
    from ..providers import resolve
    from ..run import Agent

    demo = getattr(args, "demo", False)
    # The demo's shape is one round of parallel calls, then the answer: "required" makes
    # the model call (the grammar keeps the calls well-formed), max_rounds=1 then forces
    # the answer with tool_choice="none".
    max_rounds = args.max_rounds if args.max_rounds is not None else (1 if demo else 6)
    if max_rounds < 0:
        raise CallerError(f"--max-rounds must be >= 0, got {max_rounds}")
    model = resolve(args.model, base_url=args.base_url)
    settings = {"max_tokens": args.max_tokens} if args.max_tokens else None
    from .logdb import log_target

    return Agent(
        model,
        load_tools(args.tools),
        system=args.system,
        max_rounds=max_rounds,
        tool_choice=args.tool_choice or ("required" if demo else "auto"),
        settings=settings,
        **_permissions(args),
        log=log_target(args),
    )


def _permissions(args: argparse.Namespace) -> dict[str, Any]:
    """``permissions=`` and ``approve=`` for the agent (see the module docstring)."""
    from .approve import TerminalApprover, cli_permissions

    yes = getattr(args, "yes", False)
    deny, ask = getattr(args, "deny", None), getattr(args, "ask", None)
    return {
        "permissions": cli_permissions(yes=yes, deny=deny, ask=ask),
        "approve": TerminalApprover(),
    }


def load_tools(specs: list[str] | None) -> list[Any]:
    """The tools named by ``MODULE:ATTR`` specs (a tool, a function, or a list of them).

    Raises:
        CallerError: A spec is malformed, or its module or attribute does not exist.
    """
    if not specs:
        from ..demo.tools import DEMO_TOOLS

        return list(DEMO_TOOLS)
    tools: list[Any] = []
    for spec in specs:
        value = _import_attr(spec)
        tools += list(value) if isinstance(value, (list, tuple)) else [value]
    return tools


def _import_attr(spec: str) -> Any:
    import importlib

    from ..errors import CallerError

    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise CallerError(
            f"--tools {spec!r} is not MODULE:ATTR", hint="e.g. --tools mypkg.tools:TOOLS"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CallerError(
            f"--tools {spec!r}: cannot import {module_name!r} ({exc})", hint="check PYTHONPATH"
        ) from None
    value = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise CallerError(f"--tools {spec!r}: {module_name!r} has no attribute {attr!r}")
        value = getattr(value, part)
    return value
