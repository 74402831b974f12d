"""The command line run in the test's own process, where a test is about what a command
prints and returns rather than about the process (its entry point, a closed pipe, a
terminal): ``toolwire.cli.main`` is all ``python -m toolwire`` runs, and a child process
spends ~0.3 s of CPU importing what the command needs before it starts."""

from __future__ import annotations

import subprocess

import pytest

from toolwire.cli import main


def toolwire_here(
    capsys: pytest.CaptureFixture[str], *args: str
) -> subprocess.CompletedProcess[str]:
    """``toolwire ARGS`` through ``main``: its exit status and what it printed, as a
    subprocess's result (argparse's exit on a bad line is the status too)."""
    capsys.readouterr()  # only this command's output
    try:
        code = main(list(args))
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 1
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["toolwire", *args], code, out, err)
