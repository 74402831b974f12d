"""Demo material bundled with toolwire: recorded provider streams of the demo's
example (an agent searching "login" and "session" in parallel), the demo tools
(:mod:`.tools`) and what a right answer to each demo prompt is (:mod:`.verdict`)."""

from __future__ import annotations

from importlib import resources

__all__ = ["recorded_stream"]

STREAMS = {
    "openai": "login_session.openai.sse",
    "anthropic": "login_session.anthropic.sse",
    "responses": "login_session.responses.sse",
}


def recorded_stream(provider: str) -> bytes:
    """The recorded SSE bytes of the demo turn for ``provider`` (openai, anthropic, responses)."""
    return resources.files(__package__).joinpath("streams").joinpath(STREAMS[provider]).read_bytes()
