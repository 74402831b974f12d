"""The README is a landing page whose example runs; the agent-loop page's snippets run.

Every snippet of README.md and docs/ is run by tests/docs/test_snippets.py; these are
the checks that look at what particular snippets do.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def test_the_agent_loop_snippets_define_their_model_and_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    blocks = re.findall(
        r"```python\n(.*?)```", (DOCS / "agent.md").read_text(encoding="utf-8"), re.DOTALL
    )
    assert len(blocks) == 3
    define, stream, scripted = blocks
    assert "async for event in stream" in stream
    # the first block talks to a served model (tests/docs runs it against a loopback
    # server): here it must build offline, without the lines that use the result
    offline = "\n".join(line for line in define.splitlines() if "result" not in line)
    namespace: dict[str, object] = {}
    exec(compile(offline, "docs/agent.md", "exec"), namespace)
    assert type(namespace["model"]).__name__ == "OpenAIChatModel"
    # the scripted block stands alone and runs the loop for real
    scripted_namespace: dict[str, object] = {}
    exec(compile(scripted, "docs/agent.md:scripted", "exec"), scripted_namespace)
    assert scripted_namespace["result"].output == "Beijing: sunny; Shanghai: sunny."  # type: ignore[attr-defined]


def test_the_models_table_is_the_scripts_output() -> None:
    """scripts/demo_success_rate.py --readme docs/models.md rewrites between the markers."""
    text = (DOCS / "models.md").read_text(encoding="utf-8")
    for marker in ("<!-- demo-verdicts:start -->", "<!-- demo-verdicts:end -->"):
        assert text.count(marker) == 1, marker  # moved with the table, not copied
        assert marker not in README.read_text(encoding="utf-8")
    table = text.split("<!-- demo-verdicts:start -->")[1].split("<!-- demo-verdicts:end -->")[0]
    assert "Measured by `python scripts/demo_success_rate.py" in table
    assert "| `local` |" in table and "| `local:smollm2` |" in table


def _fenced(text: str, language: str) -> list[str]:
    """The bodies of the fenced blocks tagged ``language`` ("" for untagged ones)."""
    found = re.findall(r"^```(\w*)\n(.*?)^```$", text, re.DOTALL | re.MULTILINE)
    return [body for tag, body in found if tag == language]


def test_the_readmes_first_python_block_runs_offline_and_prints(tmp_path: Path) -> None:
    first = _fenced(README.read_text(encoding="utf-8"), "python")[0]
    script = tmp_path / "example.py"
    script.write_text(first, encoding="utf-8")
    # no key, and a proxy that refuses every connection: offline means offline
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    done = subprocess.run(
        [sys.executable, str(script)],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Beijing: sunny" in done.stdout and "Shanghai: sunny" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "Sunny in both."


def test_the_readme_is_a_landing_page_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = [block.strip() for block in _fenced(text, "")]
    assert "bash scripts/demo" in blocks  # the demo on the embedded model
    assert "bash scripts/test" in blocks  # the whole suite
    # one sentence, the example, the commands, why (measured), links: not a manual
    assert len(text.splitlines()) < 120
    for heading in ("## Quickstart", "## Why toolwire", "## Documentation"):
        assert heading in text
    assert "bench/README.md" in text  # the numbers are cited, not invented


def test_the_readmes_measured_numbers_are_in_bench_readme() -> None:
    """Every number in the comparison table appears in bench/README.md as measured."""
    text = README.read_text(encoding="utf-8")
    table = text[text.index("## Why toolwire") : text.index("## Documentation")]
    bench = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    numbers = re.findall(r"\b\d[\d,]*(?:\.\d+)?(?:x| ms|%)", table)
    assert len(numbers) > 15
    for number in numbers:
        assert number in bench, number


def test_every_docs_page_is_in_the_site_and_every_link_resolves() -> None:
    """mkdocs.yml lists every page; README's links point at pages that exist."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    assert pages and all(f": {page}" in config for page in pages)
    readme = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target


def test_the_docs_site_builds_strict(tmp_path: Path) -> None:
    """``mkdocs build --strict``: no page left out of the navigation, no broken link or
    anchor (scripts/test runs it as a stage too; this keeps it in every pytest run)."""
    pytest.importorskip("mkdocs", reason="the docs extra (mkdocs) is not installed")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "index.html").exists() and (tmp_path / "safety" / "index.html").exists()
