"""Chat Completions chunks (``toolwire.testing``) as the SSE bytes a server sends."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def as_sse(chunks: Sequence[dict[str, Any]]) -> bytes:
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return body + b"data: [DONE]\n\n"
