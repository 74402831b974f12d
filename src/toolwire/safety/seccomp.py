"""The sandbox's seccomp filter: no kernel keyring (``add_key``, ``request_key``, ``keyctl``).

Keys live in keyrings the kernel keeps per uid (the user keyring) and per session, and
they outlive the process that added them. Every sandbox of a root caller runs as uid
65534, so without this filter one command could leave a key — a secret it read, or
one a later command should not see — that any later sandbox reads back. The filter
makes the three keyring system calls fail with ``EPERM`` inside the sandbox;
bubblewrap loads it (``--seccomp FD``) right before it starts the command, with
``no_new_privs`` set, and it binds every process the command starts.

The program is classic BPF over ``struct seccomp_data`` (``nr`` at offset 0, ``arch``
at 4), written out here (a dozen instructions do not call for ``libseccomp``): for
each architecture the kernel may report — the machine's own and its 32-bit compat
one — it loads the system call number and compares it with that architecture's
three numbers (from the kernel's syscall tables); a call of an architecture not in
the table is killed, as an unknown ABI could otherwise reach the keyring under other
numbers. On x86-64 the x32 bit is masked off first (x32 uses the same numbers).
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

__all__ = ["ARCHITECTURES", "keyring_filter"]

# struct sock_filter: u16 code, u8 jt, u8 jf, u32 k (native byte order).
_INSTRUCTION = struct.Struct("=HBBI")
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS: A = data[k]
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K: pc += (A == k) ? jt : jf
_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K: A &= k
_RET_K = 0x06  # BPF_RET | BPF_K: return k
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data

_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS
_DENY = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO | EPERM
_X32_MASK = 0xBFFFFFFF  # clears __X32_SYSCALL_BIT (0x40000000)


@dataclass(frozen=True)
class _Arch:
    audit: int  # AUDIT_ARCH_* value the kernel reports in seccomp_data.arch
    keyring: tuple[int, int, int]  # add_key, request_key, keyctl
    mask: int | None = None  # applied to nr before comparing


_I386 = _Arch(0x40000003, (286, 287, 288))
_ARM = _Arch(0x40000028, (309, 310, 311))
_GENERIC = (217, 218, 219)  # the asm-generic table (arm64, riscv, loongarch)
ARCHITECTURES: dict[str, tuple[_Arch, ...]] = {
    "x86_64": (_Arch(0xC000003E, (248, 249, 250), mask=_X32_MASK), _I386),
    "aarch64": (_Arch(0xC00000B7, _GENERIC), _ARM),
    "riscv64": (_Arch(0xC00000F3, _GENERIC),),
    "loongarch64": (_Arch(0xC0000102, _GENERIC),),
    "ppc64le": (_Arch(0xC0000015, (269, 270, 271)),),
    "s390x": (_Arch(0x80000016, (278, 279, 280)),),
}
"""The architectures the filter knows, by ``platform.machine()``."""


def keyring_filter(machine: str | None = None) -> bytes | None:
    """The BPF program (``struct sock_filter[]``) for bwrap's ``--seccomp``, or ``None``
    where ``machine`` (default: this one) is not in :data:`ARCHITECTURES` (the sandbox
    then refuses to run)."""
    arches = ARCHITECTURES.get(machine or platform.machine())
    if arches is None:
        return None
    program: list[tuple[int, int, int, int]] = []
    for arch in arches:
        block = _block(arch)
        # Not this architecture: jump over its block to the next check.
        program.append((_LD_W_ABS, 0, 0, _ARCH))
        program.append((_JEQ_K, 0, len(block), arch.audit))
        program += block
    program.append((_RET_K, 0, 0, _KILL))  # an architecture not in the table
    return b"".join(_INSTRUCTION.pack(*instruction) for instruction in program)


def _block(arch: _Arch) -> list[tuple[int, int, int, int]]:
    """Load nr; each keyring number jumps to the block's last instruction (deny)."""
    block: list[tuple[int, int, int, int]] = [(_LD_W_ABS, 0, 0, _NR)]
    if arch.mask is not None:
        block.append((_AND_K, 0, 0, arch.mask))
    numbers = arch.keyring
    for position, number in enumerate(numbers):
        to_deny = len(numbers) - position  # the remaining compares, then the allow
        block.append((_JEQ_K, to_deny, 0, number))
    block.append((_RET_K, 0, 0, _ALLOW))
    block.append((_RET_K, 0, 0, _DENY))
    return block
