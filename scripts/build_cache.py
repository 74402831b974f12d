"""Keep what every clean checkout builds again: mypy's incremental cache, the
mypyc-compiled wheel (scripts/build-compiled) and the bytecode of the fresh venvs'
libraries, in a per-user cache, keyed by content.

A clean clone has no ``.mypy_cache`` and no ``build/``, so CI redid both on every run
(~35 s of CPU each) for sources that mostly had not changed. Both are kept under
``${XDG_CACHE_HOME:-~/.cache}/toolwire`` (``TOOLWIRE_BUILD_CACHE=DIR`` chooses another
folder, ``TOOLWIRE_BUILD_CACHE=0`` turns the cache off: every run builds):

- ``mypy/<mypy version>-py<Python>``: mypy's own cache folder. mypy checks every module
  it reads from it against the source's hash (a clean clone's new mtimes make it hash
  each file), and writes each file to a temporary name then renames it, so an edited
  file is checked again and two runs can share the folder.
- ``compiled/<key>/``: the compiled wheel, where the key is a hash of everything that
  goes into the wheel (every file under src/, the build's recipe and metadata files,
  the versions of Python and the build tools, the C compiler and its flags), so any
  change gives a new key and a build. An entry is written to a temporary folder and
  renamed into place: a reader sees a whole entry or none, and of two runs that build
  the same key the second keeps the first's.
- ``pycache/``: ``PYTHONPYCACHEPREFIX`` for scripts/test, so the bytecode Python writes
  for every module it imports lands there (under the source's absolute path) instead of
  beside the source. A clean clone's ``.venv`` is new, but uv hard-links each library's
  files from its own cache, so their mtimes and sizes, which Python checks a ``.pyc``
  against, are those of the last run's: the bytecode written then is read, not compiled
  again (~15 s of CPU for each process that collects the suite). Python writes each
  ``.pyc`` to a temporary name and renames it. ``prune-pycache``, at the end of a run
  (when its venvs exist: at its start a clean clone has none yet), removes what
  mirrors a folder that is gone.

  The checkout's own modules are new files in every clean clone, so their timestamp
  ``.pyc`` never matched, and every process that imported them first compiled them
  (the pure stage's two workers at once). ``compile-bytecode``, before the stages,
  writes them as checked-hash bytecode (PEP 552: valid while the source's hash
  matches, whatever its mtime): once per run for all processes, and, where the next
  clone has the same path, not at all. Only what is missing or changed is compiled.
  The test files are left to pytest, which imports them rewritten, from checked-hash
  bytecode of its own (pytest 9.2+).

Usage (with the checkout's ``.venv/bin/python``, which has the build tools):
  python scripts/build_cache.py mypy-dir            the folder for MYPY_CACHE_DIR
  python scripts/build_cache.py pycache-dir         the folder for PYTHONPYCACHEPREFIX
  python scripts/build_cache.py prune-pycache       drop the bytecode of folders gone
  python scripts/build_cache.py compile-bytecode    compile the checkout's changed modules
  python scripts/build_cache.py key                 the compiled wheel's key
  python scripts/build_cache.py fetch KEY DIR       copy its kept wheel into DIR
  python scripts/build_cache.py store KEY WHEEL     keep WHEEL under KEY
  python scripts/build_cache.py drop KEY            forget KEY's wheel
Each prints nothing when the cache is off; ``fetch`` exits 1 on a miss (or when off).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import py_compile
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from importlib import metadata
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]

# Besides every file under src/: the files that decide how the wheel is built and what
# its metadata says.
RECIPE = (
    "pyproject.toml",
    "hatch_build.py",
    "README.md",
    "LICENSE",
    "scripts/build-compiled",
    "scripts/build_cache.py",
)

# The distributions that build the wheel: mypy (mypyc, and the standard library's stubs
# it compiles against), hatchling and what it selects files with, setuptools (the C
# build), pip (the frontend).
BUILD_TOOLS = ("mypy", "mypy-extensions", "setuptools", "hatchling", "packaging", "pathspec", "pip")

# The environment that reaches the C compiler or mypyc, besides the MYPYC_ and
# TOOLWIRE_COMPILE variables (all of which are keyed).
COMPILER_VARIABLES = ("CC", "CFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED", "ARCHFLAGS")

# Entries kept: the newest by last use. A build is a few MB; ten cover the branches a
# machine alternates between.
KEEP = 10

# Written by Python or mypy while the build runs or between runs, never part of a wheel.
_NOT_INPUTS = frozenset({"__pycache__", ".mypy_cache"})


def cache_root() -> Path | None:
    """The cache folder, or None when ``TOOLWIRE_BUILD_CACHE=0`` turns it off."""
    setting = os.environ.get("TOOLWIRE_BUILD_CACHE", "")
    if setting == "0":
        return None
    if setting:
        return Path(setting)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolwire"


def mypy_dir(root: Path) -> Path:
    """mypy's cache folder for this mypy and this Python (mypy keys the rest itself)."""
    python = ".".join(map(str, sys.version_info[:3]))
    return root / "mypy" / f"{metadata.version('mypy')}-py{python}"


def input_files(checkout: Path) -> list[Path]:
    """Every file whose content goes into the compiled wheel, in a fixed order."""
    found: list[Path] = []
    for folder, dirs, names in os.walk(checkout / "src"):
        dirs[:] = [name for name in dirs if name not in _NOT_INPUTS]  # not walked into
        found += [Path(folder, name) for name in names if not name.endswith(".pyc")]
    found += [checkout / name for name in RECIPE if (checkout / name).is_file()]
    return sorted(found)


def build_settings() -> list[str]:
    """What besides the files decides the build: Python, the tools, the compiler."""
    settings = [
        f"python {sys.version} {sys.implementation.cache_tag} {sysconfig.get_platform()}",
        f"abi {sysconfig.get_config_var('SOABI')}",
    ]
    for name in BUILD_TOOLS:
        try:
            settings.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            settings.append(f"{name} absent")
    # The C optimisation level as hatch_build.py reads it: unset is 3, like "3".
    settings.append(f"opt {os.environ.get('TOOLWIRE_COMPILE_OPT', '3')}")
    settings += sorted(
        f"env {name}={value}"
        for name, value in os.environ.items()
        if name in COMPILER_VARIABLES or name.startswith(("MYPYC_", "TOOLWIRE_COMPILE"))
        if name != "TOOLWIRE_COMPILE_OPT"
    )
    for name in ("CC", "CFLAGS", "LDSHARED"):
        settings.append(f"sysconfig {name}={sysconfig.get_config_var(name)}")
    settings.append(f"compiler {_compiler_version()}")
    return settings


def _compiler_version() -> str:
    """The C compiler's own ``--version`` (a new gcc is a new build), or why there is none."""
    command = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
    try:
        done = subprocess.run(
            [command[0], "--version"], capture_output=True, text=True, check=False, timeout=30
        )
    except OSError as error:
        return f"{command[0]}: {error.strerror}"
    return done.stdout.strip()


def compiled_key(checkout: Path) -> str:
    """The hash of every input of the compiled wheel: files by path and content, settings."""
    digest = hashlib.sha256()
    for path in input_files(checkout):
        digest.update(path.relative_to(checkout).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    for setting in build_settings():
        digest.update(setting.encode() + b"\0")
    return digest.hexdigest()


def fetch(root: Path, key: str, into: Path) -> bool:
    """Copy the wheel kept under ``key`` into ``into``; False when there is none."""
    entry = root / "compiled" / key
    try:
        wheels = [path for path in entry.iterdir() if path.suffix == ".whl"]
        if len(wheels) != 1:
            return False
        into.mkdir(parents=True, exist_ok=True)
        shutil.copy2(wheels[0], into / wheels[0].name)
        os.utime(entry)  # last used: pruning keeps the newest
    except OSError:
        # No entry, or pruned by another run while this one copied it: a miss.
        return False
    return True


def store(root: Path, key: str, wheel: Path) -> None:
    """Keep ``wheel`` under ``key``: written aside, then renamed into place whole."""
    folder = root / "compiled"
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder))
    try:
        shutil.copy2(wheel, staging / wheel.name)
        # rename() onto an existing, non-empty folder fails: another run stored this key
        # first, and its entry (the same inputs) stays.
        os.rename(staging, folder / key)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    prune(folder)


def prune(folder: Path, keep: int = KEEP) -> None:
    """Remove all but the ``keep`` newest entries, and temporary folders a day old."""
    entries = sorted(
        (path for path in folder.iterdir() if not path.name.startswith(".")),
        key=lambda path: path.stat().st_mtime,
        reverse=True,
    )
    stale = [
        path
        for path in folder.iterdir()
        if path.name.startswith(".tmp-") and time.time() - path.stat().st_mtime > 86400
    ]
    for path in entries[keep:] + stale:
        shutil.rmtree(path, ignore_errors=True)


def prune_pycache(folder: Path) -> None:
    """Remove the bytecode of folders that are gone (a test's temporary files, a removed
    checkout): the folder mirrors the sources' absolute paths, and would only grow."""
    for here, dirs, _ in os.walk(folder):
        source = Path("/", Path(here).relative_to(folder))
        gone = [name for name in dirs if not (source / name).is_dir()]
        for name in gone:
            shutil.rmtree(Path(here, name), ignore_errors=True)
        dirs[:] = [name for name in dirs if name not in gone]  # not walked into


# The checkout's folders of Python modules that processes of a run import.
OWN_MODULES = ("src", "tests", "bench")

# Files pytest imports itself, rewriting their asserts (its default ``python_files`` and
# conftest.py): their bytecode is pytest's own, so compiling them here would be wasted.
_REWRITTEN_BY_PYTEST = re.compile(r"(test_.*|.*_test|conftest)\.py")

# A PEP 552 header's flags: hash-based (bit 0), checked against the source (bit 1).
_CHECKED_HASH = (0b11).to_bytes(4, "little")


def own_modules(checkout: Path) -> list[Path]:
    """The checkout's modules that Python (not pytest's rewriting) compiles on import."""
    found: list[Path] = []
    for top in OWN_MODULES:
        for folder, dirs, names in os.walk(checkout / top):
            dirs[:] = [name for name in dirs if name not in _NOT_INPUTS]  # not walked into
            found += [
                Path(folder, name)
                for name in names
                if name.endswith(".py") and not _REWRITTEN_BY_PYTEST.fullmatch(name)
            ]
    return sorted(found)


def bytecode_is_current(source: Path) -> bool:
    """Whether ``source``'s bytecode (where this Python looks for it) is checked-hash
    bytecode of its present content: what an import would read without compiling."""
    try:
        with open(importlib.util.cache_from_source(str(source)), "rb") as pyc:
            header = pyc.read(16)
    except OSError:
        return False
    expected = importlib.util.MAGIC_NUMBER + _CHECKED_HASH
    return header == expected + importlib.util.source_hash(source.read_bytes())


def compile_bytecode(modules: list[Path]) -> list[Path]:
    """Compile each module whose checked-hash bytecode is missing or out of date
    (py_compile writes it to a temporary name and renames it); return them."""
    stale = [path for path in modules if not bytecode_is_current(path)]
    for path in stale:
        try:
            py_compile.compile(
                str(path),
                doraise=True,
                invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
            )
        except (py_compile.PyCompileError, OSError):
            # Left to the import, as before: a module that does not compile is the run's
            # to report there, and bytecode that cannot be written is compiled there.
            continue
    return stale


def main(argv: list[str]) -> int:
    """Run one command (the module's docstring lists them)."""
    root = cache_root()
    command, *args = argv
    if root is None:
        return 1 if command == "fetch" else 0
    if command == "mypy-dir":
        print(mypy_dir(root))
    elif command == "pycache-dir":
        print(root / "pycache")
    elif command == "prune-pycache":
        prune_pycache(root / "pycache")
    elif command == "compile-bytecode":
        modules = own_modules(CHECKOUT)
        print(f"{len(compile_bytecode(modules))} of {len(modules)} modules compiled")
    elif command == "key":
        print(compiled_key(CHECKOUT))
    elif command == "fetch":
        return 0 if fetch(root, args[0], Path(args[1])) else 1
    elif command == "store":
        store(root, args[0], Path(args[1]))
    elif command == "drop":
        shutil.rmtree(root / "compiled" / args[0], ignore_errors=True)
    else:
        raise SystemExit(f"build_cache.py: unknown command {command!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
