"""``toolwire pipeline``: one recorded turn through the four layers, offline.

1. wire — the events the decoder emits, read in chunks of ``--read`` bytes;
2. assembly — the calls put back together by index;
3. two shapes — the verbatim call kept in history and the parsed execution request;
4. history — one assistant message carrying every call, then exactly one result per
   call (the bundled demo tools answer them), in the provider's own message format.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from .arguments import file_path

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``pipeline`` subcommand."""
    parser = subparsers.add_parser(
        "pipeline",
        help="show a recorded multi-tool-call stream going through the four layers",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--provider", choices=["openai", "anthropic", "responses"], default="openai"
    )
    parser.add_argument(
        "--file", type=file_path, help="a recorded SSE stream (default: the bundled demo turn)"
    )
    parser.add_argument(
        "--read", type=int, default=64, metavar="BYTES", help="bytes per read (default 64)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the pipeline and print each layer."""
    from ..demo import recorded_stream
    from ..errors import CallerError
    from .arguments import check_count
    from .terminal import printable

    read = check_count("--read", args.read)
    try:
        data = args.file.read_bytes() if args.file else recorded_stream(args.provider)
    except OSError as exc:
        raise CallerError(
            f"cannot read --file {str(args.file)!r}: {exc.strerror or exc}",
            hint="give a recorded SSE stream (a file of 'data: ...' lines)",
        ) from None
    for line in render(args.provider, data, read):
        print(printable(line))  # a recorded stream's text is shown, never obeyed
    return 0


def render(provider: str, data: bytes, read: int) -> list[str]:
    """The four layers for one recorded stream, as printable lines."""
    import json

    from ..wire import (
        AnthropicStream,
        OpenAIChatStream,
        OpenAIResponsesStream,
        StreamDecoder,
        ToolCallReady,
    )

    decoders: dict[str, Callable[[], StreamDecoder]] = {
        "openai": OpenAIChatStream,
        "anthropic": AnthropicStream,
        "responses": OpenAIResponsesStream,
    }
    decoder = decoders[provider]()
    events = []
    for start in range(0, len(data), read):
        events += decoder.feed_bytes(data[start : start + read])
    turn = decoder.close()
    lines = [
        f"== 1. wire: {len(events)} events from {len(data)} bytes of {provider} SSE, read {read} bytes at a time"
    ]
    for number, event in enumerate(events, 1):
        lines.append(f"  {number:3} {_describe(event)}")
        if isinstance(event, ToolCallReady):
            lines.append(
                f"      ^ call {event.call.id} is complete at event {number} of {len(events)}: it can start now"
            )
    lines.append(
        "== 2. assembly: calls by index (id from first appearance, name and arguments concatenated)"
    )
    for request in turn.requests:
        lines.append(f"  [{request.index}] {request.id} {request.name} {request.raw_arguments}")
    lines.append("== 3. two shapes of each call")
    for call, request in zip(turn.tool_calls, turn.requests, strict=False):
        shape = {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        lines.append(f"  history:   {json.dumps(shape, ensure_ascii=False)}")
        execution = {
            "id": request.id,
            "name": request.name,
            "input": request.input,
            "error": request.error,
        }
        lines.append(f"  execution: {json.dumps(execution, ensure_ascii=False)}")
    lines.append(
        f"== 4. history: 1 assistant message with {len(turn.tool_calls)} calls, then one result per call"
    )
    for message in _history(provider, turn):
        lines.append(f"  {json.dumps(message, ensure_ascii=False)}")
    for notice in turn.notices:
        lines.append(f"  notice: {notice.kind}: {notice.message}")
    return lines


def _describe(event: Any) -> str:
    fields = ", ".join(f"{k}={v!r}" for k, v in _fields(event).items())
    return f"{type(event).__name__}({fields})"


def _fields(event: Any) -> dict[str, Any]:
    from ..wire import ToolCallReady

    if isinstance(event, ToolCallReady):
        return {"index": event.index, "id": event.call.id, "input": event.request.input}
    return {name: getattr(event, name) for name in event.__match_args__}


def _history(provider: str, turn: Any) -> list[Any]:
    """The assistant message and one result per call, encoded for ``provider``."""
    from ..demo.tools import DEMO_TOOLS
    from ..history import to_anthropic, to_openai_chat, to_responses_input
    from ..messages import ToolResult
    from ..tools import Toolset, outcomes

    toolset = Toolset(DEMO_TOOLS)
    messages: list[Any] = [turn.message]
    for request in turn.requests:
        validation = toolset.validate(request)
        if not validation.ok:
            messages.append(outcomes.error_result(request.id, validation))
            continue
        try:
            content = str(toolset[request.name].invoke(validation.input))
            messages.append(ToolResult(request.id, request.name, content))
        except Exception as exc:  # a failing tool still answers its call
            messages.append(outcomes.failure_result(request.id, request.name, exc))
    if provider == "anthropic":
        return to_anthropic(messages)[1]
    if provider == "responses":
        return to_responses_input(messages)[1]
    return to_openai_chat(messages)
