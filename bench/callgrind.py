"""Instruction counts under callgrind, for the counting benchmarks (count_*.py).

Instruction counts repeat to the last digit where timings on a shared 2-core machine
move by 10%: they are what compares two versions of a hot path.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

_COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(args: list[str], *, collect: str | None = None) -> int:
    """Instructions callgrind counts for ``python ARGS`` (hash seed fixed); with
    ``collect``, only those inside that C function (``--toggle-collect``: the counting
    scripts wrap their measured runs in ``itertools.starmap``, so ``starmap_next``)."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    if collect is not None:
        cmd.insert(2, f"--toggle-collect={collect}")
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(cmd + args, capture_output=True, text=True, env=env, check=True)
    match = _COLLECTED.search(done.stderr)
    if match is None:
        raise RuntimeError(f"no callgrind total in: {done.stderr[-500:]}")
    return int(match.group(1))
