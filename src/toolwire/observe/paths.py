"""Where the CLI's audit log lives by default.

``TOOLWIRE_LOG`` names the file when set. Otherwise it is ``toolwire/runs.db`` in the
user's data directory: platformdirs' answer when platformdirs is installed, else the
same rule written out (``$XDG_DATA_HOME`` or ``~/.local/share`` on Linux and other
Unixes, ``~/Library/Application Support`` on macOS, ``%LOCALAPPDATA%`` on Windows).
The library itself never logs unless asked (``Agent(log=...)``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["ENV_VAR", "default_log_path", "user_data_dir"]

ENV_VAR = "TOOLWIRE_LOG"


def user_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """toolwire's directory in the user's data directory."""
    env = os.environ if environ is None else environ
    if environ is None:
        try:
            import platformdirs
        except ImportError:
            pass
        else:
            return Path(platformdirs.user_data_dir("toolwire", appauthor=False))
    home = Path(env.get("HOME") or Path.home())
    if sys.platform == "win32":
        base = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        xdg = env.get("XDG_DATA_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else home / ".local" / "share"
    return base / "toolwire"


def default_log_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$TOOLWIRE_LOG``, or ``runs.db`` in :func:`user_data_dir`."""
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_VAR)
    if explicit:
        return Path(explicit).expanduser()
    return user_data_dir(environ) / "runs.db"
