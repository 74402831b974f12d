"""``toolwire serve``: an OpenAI-compatible proxy that fixes an open-weight server's calls."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]

DEFAULT_PORT = 8001  # vLLM's server takes 8000


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand."""
    parser = subparsers.add_parser(
        "serve",
        help="serve /v1/chat/completions in front of a model server, with correct tool calls",
        description=(
            "An OpenAI-compatible proxy: any client gets whole, valid, correctly split tool "
            "calls from an open-weight model server (vLLM, llama.cpp, Ollama, ...)."
        ),
    )
    parser.add_argument(
        "--upstream",
        required=True,
        help="http(s)://HOST/v1 (a chat server), completions:http(s)://HOST/v1 (raw "
        "completions; toolwire renders the prompt), local or local:PATH.gguf",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default 8001)")
    parser.add_argument(
        "--format",
        metavar="FAMILY[:VARIANT]",
        help="read every answer with this family's call markup (default: by model name)",
    )
    parser.add_argument("--log", metavar="PATH", help="audit log: one run per proxied request")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from ..errors import CallerError

    try:
        import uvicorn

        from ..serve import create_app
    except ModuleNotFoundError as exc:
        raise CallerError(
            f"toolwire serve needs the serve extra ({exc.name} is missing)",
            hint="pip install 'toolwire[serve]'",
        ) from None
    app = create_app(args.upstream, format=args.format, log=args.log, freeze_gc=True)
    print(f"toolwire serve: http://{args.host}:{args.port}/v1 -> {args.upstream}", flush=True)
    # uvicorn picks uvloop and httptools when installed (the serve extra has them).
    # proxy_headers off: the proxy reads neither the client's address nor its scheme,
    # and the middleware that rewrites them would wrap every request for nothing.
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
        proxy_headers=False,
    )
    return 0
