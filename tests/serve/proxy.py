"""Run the proxy's ASGI app under a real uvicorn server on a free loopback port."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn

from toolwire.serve import create_app


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
