"""The runner under the sandbox: the output cap holds for any sizes on both streams."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.safety.process import Running


@settings(max_examples=25, deadline=None)
@given(
    out=st.integers(0, 300_000),
    err=st.integers(0, 300_000),
    cap=st.integers(1, 200_000),
)
def test_each_stream_keeps_at_most_the_cap(out: int, err: int, cap: int) -> None:
    running = Running(
        ["sh", "-c", f"head -c {out} /dev/zero; head -c {err} /dev/zero >&2"],
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        stdin=None,
        wall_seconds=60,
        max_output=cap,
    )
    outcome = running.wait()
    assert len(outcome.stdout) == min(out, cap)
    assert ("stdout" in outcome.cut) == (out > cap)
    if out <= cap:  # once stdout overflows the command is killed; stderr may be short
        assert len(outcome.stderr) == min(err, cap)
        assert ("stderr" in outcome.cut) == (err > cap)
        assert outcome.status == 0 or err > cap
    assert not outcome.timed_out


def test_stdin_larger_than_a_pipe_buffer_is_delivered() -> None:
    text = "x" * 300_000
    running = Running(
        ["wc", "-c"],
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        stdin=text,
        wall_seconds=60,
        max_output=100,
    )
    assert running.wait().stdout.strip() == b"300000"
