"""Wheel build hook: compile the wire layer with mypyc when ``TOOLWIRE_COMPILE=1``.

The wire layer (``src/toolwire/wire``) is the per-fragment hot path of every streamed
turn. It is ordinary, strictly typed Python; mypyc turns the same source into a C
extension that runs it about twice as fast (bench/README.md has the numbers). Release
wheels are built with ``TOOLWIRE_COMPILE=1``; a plain or editable install stays pure
Python, so a checkout never imports a stale compiled module in place of edited source.

The extension is built in a temporary directory, never next to the sources, and added
to the wheel beside the ``.py`` files it shadows (an extension module wins over a source
file of the same name at import).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# The modules on the hot path, compiled together (they call each other natively).
# turn.py: the per-call and per-turn classes the wire layer builds (ToolRequest, Turn,
# Notice), native classes with a compiled constructor there (see its comment).
COMPILED = [
    "toolwire/turn.py",
    "toolwire/wire/events.py",
    "toolwire/wire/jsonscan.py",
    "toolwire/wire/assembler.py",
    "toolwire/wire/sse.py",
    "toolwire/wire/usage.py",
    "toolwire/wire/fields.py",
    "toolwire/wire/stream.py",
    "toolwire/wire/openai_chat.py",
    "toolwire/wire/openai_chat_body.py",
    "toolwire/wire/content_calls.py",
    "toolwire/wire/openai_responses.py",
    "toolwire/wire/openai_responses_body.py",
    "toolwire/wire/anthropic.py",
    "toolwire/wire/anthropic_body.py",
]

# Run in a subprocess with the sources as working directory: mypyc names modules by
# their path, and setuptools keeps global state that should not leak into hatchling.
# The subprocess ends with os._exit once the extensions are written, as the mypy command
# does (its fast_exit): mypyc type-checks every module the compiled ones import, about
# 3,800 of them with the optional extras installed, and an ordinary exit frees that
# 1.8 GB heap object by object, about 65 s of CPU that builds nothing. A failed build
# still exits through setup()'s SystemExit, with its status.
_BUILD = """
import os
import sys
from setuptools import setup
from mypyc.build import mypycify
config, out, tmp, opt_level, *paths = sys.argv[1:]
setup(
    name="toolwire-wire",
    ext_modules=mypycify(["--config-file", config, *paths], opt_level=opt_level, target_dir=tmp),
    script_args=["build_ext", "--build-lib", out, "--build-temp", tmp],
)
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
"""


def compile_requested() -> bool:
    """True when this build should compile the wire layer."""
    return os.environ.get("TOOLWIRE_COMPILE", "") == "1"


def c_opt_level() -> str:
    """The C compiler's optimisation level (``-O``): 3, unless ``TOOLWIRE_COMPILE_OPT`` says.

    Release wheels are built at 3. The test suite's build (scripts/build-compiled under
    scripts/test) asks for 1: the C that mypyc generates is the same at every level, and
    gcc's levels change only how fast the machine code runs, not what it does, for C that
    is well defined (mypyc's is; -Werror keeps gcc's warnings fatal at each level). Level
    0 also turns on the C asserts (-UNDEBUG), which is a different build, so 1 is the
    lowest the tests use.
    """
    level = os.environ.get("TOOLWIRE_COMPILE_OPT", "3")
    if level not in ("0", "1", "2", "3"):
        raise ValueError(f"TOOLWIRE_COMPILE_OPT={level!r}: choose 0, 1, 2 or 3")
    return level


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Adds the mypyc-compiled wire layer to a (non-editable) wheel on request."""

    def dependencies(self) -> list[str]:
        if not compile_requested():
            return []
        # mypyc type-checks what it compiles, so the runtime dependencies' types too.
        return ["mypy>=1.15", "setuptools>=70", *self.metadata.core.dependencies]

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable" or not compile_requested():
            return
        root = Path(self.root)
        src = root / "src"
        # Removed in finalize(): hatchling reads the extensions after this returns.
        self._work = tempfile.TemporaryDirectory(prefix="toolwire-mypyc-")
        out, tmp = Path(self._work.name, "lib"), Path(self._work.name, "tmp")
        config = str(root / "pyproject.toml")
        subprocess.run(
            [sys.executable, "-c", _BUILD, config, str(out), str(tmp), c_opt_level(), *COMPILED],
            cwd=src,
            check=True,
        )
        built = sorted(p for p in out.rglob("*") if p.is_file())
        if not built:
            raise RuntimeError("mypyc produced no extension modules")
        for path in built:
            build_data["force_include"][str(path)] = str(path.relative_to(out))
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        work = getattr(self, "_work", None)
        if work is not None:
            work.cleanup()
