"""The stage bookkeeping of ``scripts/test`` (scripts/stages.sh), run by real bash: each
stage is announced before it starts, and the end says how long each one took."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

STAGES = Path(__file__).parents[1] / "scripts" / "stages.sh"


def _bash(body: str) -> subprocess.CompletedProcess[str]:
    script = f"set -euo pipefail\nsource {STAGES}\ntrap stages_summary EXIT\n{body}"
    return subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=False, timeout=60
    )


def test_each_stage_is_announced_and_timed() -> None:
    result = _bash('stage one "the first"\necho work\nstage two "the second"\n')
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:4] == ["== one: the first", "work", "== two: the second", "== time per stage"]
    rows = [re.fullmatch(r"  (\S+) +(\d+) s", line) for line in lines[4:]]
    assert all(rows) and [m.group(1) for m in rows if m] == ["one", "two", "total"]


def test_a_failing_stage_is_named_and_keeps_its_status() -> None:
    result = _bash('stage one "ok"\nstage two "fails"\nfalse\necho never\n')
    assert result.returncode == 1
    assert "never" not in result.stdout
    assert result.stdout.splitlines()[-1] == "== failed in stage: two (exit 1)"
    assert "  two " in result.stdout  # the failed stage's time is in the table too


def test_no_stage_prints_no_table() -> None:
    result = _bash("echo nothing\n")
    assert result.returncode == 0 and result.stdout == "nothing\n"
