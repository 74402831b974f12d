"""The trace page shows a tool result's image, in a real headless Chromium, under its CSP."""

from __future__ import annotations

from pathlib import Path

from toolwire import Agent
from toolwire.cli import main
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .test_images import PNG, snap
from .test_trace_browser import DevTools, _problems, browser, chromium_tmp

__all__ = ["browser", "chromium_tmp"]  # the fixtures, shared with the trace page's own tests


def test_the_trace_page_shows_a_result_image(browser: DevTools, tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    model = ScriptedModel([tool_call_turn(("snap", {"page": "a"}, "c-img")), text_turn("seen")])
    Agent(model, [snap], log=db).run_sync("look")
    out = tmp_path / "trace.html"
    assert main(["trace", "last", "--db", db, "--html", str(out)]) == 0
    assert "img-src data:" in out.read_text()
    browser.send("Page.navigate", url=out.as_uri())
    browser.wait_for("Page.loadEventFired")
    assert browser.evaluate("document.querySelectorAll('img').length") == 0  # until a click
    browser.evaluate("document.querySelector('.bar.call[data-call-id=\"c-img\"]').click()")
    image = browser.send(
        "Runtime.evaluate",
        awaitPromise=True,
        returnByValue=True,
        expression="new Promise(done => { const img = document.querySelector('#details img');"
        " const report = () => done({src: img.src.slice(0, 22), width: img.naturalWidth,"
        " alt: img.alt, complete: img.complete});"
        " if (img.complete) { report(); } else { img.onload = report; img.onerror = report; } })",
    )["result"]["value"]
    assert image["src"] == "data:image/png;base64,"
    assert image["width"] == 1 and image["complete"]  # decoded: the CSP let it load
    assert f"{len(PNG)} bytes" in image["alt"]
    assert _problems(browser) == []
