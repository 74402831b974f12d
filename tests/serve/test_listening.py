"""`listening`: the work runs while the client is listened for; a disconnect cancels it
at once, and nothing is left behind either way (asyncio, as uvicorn runs the proxy)."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio

from toolwire.serve.app import listening


def _client() -> tuple[anyio.Event, Any]:
    """A client's ``receive``: its body read, then ``http.disconnect`` once ``gone``."""
    gone = anyio.Event()

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    return gone, receive


def test_work_that_ends_first_gives_its_result_and_leaves_no_task() -> None:
    async def main() -> None:
        _, receive = _client()

        async def work() -> str:
            await anyio.sleep(0)
            return "done"

        before = asyncio.all_tasks()
        assert await listening(receive, work) == "done"
        await asyncio.sleep(0)  # the listener's cancellation is delivered
        await asyncio.sleep(0)
        assert asyncio.all_tasks() == before

    asyncio.run(main())


def test_a_disconnect_cancels_the_work_at_once() -> None:
    async def main() -> None:
        gone, receive = _client()
        started, closed = anyio.Event(), anyio.Event()

        async def work() -> str:
            started.set()
            try:
                await anyio.sleep_forever()  # a silent upstream
            finally:
                closed.set()
            return "never"

        async def leave() -> None:
            await started.wait()
            gone.set()

        before = asyncio.all_tasks()
        async with anyio.create_task_group() as group:
            group.start_soon(leave)
            assert await listening(receive, work) is None
        assert closed.is_set()
        await asyncio.sleep(0)
        assert asyncio.all_tasks() == before

    asyncio.run(main())


def test_a_cancellation_from_outside_is_not_taken_for_a_disconnect() -> None:
    async def main() -> None:
        _, receive = _client()
        returned: list[Any] = []

        async def work() -> str:
            await anyio.sleep_forever()
            return "never"

        with anyio.CancelScope() as outer:
            outer.cancel()
            returned.append(await listening(receive, work))
        assert outer.cancelled_caught and returned == []

    asyncio.run(main())
