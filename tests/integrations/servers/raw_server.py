"""A hand-written JSON-RPC server for the misbehaving servers the SDK's server never is.

``python raw_server.py [MODE]`` answers ``initialize``, then behaves as MODE says:

* ``bad-schema`` (the default): lists a tool whose input schema is not valid JSON Schema;
* ``silent-list``: never answers ``tools/list``;
* ``endless-pages``: answers every ``tools/list`` with one new tool and a ``nextCursor``;
* ``many-tools``: lists 5000 tools in one page;
* ``silent-reload``: lists ``grow``; calling it sends ``tools/list_changed``, and every
  later ``tools/list`` goes unanswered;
* ``redos``: lists ``match``, whose argument has the pattern ``^(a+)+$`` (catastrophic
  backtracking in a backtracking engine).
"""

from __future__ import annotations

import json
import sys
from typing import Any

BAD_TOOL = {
    "name": "broken",
    "description": "its schema has an unknown type",
    "inputSchema": {"type": "object", "properties": {"x": {"type": "integer-ish"}}},
}
EMPTY_SCHEMA = {"type": "object", "properties": {}}
REDOS_TOOL = {
    "name": "match",
    "description": "takes a run of a's",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string", "pattern": "^(a+)+$"}},
        "required": ["text"],
    },
}


def send(message: dict[str, Any]) -> None:
    print(json.dumps({"jsonrpc": "2.0", **message}), flush=True)


def answer(request_id: object, result: object) -> None:
    send({"id": request_id, "result": result})


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": name, "inputSchema": EMPTY_SCHEMA}


class Server:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.lists = 0
        self.pages = 0

    def tools_list(self, request_id: object) -> None:
        self.lists += 1
        mode = self.mode
        if mode == "silent-list" or (mode == "silent-reload" and self.lists > 1):
            return  # never answered
        if mode == "endless-pages":
            self.pages += 1
            page = {"tools": [tool(f"t{self.pages}")], "nextCursor": f"c{self.pages}"}
            answer(request_id, page)
        elif mode == "many-tools":
            answer(request_id, {"tools": [tool(f"t{i}") for i in range(5000)]})
        elif mode == "silent-reload":
            answer(request_id, {"tools": [tool("grow")]})
        elif mode == "redos":
            answer(request_id, {"tools": [REDOS_TOOL]})
        else:
            answer(request_id, {"tools": [BAD_TOOL]})

    def tools_call(self, request_id: object, name: str) -> None:
        if self.mode == "silent-reload" and name == "grow":
            send({"method": "notifications/tools/list_changed"})
        answer(request_id, {"content": [{"type": "text", "text": f"{name} done"}]})

    def handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if "id" not in message:
            return  # a notification
        if method == "initialize":
            answer(
                message["id"],
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "raw", "version": "0"},
                },
            )
        elif method == "tools/list":
            self.tools_list(message["id"])
        elif method == "tools/call":
            self.tools_call(message["id"], message["params"]["name"])
        else:
            send({"id": message["id"], "error": {"code": -32601, "message": "no"}})


def main() -> None:
    server = Server(sys.argv[1] if len(sys.argv) > 1 else "bad-schema")
    for line in sys.stdin:
        server.handle(json.loads(line))


if __name__ == "__main__":
    main()
