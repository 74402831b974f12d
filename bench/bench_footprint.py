"""Footprint, side by side in one run: import time, ``--help``, Agent construction, install size.

Every timing is taken in a fresh interpreter (``python -c``), repeated, and the median
reported, with the peers measured in the same run on the same machine:

* ``import toolwire`` against ``import openai`` / ``import anthropic`` (when installed):
  budget, toolwire at most half of openai;
* ``toolwire --help`` (in-process ``main(["--help"])``), and the modules it loaded: no
  provider, no httpx, no key needed;
* a ready ``Agent`` with a hosted spec (``openai:gpt-4.1-mini``) built with the network
  disabled (``socket`` connect and DNS raise): import + build time, against twice the
  import time;
* the core install: the distributions ``toolwire`` pulls without extras (its requirement
  closure in this environment, toolwire included): budget 15;
* CPU, not wall time (on a loaded machine the clock counts other processes' turns): the
  user + system seconds of a whole fresh interpreter that runs ``from toolwire.run import
  Agent``, and of ``python -m toolwire run`` against a closed loopback port (every
  import up to the first request, httpx's included, then a refused connection and its
  retries): what each test or script that starts the agent or the command pays first.

Run: ``python bench/bench_footprint.py [--repeat N] [--json]``. Exit status 1 when a
budget is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
from importlib import metadata

IMPORT = "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"

HELP = """
import io, sys, time, contextlib
t = time.perf_counter()
from toolwire.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(["--help"])
    except SystemExit:
        pass
elapsed = time.perf_counter() - t
loaded = sorted(m for m in sys.modules if m.startswith(("toolwire.providers", "httpx", "llama_cpp", "rich")))
print(elapsed, ",".join(loaded))
"""

AGENT = """
import socket, time
def _no_network(*args, **kwargs):
    raise OSError("network disabled by bench_footprint")
socket.socket.connect = _no_network
socket.getaddrinfo = _no_network
socket.create_connection = _no_network
t = time.perf_counter()
import toolwire
from toolwire.providers import resolve
from toolwire.run import Agent
from toolwire.demo.tools import DEMO_TOOLS
agent = Agent(resolve("openai:gpt-4.1-mini"), DEMO_TOOLS)
assert agent.model.name == "openai:gpt-4.1-mini"
print(time.perf_counter() - t)
"""


def _python(code: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=120,
    )
    if result.returncode != 0:
        raise RuntimeError(
            result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed"
        )
    return result.stdout.strip()


def _median(code: str, repeat: int, env: dict[str, str] | None = None) -> float:
    return statistics.median(float(_python(code, env).split()[0]) for _ in range(repeat))


def import_time(module: str, repeat: int) -> float | None:
    """Median seconds to import ``module`` in a fresh interpreter (None: not installed)."""
    try:
        return _median(IMPORT.format(module=module), repeat)
    except RuntimeError:
        return None


def help_time(repeat: int) -> tuple[float, list[str]]:
    """Median seconds of ``toolwire --help`` in-process, and the heavy modules it loaded."""
    times, loaded = [], []
    for _ in range(repeat):
        elapsed, _, modules = _python(HELP).partition(" ")
        times.append(float(elapsed))
        loaded = [m for m in modules.split(",") if m]
    return statistics.median(times), loaded


def agent_time(repeat: int) -> float:
    """Median seconds to import toolwire and build a hosted-spec Agent, network disabled."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-footprint-dummy"}
    return _median(AGENT, repeat, env)


AGENT_IMPORT = "from toolwire.run import Agent"
# A model on the discard port: nothing listens, so the run ends at its first request.
CLI_RUN = ["run", "hi", "-m", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--no-log"]


def cpu_seconds(argv: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    """Median user + system CPU seconds of ``python ARGV`` in a fresh interpreter."""
    times = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, *argv], capture_output=True, check=False, env=env, timeout=120
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


def core_distributions(name: str = "toolwire") -> list[str]:
    """The distributions a no-extras install of ``name`` pulls (closure of its requirements)."""
    seen: dict[str, None] = {}
    todo = [name]
    while todo:
        current = _normalise(todo.pop())
        if current in seen:
            continue
        seen[current] = None
        try:
            requires = metadata.requires(current) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            if _applies(requirement):
                todo.append(re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0])
    return list(seen)


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _applies(requirement: str) -> bool:
    """True for a requirement this interpreter installs without extras."""
    _, _, marker = requirement.partition(";")
    if not marker.strip():
        return True
    if "extra" in marker:
        return False
    try:
        from packaging.markers import Marker
    except ImportError:  # without packaging, count it: over-counting errs on the safe side
        return True
    return bool(Marker(marker.strip()).evaluate())


def measure(repeat: int) -> dict[str, object]:
    """Every footprint number, and whether each budget holds."""
    toolwire_import = import_time("toolwire", repeat) or 0.0
    openai_import = import_time("openai", repeat)
    anthropic_import = import_time("anthropic", repeat)
    help_seconds, help_modules = help_time(repeat)
    agent_seconds = agent_time(repeat)
    distributions = core_distributions()
    key = {**os.environ, "OPENAI_API_KEY": "sk-footprint-dummy"}
    agent_cpu = cpu_seconds(["-c", AGENT_IMPORT], repeat)
    cli_cpu = cpu_seconds(["-m", "toolwire", *CLI_RUN], repeat, key)
    checks = {
        "import_le_half_openai": openai_import is None or toolwire_import <= openai_import / 2,
        "help_loads_no_provider": not help_modules,
        "agent_lt_twice_import": agent_seconds < 2 * toolwire_import,
        "agent_lt_twice_openai_import": openai_import is None or agent_seconds < 2 * openai_import,
        "core_install_le_15": len(distributions) <= 15,
    }
    return {
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "import_toolwire_s": toolwire_import,
        "import_openai_s": openai_import,
        "import_anthropic_s": anthropic_import,
        "help_s": help_seconds,
        "help_heavy_modules": help_modules,
        "agent_build_s": agent_seconds,
        "core_distributions": distributions,
        "agent_import_cpu_s": agent_cpu,
        "cli_run_cpu_s": cli_cpu,
        "checks": checks,
    }


def _ms(value: object) -> str:
    return "n/a" if value is None else f"{float(value) * 1000:.0f} ms"  # type: ignore[arg-type]


def report(numbers: dict[str, object]) -> str:
    """The numbers as a short table."""
    lines = [
        f"python {numbers['python']}, {numbers['cpus']} CPUs",
        f"import toolwire             {_ms(numbers['import_toolwire_s'])}",
        f"import openai               {_ms(numbers['import_openai_s'])}",
        f"import anthropic            {_ms(numbers['import_anthropic_s'])}",
        f"toolwire --help             {_ms(numbers['help_s'])}  (heavy modules: {numbers['help_heavy_modules'] or 'none'})",
        f"import + hosted Agent       {_ms(numbers['agent_build_s'])}  (network disabled)",
        f"core install                {len(numbers['core_distributions'])} distributions: "  # type: ignore[arg-type]
        + ", ".join(numbers["core_distributions"]),  # type: ignore[arg-type]
        f"CPU, import the agent       {_ms(numbers['agent_import_cpu_s'])}  (a whole fresh interpreter)",
        f"CPU, toolwire run           {_ms(numbers['cli_run_cpu_s'])}  (the same, to a closed port)",
    ]
    for name, ok in numbers["checks"].items():  # type: ignore[attr-defined]
        lines.append(f"  {'PASS' if ok else 'FAIL'}  {name}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    numbers = measure(args.repeat)
    print(json.dumps(numbers, indent=2) if args.json else report(numbers))
    return 0 if all(numbers["checks"].values()) else 1  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
