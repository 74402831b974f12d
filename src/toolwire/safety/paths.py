"""``PathGuard``: keep a file tool inside its allowed directories.

A path is resolved first — relative paths against the first root, every symbolic
link and ``..`` followed (``os.path.realpath``) — and only then compared with the
roots (themselves resolved once, at construction). So ``../../etc/passwd``, an
absolute path elsewhere, and a link inside a root that points out of it are all
refused. So is a path the file system could not take: a component longer than the
file system's ``NAME_MAX``, a path longer than ``PATH_MAX``, text that is not a file
name (a NUL, a lone surrogate). Error messages quote the path as the model gave it
and never the host's directories, so a refused call does not reveal where the tool
is installed; :meth:`PathGuard.hide_roots` does the same for the ``OSError`` a tool
meets afterwards (its file names become relative to the root).

A check is about the moment it runs: a link swapped in between the check and the
open can still race it (the sandbox, not the guard, is the defence against code that
can create links).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..errors import CallerError, PathNotAllowedError

__all__ = ["PathGuard"]


class PathGuard:
    """Resolves paths and refuses any outside the allowed roots.

    Args:
        roots: The allowed directories (at least one; each must exist). Relative
            paths are taken relative to the first.

    Raises:
        CallerError: No roots, or a root is not an existing directory.
    """

    def __init__(self, roots: Sequence[str | os.PathLike[str]] | str | os.PathLike[str]) -> None:
        if isinstance(roots, (str, os.PathLike)):
            roots = [roots]
        if not isinstance(roots, Sequence) or not roots:
            raise CallerError("PathGuard needs at least one allowed directory")
        resolved: list[Path] = []
        for root in roots:
            if not isinstance(root, (str, os.PathLike)) or not Path(root).is_dir():
                raise CallerError(f"PathGuard root {root!r} is not an existing directory")
            resolved.append(Path(os.path.realpath(root)))
        self.roots: tuple[Path, ...] = tuple(resolved)
        self.name_max = min(_name_max(root) for root in resolved)

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The real path of ``path``, if it lies inside a root.

        Raises:
            PathNotAllowedError: It resolves outside every root, or is not a valid path.
        """
        given = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
        if not isinstance(given, str) or "\0" in given:
            raise PathNotAllowedError(f"{_shown(path)} is not a valid path")
        candidate = os.path.join(self.roots[0], given)  # an absolute `given` wins
        self._check_lengths(given, candidate)
        real = Path(os.path.realpath(candidate))
        if not any(real == root or real.is_relative_to(root) for root in self.roots):
            raise PathNotAllowedError(
                f"the path {given!r} is outside the directories this tool may use"
            )
        return real

    def _check_lengths(self, given: str, candidate: str) -> None:
        """Refuse what the file system would refuse with an error naming the host path."""
        try:
            encoded = os.fsencode(candidate)
        except UnicodeEncodeError:  # a lone surrogate: no file can have this name
            raise PathNotAllowedError(f"{_shown(given)} is not a valid file name") from None
        longest = max((len(part) for part in encoded.split(b"/")), default=0)
        if longest > self.name_max:
            raise PathNotAllowedError(
                f"a component of the path {_shown(given)} is {longest} bytes long; "
                f"the most is {self.name_max}"
            )
        if len(encoded) >= _PATH_MAX:
            raise PathNotAllowedError(
                f"the path {_shown(given)} is too long ({len(encoded)} bytes with its root)"
            )

    def hide_roots(self, error: OSError) -> OSError:
        """``error`` with its file names relative to the roots, for a tool to raise.

        A file tool that meets an ``OSError`` after :meth:`resolve` (a missing file, a
        permission) raises this copy instead, so its error result does not show where
        the tool is installed: ``raise guard.hide_roots(exc) from None``.
        """
        if error.filename is None:
            return error  # names no file
        names = [self._relative_name(n) for n in (error.filename, error.filename2)]
        if names[1] is None:
            return OSError(error.errno, error.strerror, names[0])
        return OSError(error.errno, error.strerror, names[0], None, names[1])

    def _relative_name(self, name: object) -> str | None:
        if name is None:
            return None
        text = os.fsdecode(name) if isinstance(name, (str, bytes)) else str(name)
        absolute = Path(os.path.abspath(os.path.join(self.roots[0], text)))
        for root in self.roots:
            if absolute == root:
                return "."
            if absolute.is_relative_to(root):
                return absolute.relative_to(root).as_posix()
        return absolute.name  # outside every root: the last component only

    def allows(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` resolves inside a root (:meth:`resolve` without the error)."""
        try:
            self.resolve(path)
        except PathNotAllowedError:
            return False
        return True

    def relative(self, path: Path) -> str:
        """``path`` (a resolved path inside a root) as the model should see it."""
        for root in self.roots:
            if path == root:
                return "."
            if path.is_relative_to(root):
                return path.relative_to(root).as_posix()
        raise PathNotAllowedError("the path is outside the directories this tool may use")


_PATH_MAX = 4096  # Linux's PATH_MAX, bytes with the final NUL
_SHOWN = 120  # characters of a refused path quoted back


def _name_max(root: Path) -> int:
    """The longest file name (bytes) the file system under ``root`` takes."""
    try:
        return int(os.pathconf(root, "PC_NAME_MAX"))
    except (OSError, ValueError):
        return 255  # NAME_MAX of every common Linux file system


def _shown(path: object) -> str:
    """A path as quoted in a refusal: short, and printable even with surrogates."""
    text = repr(path)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."
