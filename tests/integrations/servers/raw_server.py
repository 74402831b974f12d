"""A hand-written JSON-RPC server for the cases the SDK's server never produces.

``python raw_server.py bad-schema``: answers initialize, then lists a tool whose
input schema is not valid JSON Schema.
"""

from __future__ import annotations

import json
import sys

BAD_TOOL = {
    "name": "broken",
    "description": "its schema has an unknown type",
    "inputSchema": {"type": "object", "properties": {"x": {"type": "integer-ish"}}},
}


def answer(request_id: object, result: object) -> None:
    print(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}), flush=True)


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if "id" not in message:
            continue  # a notification
        if method == "initialize":
            answer(
                message["id"],
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "0"},
                },
            )
        elif method == "tools/list":
            answer(message["id"], {"tools": [BAD_TOOL]})
        else:
            print(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "no"},
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
