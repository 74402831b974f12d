"""Run the proxy's ASGI app under a real uvicorn server on a free loopback port, and
the one way the serve tests make a chat request."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import openai
import uvicorn

from toolwire.serve import create_app

QWEN = "Qwen/Qwen2.5-7B-Instruct"


def chat_body(model: str = QWEN, *, content: str = "go", **fields: Any) -> dict[str, Any]:
    """A ``/v1/chat/completions`` body: one user message saying ``content``, and ``fields``."""
    return {"model": model, "messages": [{"role": "user", "content": content}], **fields}


def chat(client: openai.OpenAI, model: str = QWEN, **fields: Any) -> Any:
    """One request through the official SDK (:func:`chat_body`'s arguments), its raw
    response kept for the headers: ``.parse()`` is the completion, or the stream."""
    return client.chat.completions.with_raw_response.create(**chat_body(model, **fields))


@contextlib.contextmanager
def running_proxy(upstream: str, **options: Any) -> Iterator[str]:
    """The proxy in front of ``upstream``, serving until the block ends; yields its ``/v1``."""
    app = create_app(upstream, **options)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:  # set by uvicorn once its socket listens
        if not thread.is_alive():
            raise RuntimeError("the proxy did not start")
        thread.join(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(10)
