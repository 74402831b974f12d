"""The stage bookkeeping of ``scripts/test`` (scripts/stages.sh), run by real bash: each
stage is announced before it starts, and the end says how long each one took. And the
build cache (scripts/build_cache.py): the compiled wheel kept under its inputs' content."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

STAGES = Path(__file__).parents[1] / "scripts" / "stages.sh"


def _bash(body: str) -> subprocess.CompletedProcess[str]:
    script = f"set -euo pipefail\nsource {STAGES}\ntrap stages_summary EXIT\n{body}"
    return subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=False, timeout=60
    )


def test_each_stage_is_announced_and_timed() -> None:
    result = _bash('stage one "the first"\necho work\nstage two "the second"\n')
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == ["== one: the first", "work", "== two: the second"]
    assert re.fullmatch(r"== time per stage \(wall, .*load average \S+ at the start.*\)", lines[3])
    rows = [re.fullmatch(r"  (\S+) +(\d+) s +(\d+) s cpu", line) for line in lines[4:-1]]
    assert all(rows) and [m.group(1) for m in rows if m] == ["one", "two", "total"]
    assert re.fullmatch(
        r"== cores busy: \d+% of \d+ \(CPU seconds over cores x wall seconds\)", lines[-1]
    )


def test_a_stage_counts_the_cpu_its_processes_use() -> None:
    # About a second of CPU in a child process: counted in its stage, not the next.
    busy = "python3 -c 'import time; t = time.process_time()\nwhile time.process_time() - t < 1.2: pass'"
    result = _bash(f'stage busy "spins"\n{busy}\nstage idle "waits"\n')
    assert result.returncode == 0, result.stderr
    rows = {
        m.group(1): int(m.group(2))
        for m in re.finditer(r"^  (\S+) +\d+ s +(\d+) s cpu$", result.stdout, re.M)
    }
    assert rows["busy"] >= 1 and rows["idle"] == 0


def test_a_failing_stage_is_named_and_keeps_its_status() -> None:
    result = _bash('stage one "ok"\nstage two "fails"\nfalse\necho never\n')
    assert result.returncode == 1
    assert "never" not in result.stdout
    assert result.stdout.splitlines()[-1] == "== failed in stage: two (exit 1)"
    assert "  two " in result.stdout  # the failed stage's time is in the table too


def test_a_background_stage_runs_beside_the_next_and_is_timed_on_its_own(
    tmp_path: Path,
) -> None:
    # The background job spins a second of CPU while the next stage waits for its file:
    # they overlap, the job's CPU is its own row, and the total is the elapsed time.
    flag = tmp_path / "started"
    busy = (
        f'python3 -c \'import pathlib, time; pathlib.Path("{flag}").touch(); '
        "t = time.process_time()\nwhile time.process_time() - t < 1.2: pass'"
    )
    body = (
        f'cd {tmp_path}\nstage_background bg "spins" {busy}\n'
        f'stage fg "waits for it to start"\nwhile [ ! -e {flag} ]; do sleep 0.05; done\n'
        'stage_wait bg\nstage after "nothing"\n'
    )
    result = _bash(body)
    assert result.returncode == 0, result.stderr
    rows = {
        m.group(1): (int(m.group(2)), int(m.group(3)))
        for m in re.finditer(r"^  (\S+) +(\d+) s +(\d+) s cpu$", result.stdout, re.M)
    }
    assert list(rows) == ["fg", "bg", "after", "total"]
    assert rows["bg"][1] >= 1 and rows["fg"][1] == 0 and rows["after"][1] == 0
    assert "== bg (in the background from here): spins" in result.stdout


def test_a_background_stage_that_ends_during_another_is_not_counted_in_it(
    tmp_path: Path,
) -> None:
    # The job spins a second of CPU and ends while the next stage runs: bash reaps it
    # then, adding its CPU to the shell's count in that stage; the row leaves it out.
    busy = "python3 -c 'import time; t = time.process_time()\nwhile time.process_time() - t < 1.2: pass'"
    body = (
        f'cd {tmp_path}\nstage_background bg "spins" {busy}\nstage fg "outlasts it"\n'
        # until bash has reaped it: no running job left
        'while [ -n "$(jobs -rp)" ]; do sleep 0.05; done\n'
        'stage_wait bg\nstage after "nothing"\n'
    )
    result = _bash(body)
    assert result.returncode == 0, result.stderr
    rows = {
        m.group(1): int(m.group(2))
        for m in re.finditer(r"^  (\S+) +\d+ s +(\d+) s cpu$", result.stdout, re.M)
    }
    assert rows["bg"] >= 1 and rows["fg"] == 0 and rows["after"] == 0
    assert rows["total"] == rows["bg"]


def test_a_failed_background_stage_fails_the_run_where_it_is_waited_for(
    tmp_path: Path,
) -> None:
    body = f'cd {tmp_path}\nstage_background bg "fails" false\nstage fg "x"\nstage_wait bg\necho never\n'
    result = _bash(body)
    assert result.returncode == 1
    assert "never" not in result.stdout
    assert result.stdout.splitlines()[-1] == "== failed in stage: bg (exit 1)"


def test_no_stage_prints_no_table() -> None:
    result = _bash("echo nothing\n")
    assert result.returncode == 0 and result.stdout == "nothing\n"


def test_worker_ends_says_when_each_worker_ended_its_last_test(tmp_path: Path) -> None:
    timings = tmp_path / "timings.tsv"
    timings.write_text(
        "cpu\twall\tcpu_own\tcpu_children\ttest\tworker\tend\n"
        "2.0\t2.0\t2.0\t0.0\tt.py::slow\tgw1\t7.5\n"
        "1.0\t1.0\t1.0\t0.0\tt.py::late\tgw0\t9.3\n"
        "0.5\t0.5\t0.5\t0.0\tt.py::early\tgw1\t4.0\n"
    )
    result = _bash(f"worker_ends {timings}\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "each worker's last test ended (s after the first began): gw0 9.3 gw1 7.5"
    ]


def test_timings_name_each_tests_worker_and_when_it_ended(tmp_path: Path) -> None:
    # One process (-n 0, worker "-": a run with xdist names its workers gw0, gw1...):
    # what scripts/test's stages write, for two quick tests of this file.
    timings = tmp_path / "timings.tsv"
    tests = ["test_no_stage_prints_no_table", "test_a_failing_stage_is_named_and_keeps_its_status"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
         f"--timings={timings}", *(f"tests/test_scripts.py::{name}" for name in tests)],
        cwd=STAGES.parents[1], capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    header, *rows = [line.split("\t") for line in timings.read_text().splitlines()]
    assert header == ["cpu", "wall", "cpu_own", "cpu_children", "test", "worker", "end"]
    assert sorted(row[4].split("::")[1] for row in rows) == sorted(tests)
    ends = []
    for cpu, wall, _, _, _, worker, end in rows:
        assert worker == "-" and float(cpu) >= 0
        assert float(end) >= float(wall) >= 0
        ends.append(float(end))
    # The two ran one after the other: the later one ended at least its own wall later.
    assert max(ends) >= min(ends) + min(float(row[1]) for row in rows)


# -- scripts/demo: never silent while it installs ------------------------------------------

STUB = """#!/usr/bin/env bash
# Stands in for .venv's python/toolwire: says how it was called (the real install
# compiles llama.cpp for minutes; what is tested here is what the script says, and when).
echo "STUB $(basename "$0") $*"
if [ "$1" = "-c" ]; then exit "${LLAMA_MISSING:-1}"; fi
case "$*" in *"[local]"*)
  echo "Building wheel for llama-cpp-python (pyproject.toml): started"
  exit "${LOCAL_FAILS:-0}";;
esac
"""


def _demo_checkout(tmp_path: Path) -> Path:
    root = Path(__file__).parents[1]
    (tmp_path / "scripts").mkdir()
    for name in ("scripts/demo", "pyproject.toml", "hatch_build.py"):
        (tmp_path / name).write_text((root / name).read_text())
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    for name in ("python", "toolwire"):
        stub = tmp_path / ".venv" / "bin" / name
        stub.write_text(STUB)
        stub.chmod(0o755)
    return tmp_path


def _demo(
    checkout: Path, llama_missing: str = "1", local_fails: str = "0"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(checkout / "scripts" / "demo"), "--events"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "LLAMA_MISSING": llama_missing, "LOCAL_FAILS": local_fails},
    )


def _lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_demo_shows_a_first_result_while_llama_cpp_builds(tmp_path: Path) -> None:
    checkout = _demo_checkout(tmp_path)
    lines = _lines(_demo(checkout))

    def where(part: str) -> int:
        return next(i for i, line in enumerate(lines) if part in line)

    assert lines[0].startswith("demo: installing toolwire into .venv")  # before any pip
    core = where("STUB python -m pip install --quiet -e .")
    build = where("building llama.cpp, once: a few minutes on 2 cores")
    first = where("STUB toolwire pipeline")  # the offline walk-through: a first result
    built = where("demo: the local extra is installed (Building wheel for llama-cpp-python")
    assert 0 < core < build < first < built < where("STUB toolwire run --demo --events")
    assert "491 MB" in lines[build] and "toolwire-local-install.log" in lines[build]
    # pip ran in the background with its output in the log, not on the terminal.
    log = (checkout / ".venv" / "toolwire-local-install.log").read_text()
    assert "STUB python -m pip install -e .[local]" in log
    assert not any("pip install -e .[local]" in line for line in lines)


def test_a_failed_build_shows_the_end_of_its_log_and_stops(tmp_path: Path) -> None:
    result = _demo(_demo_checkout(tmp_path), local_fails="3")
    assert result.returncode == 3
    assert "demo: installing the local extra failed (exit 3)" in result.stdout
    assert "Building wheel for llama-cpp-python" in result.stdout  # the log's end
    assert "toolwire run --demo" not in result.stdout


def test_demo_installs_once_and_knows_a_built_runtime(tmp_path: Path) -> None:
    checkout = _demo_checkout(tmp_path)
    (checkout / ".venv" / ".toolwire-demo-install").write_text("stale\n")
    lines = _lines(_demo(checkout, llama_missing="0"))
    assert any("llama.cpp is already built" in line for line in lines)
    assert not any("building llama.cpp" in line for line in lines)
    assert _lines(_demo(checkout)) == ["STUB toolwire run --demo --events"]  # no install


# scripts/build_cache.py: the compiled wheel kept across clean checkouts, by content.
ROOT = Path(__file__).parents[1]


@pytest.fixture
def build_cache(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """scripts/build_cache.py, imported (scripts/ is no package), with the C settings unset."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    for name in ("TOOLWIRE_COMPILE_OPT", "CC", "CFLAGS", "CPPFLAGS", "LDFLAGS"):
        monkeypatch.delenv(name, raising=False)
    return importlib.import_module("build_cache")


def _checkout_copy(build_cache: ModuleType, to: Path) -> Path:
    """A copy of the files that go into the compiled build, using this checkout's .venv."""
    for path in build_cache.input_files(ROOT):
        target = to / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)  # new mtimes, as in a clean clone
    (to / ".venv").symlink_to(ROOT / ".venv")
    return to


def test_the_compiled_builds_key_is_its_inputs_content(
    build_cache: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = _checkout_copy(build_cache, tmp_path / "copy")
    key = build_cache.compiled_key(copy)
    # Not the path, the mtimes or the bytecode Python writes beside the sources.
    assert build_cache.compiled_key(ROOT) == key
    source = copy / "src" / "toolwire" / "wire" / "sse.py"
    os.utime(source, (0, 0))
    (source.parent / "__pycache__").mkdir(exist_ok=True)
    (source.parent / "__pycache__" / "sse.cpython-311.pyc").write_bytes(b"stale")
    assert build_cache.compiled_key(copy) == key
    # Any source, new file or recipe file changes it, and the content is the key.
    text = source.read_text()
    source.write_text(text + "\n# edited\n")
    assert build_cache.compiled_key(copy) != key
    source.write_text(text)
    assert build_cache.compiled_key(copy) == key
    (copy / "src" / "toolwire" / "new.py").write_text("")
    added = build_cache.compiled_key(copy)
    (copy / "hatch_build.py").write_text((copy / "hatch_build.py").read_text() + "\n")
    assert len({key, added, build_cache.compiled_key(copy)}) == 3
    (copy / "src" / "toolwire" / "new.py").unlink()
    (copy / "hatch_build.py").write_text((ROOT / "hatch_build.py").read_text())
    # So do the C compiler's settings: the optimisation level (unset is 3), the flags.
    monkeypatch.setenv("TOOLWIRE_COMPILE_OPT", "3")
    assert build_cache.compiled_key(copy) == key
    monkeypatch.setenv("TOOLWIRE_COMPILE_OPT", "1")
    opt1 = build_cache.compiled_key(copy)
    monkeypatch.setenv("CFLAGS", "-march=native")
    assert len({key, opt1, build_cache.compiled_key(copy)}) == 3
    assert any(s.startswith("mypy ") for s in build_cache.build_settings())  # the tools


def test_a_kept_build_is_whole_and_the_first_of_two_stays(
    build_cache: ModuleType, tmp_path: Path
) -> None:
    root, built = tmp_path / "cache", tmp_path / "built"
    built.mkdir()
    first, second = built / "toolwire-1-a.whl", built / "toolwire-1-b.whl"
    first.write_bytes(b"first")
    second.write_bytes(b"second")
    assert not build_cache.fetch(root, "k", tmp_path / "out")  # a miss
    build_cache.store(root, "k", first)
    build_cache.store(root, "k", second)  # a run that built the same key at once
    assert [p.name for p in (root / "compiled").iterdir()] == ["k"]  # no temporary left
    assert build_cache.fetch(root, "k", tmp_path / "out")
    assert [p.read_bytes() for p in (tmp_path / "out").iterdir()] == [b"first"]
    # The newest entries by last use stay.
    for n in range(build_cache.KEEP + 1):
        build_cache.store(root, f"old{n}", first)
        os.utime(root / "compiled" / f"old{n}", (n, n))
    build_cache.store(root, "new", first)
    kept = {p.name for p in (root / "compiled").iterdir()}
    assert len(kept) == build_cache.KEEP and {"k", "new"} <= kept and "old0" not in kept


def test_the_cache_is_off_with_toolwire_build_cache_0(tmp_path: Path) -> None:
    script = str(ROOT / "scripts" / "build_cache.py")

    def run(*args: str, setting: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "TOOLWIRE_BUILD_CACHE": setting}
        return subprocess.run(
            [sys.executable, script, *args], capture_output=True, text=True, env=env, check=False
        )

    assert run("mypy-dir", setting=str(tmp_path)).stdout.startswith(str(tmp_path / "mypy"))
    assert run("pycache-dir", setting=str(tmp_path)).stdout == f"{tmp_path / 'pycache'}\n"
    assert run("mypy-dir", setting="0").stdout == ""
    assert run("pycache-dir", setting="0").stdout == ""
    assert run("key", setting="0").stdout == ""
    assert run("compile-bytecode", setting="0").stdout == ""  # nothing compiled
    assert run("fetch", "k", str(tmp_path), setting="0").returncode == 1  # never a hit


def test_the_bytecode_of_a_folder_that_is_gone_is_removed(
    build_cache: ModuleType, tmp_path: Path
) -> None:
    prefix, kept, gone = tmp_path / "pycache", tmp_path / "kept", tmp_path / "gone"
    kept.mkdir()
    for folder in (kept, gone, kept / "sub"):
        mirror = prefix / folder.relative_to("/")
        mirror.mkdir(parents=True)
        (mirror / "m.cpython-311.pyc").write_bytes(b"")
    build_cache.prune_pycache(prefix)
    assert (prefix / kept.relative_to("/") / "m.cpython-311.pyc").exists()
    assert not (prefix / gone.relative_to("/")).exists()
    assert not (prefix / kept.relative_to("/") / "sub").exists()  # kept/sub is gone too


def test_the_checkouts_modules_are_compiled_once_and_read_whatever_their_mtime(
    build_cache: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout, prefix = tmp_path / "checkout", tmp_path / "pycache"
    module, helper = checkout / "src" / "pkg" / "mod.py", checkout / "tests" / "helper.py"
    for path in (module, helper, checkout / "tests" / "test_x.py", checkout / "conftest.py"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("VALUE = 1\n")
    modules = build_cache.own_modules(checkout)
    assert modules == [module, helper]  # the test files are pytest's to compile
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))  # as PYTHONPYCACHEPREFIX
    assert build_cache.compile_bytecode(modules) == modules
    assert build_cache.compile_bytecode(modules) == []
    os.utime(module, (1, 1))  # a clean clone's new mtime: still current
    assert build_cache.compile_bytecode(modules) == []

    def import_it() -> subprocess.CompletedProcess[str]:
        """Import the module in a new Python as a run would, telling where its code came from."""
        env = {
            **os.environ,
            "PYTHONPYCACHEPREFIX": str(prefix),
            "PYTHONPATH": str(module.parents[1]),
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        return subprocess.run(
            [sys.executable, "-v", "-c", "import pkg.mod; print(pkg.mod.VALUE)"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )

    read = import_it()
    assert read.stdout == "1\n" and f"matches {module}" in read.stderr  # not compiled
    module.write_text("VALUE = 2\n")  # edited: compiled again
    assert build_cache.compile_bytecode(modules) == [module]
    read = import_it()
    assert read.stdout == "2\n" and f"matches {module}" in read.stderr
    module.write_text("VALUE = 3\n")  # edited and not compiled: Python sees the new hash
    assert import_it().stdout == "3\n"
    assert build_cache.compile_bytecode(modules) == []  # and wrote it hash-checked again


def test_a_kept_build_of_this_tree_is_used_and_runs_compiled(
    build_cache: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The build scripts/test's mypyc stage kept (at -O1) or scripts/build-compiled's (-O3):
    # a clean copy of the tree unpacks it, compiles nothing, and imports it compiled.
    root = build_cache.cache_root()
    copy = _checkout_copy(build_cache, tmp_path / "copy")
    for opt in ("1", "3"):
        monkeypatch.setenv("TOOLWIRE_COMPILE_OPT", opt)
        key = build_cache.compiled_key(copy)
        if root is not None and (root / "compiled" / key).is_dir():
            break
    else:
        pytest.skip("no kept compiled build of this tree here (bash scripts/build-compiled)")
    done = subprocess.run(
        ["bash", str(copy / "scripts" / "build-compiled")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"compiled wire layer in build/compiled (kept build {key})"]
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            "import toolwire.wire as w; print(w.COMPILED, w.assembler.__file__)",
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(copy / "build" / "compiled")},
    )
    assert ran.returncode == 0, ran.stderr
    compiled, where = ran.stdout.split()
    assert compiled == "True" and Path(where).is_relative_to(copy / "build" / "compiled")
