"""docs/ray.md's blocks never start a Ray instance beside the Ray tests' own."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from . import test_snippets
from .snippets import blocks

RAY_PAGE = blocks(Path(__file__).parents[2] / "docs" / "ray.md")
HOLD = (
    "import fcntl, sys\n"
    "lock = open(sys.argv[1], 'w')\n"
    "fcntl.flock(lock, fcntl.LOCK_EX)\n"
    "print('held', flush=True)\n"
    "sys.stdin.readline()\n"
)


def test_the_ray_page_waits_while_another_process_has_its_instance_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = tmp_path / "ray.lock"
    monkeypatch.setattr(test_snippets, "RAY_LOCK", lock)
    monkeypatch.delitem(sys.modules, "ray", raising=False)  # no instance in this process
    with subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline() == "held\n"  # the Ray tests' instance is up
        entered = threading.Event()

        def run_page() -> None:
            with test_snippets._one_ray_instance(RAY_PAGE, {}):
                entered.set()

        page = threading.Thread(target=run_page)
        page.start()
        assert not entered.wait(0.2)  # held back (a broken lock enters at once)
        holder.stdin.write("\n")  # the Ray tests are done with their instance
        holder.stdin.flush()
        assert entered.wait(120)
        page.join()


def test_the_ray_page_connects_to_a_named_instance_without_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = tmp_path / "ray.lock"
    monkeypatch.setattr(test_snippets, "RAY_LOCK", lock)
    env = {"RAY_ADDRESS": "127.0.0.1:6379"}
    with test_snippets._one_ray_instance(RAY_PAGE, env):
        assert env == {"RAY_ADDRESS": "127.0.0.1:6379"} and not lock.exists()
