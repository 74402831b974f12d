"""The keyring seccomp program, run by a small classic-BPF interpreter for every
architecture it knows (the sandbox tests run it for real on this machine)."""

from __future__ import annotations

import errno
import struct

import pytest

from toolwire.safety.seccomp import ARCHITECTURES, keyring_filter

ALLOW, KILL, DENY = 0x7FFF0000, 0x80000000, 0x00050000 | errno.EPERM


def run(program: bytes, arch: int, nr: int) -> int:
    """What the kernel would decide for ``seccomp_data{nr, arch}`` (the opcodes used)."""
    data = struct.pack("=iI", nr, arch)
    instructions = list(struct.iter_unpack("=HBBI", program))
    pc, a = 0, 0
    while True:
        code, jt, jf, k = instructions[pc]
        pc += 1
        if code == 0x20:
            a = struct.unpack_from("=I", data, k)[0]
        elif code == 0x54:
            a &= k
        elif code == 0x15:
            pc += jt if a == k else jf
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")


@pytest.mark.parametrize("machine", sorted(ARCHITECTURES))
def test_the_keyring_calls_are_denied_and_nothing_else(machine: str) -> None:
    program = keyring_filter(machine)
    assert program is not None
    for arch in ARCHITECTURES[machine]:
        for nr in arch.keyring:
            assert run(program, arch.audit, nr) == DENY
        others = set(range(0, 600)) - set(arch.keyring)
        assert {run(program, arch.audit, nr) for nr in others} == {ALLOW}
    assert run(program, 0x12345678, 0) == KILL  # an architecture the table does not know


def test_x32_calls_are_masked_on_x86_64() -> None:
    program = keyring_filter("x86_64")
    assert program is not None
    x86_64 = ARCHITECTURES["x86_64"][0].audit
    assert run(program, x86_64, 0x40000000 | 250) == DENY
    assert run(program, x86_64, 0x40000000 | 1) == ALLOW


def test_an_unknown_machine_has_no_filter() -> None:
    assert keyring_filter("pdp11") is None
