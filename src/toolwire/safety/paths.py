"""``PathGuard``: keep a file tool inside its allowed directories.

A path is resolved first — relative paths against the first root, every symbolic
link and ``..`` followed (``os.path.realpath``) — and only then compared with the
roots (themselves resolved once, at construction). So ``../../etc/passwd``, an
absolute path elsewhere, and a link inside a root that points out of it are all
refused. Error messages quote the path as the model gave it and never the host's
directories, so a refused call does not reveal where the tool is installed.

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

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The real path of ``path``, if it lies inside a root.

        Raises:
            PathNotAllowedError: It resolves outside every root, or is not a valid path.
        """
        given = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
        if not isinstance(given, str) or "\0" in given:
            raise PathNotAllowedError(f"{path!r} is not a valid path")
        candidate = os.path.join(self.roots[0], given)  # an absolute `given` wins
        real = Path(os.path.realpath(candidate))
        if not any(real == root or real.is_relative_to(root) for root in self.roots):
            raise PathNotAllowedError(
                f"the path {given!r} is outside the directories this tool may use"
            )
        return real

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
