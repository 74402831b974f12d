"""``toolwire parse --model M FILE``: parse a raw model output file with its format."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .arguments import file_path

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``parse`` subcommand."""
    parser = subparsers.add_parser(
        "parse",
        help="parse an open-weight model's raw output (content, reasoning, tool calls)",
        description="Parse a raw output file with the tool-call format of MODEL and print it as JSON.",
    )
    parser.add_argument("file", type=file_path, help="raw model output ('-' for standard input)")
    parser.add_argument("--model", required=True, help="Hugging Face model id, e.g. Qwen/Qwen3-8B")
    parser.add_argument("--family", help="use this format family instead of resolving MODEL")
    parser.add_argument(
        "--tools", type=file_path, help="JSON file of OpenAI-style tool definitions (types values)"
    )
    parser.add_argument(
        "--generation-prompt", help="text the chat template appended (e.g. '<think>\\n')"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Parse the file and print the result."""
    import json

    from .. import formats
    from ..errors import CallerError

    try:
        text = sys.stdin.read() if str(args.file) == "-" else args.file.read_text(encoding="utf-8")
        tools = json.loads(args.tools.read_text(encoding="utf-8")) if args.tools else None
    except (OSError, ValueError) as exc:
        raise CallerError(f"cannot read input: {exc}", hint="check the file paths") from None
    options: dict[str, Any] = {"tools": tools, "generation_prompt": args.generation_prompt}
    if args.family:
        fmt = formats.get(args.family, **options)
    else:
        try:
            fmt = formats.for_model(args.model, **options)
        except CallerError as exc:
            # The library's hint names a Python call; here the flag is the way.
            raise CallerError(
                exc.message, hint="name the format: --family FAMILY (toolwire formats lists them)"
            ) from None
    result = fmt.parse(text, id_prefix="call_")
    print(json.dumps({"format": repr(fmt), **result.to_dict()}, ensure_ascii=False, indent=2))
    return 0
