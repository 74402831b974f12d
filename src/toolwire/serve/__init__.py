"""``toolwire serve``: an OpenAI-compatible proxy in front of an open-weight model server.

Any client of the Chat Completions API (the openai SDK, LangChain, the OpenAI Agents
SDK, a TypeScript app) gets the tool calls toolwire's parsers and assembler make of the
model's output: whole, valid, correctly split, with ids the model's family accepts
back. Needs the ``toolwire[serve]`` extra (Starlette, uvicorn); ``import toolwire``
never imports it.

Run it as ``toolwire serve --upstream URL`` (``python -m toolwire serve ...``), or
mount :func:`create_app` under your own ASGI server.
"""

from __future__ import annotations

from .app import create_app

__all__ = ["create_app"]
