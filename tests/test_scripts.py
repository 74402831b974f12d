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
    assert lines[:3] == ["== one: the first", "work", "== two: the second"]
    assert re.fullmatch(r"== time per stage \(wall, .*load average \S+ at the start.*\)", lines[3])
    rows = [re.fullmatch(r"  (\S+) +(\d+) s +(\d+) s cpu", line) for line in lines[4:]]
    assert all(rows) and [m.group(1) for m in rows if m] == ["one", "two", "total"]


def test_a_stage_counts_the_cpu_its_processes_use() -> None:
    # About a second of CPU in a child process: counted in its stage, not the next.
    busy = "python3 -c 'import time; t = time.process_time()\nwhile time.process_time() - t < 1.2: pass'"
    result = _bash(f'stage busy "spins"\n{busy}\nstage idle "waits"\n')
    assert result.returncode == 0, result.stderr
    rows = {
        m.group(1): int(m.group(2))
        for m in re.finditer(r"^  (\S+) +\d+ s +(\d+) s cpu$", result.stdout, re.M)
    }
    assert rows["busy"] >= 1 and rows["idle"] == 0


def test_a_failing_stage_is_named_and_keeps_its_status() -> None:
    result = _bash('stage one "ok"\nstage two "fails"\nfalse\necho never\n')
    assert result.returncode == 1
    assert "never" not in result.stdout
    assert result.stdout.splitlines()[-1] == "== failed in stage: two (exit 1)"
    assert "  two " in result.stdout  # the failed stage's time is in the table too


def test_no_stage_prints_no_table() -> None:
    result = _bash("echo nothing\n")
    assert result.returncode == 0 and result.stdout == "nothing\n"


# -- scripts/demo: never silent while it installs ------------------------------------------

STUB = """#!/usr/bin/env bash
# Stands in for .venv's python/toolwire: says how it was called (the real install
# compiles llama.cpp for minutes; what is tested here is what the script says, and when).
echo "STUB $(basename "$0") $*"
if [ "$1" = "-c" ]; then exit "${LLAMA_MISSING:-1}"; fi
"""


def _demo_checkout(tmp_path: Path) -> Path:
    root = Path(__file__).parents[1]
    (tmp_path / "scripts").mkdir()
    for name in ("scripts/demo", "pyproject.toml", "hatch_build.py"):
        (tmp_path / name).write_text((root / name).read_text())
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    for name in ("python", "toolwire"):
        stub = tmp_path / ".venv" / "bin" / name
        stub.write_text(STUB)
        stub.chmod(0o755)
    return tmp_path


def _demo(checkout: Path, llama_missing: str = "1") -> list[str]:
    result = subprocess.run(
        ["bash", str(checkout / "scripts" / "demo"), "--events"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "LLAMA_MISSING": llama_missing},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_demo_says_what_it_installs_core_first(tmp_path: Path) -> None:
    lines = _demo(_demo_checkout(tmp_path))

    def where(part: str) -> int:
        return next(i for i, line in enumerate(lines) if part in line)

    assert lines[0].startswith("demo: installing toolwire into .venv")  # before any pip
    core = where("STUB python -m pip install --quiet -e .")
    hint = where(".venv/bin/toolwire pipeline")
    build = where("building llama.cpp, once: a few minutes on 2 cores")
    local = where("STUB python -m pip install -e .[local]")  # no --quiet: pip's progress
    assert 0 < core < hint < build < local < where("STUB toolwire run --demo --events")
    assert "491 MB" in lines[build]


def test_demo_installs_once_and_knows_a_built_runtime(tmp_path: Path) -> None:
    checkout = _demo_checkout(tmp_path)
    (checkout / ".venv" / ".toolwire-demo-install").write_text("stale\n")
    lines = _demo(checkout, llama_missing="0")
    assert any("llama.cpp is already built" in line for line in lines)
    assert not any("building llama.cpp" in line for line in lines)
    assert _demo(checkout) == ["STUB toolwire run --demo --events"]  # installed: no install
