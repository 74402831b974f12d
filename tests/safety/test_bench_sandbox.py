"""The sandbox benchmark's contestants all run the command (correctness, never timing)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

from toolwire.safety import SandboxWarning

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_sandbox


@pytest.mark.usefixtures("isolated")
def test_every_contestant_runs(workspace: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxWarning)
        runs = bench_sandbox.contestants(workspace, ["true"])
        medians = bench_sandbox.measure(runs, 1)
    assert set(medians) == {
        "subprocess.run",
        "bwrap alone",
        "toolwire.Sandbox",
        "toolwire unisolated",
    }
