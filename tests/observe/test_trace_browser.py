"""The trace page in a real headless Chromium, driven over the DevTools protocol.

The page must load without a console error or an exception, show one bar per logged
call (overlapping for a parallel batch, early-started calls beginning before the
model's bar ends), show a call's arguments and result on click, and fetch nothing.
A screenshot is written next to the test's files.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent
from toolwire.cli import main
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .helpers import CorrectingModel, search, write

websockets_sync = pytest.importorskip(
    "websockets.sync.client", reason="websockets is not installed"
)

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(
        "no Chromium found (Debian: apt-get install chromium; scripts/system-deps installs it)"
    )


class DevTools:
    """A minimal DevTools-protocol client: one page session, events kept in order."""

    def __init__(self, socket: Any) -> None:
        self._socket = socket
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if self.session is not None:
            message["sessionId"] = self.session
        self._socket.send(json.dumps(message))
        while True:
            reply = json.loads(self._socket.recv(timeout=30))
            if reply.get("id") == number:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply.get("result", {})  # type: ignore[no-any-return]
            self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = json.loads(self._socket.recv(timeout=30))
            self.events.append(event)
            if event.get("method") == method:
                return event

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")


def _profile(tmp_path: Path) -> Path:
    return tmp_path / "chromium-profile"  # a fresh profile per test


@pytest.fixture
def chromium_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Chromium's own temporary folder (its TMPDIR), in pytest's: the folder of its
    singleton socket goes there, so a browser the fixture kills leaves nothing in /tmp.
    Not under ``tmp_path``: a socket's path must fit in 108 bytes, and a test's
    ``tmp_path`` with the socket's own folder and name does not."""
    return tmp_path_factory.mktemp("chr")


@pytest.fixture
def browser(tmp_path: Path, chromium_tmp: Path) -> Iterator[DevTools]:
    with subprocess.Popen(
        [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={_profile(tmp_path)}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(chromium_tmp)},
    ) as process:
        try:
            assert process.stderr is not None
            url = None
            for line in process.stderr:  # the browser says where it listens
                found = re.search(r"DevTools listening on (ws://\S+)", line)
                if found:
                    url = found.group(1)
                    break
            assert url, "Chromium did not start its DevTools endpoint"
            with websockets_sync.connect(url, max_size=None, open_timeout=30) as socket:
                tools = DevTools(socket)
                target = tools.send("Target.createTarget", url="about:blank")["targetId"]
                attached = tools.send("Target.attachToTarget", targetId=target, flatten=True)
                tools.session = attached["sessionId"]
                for domain in ("Page", "Runtime", "Log", "Network"):
                    tools.send(f"{domain}.enable")
                yield tools
        finally:
            process.kill()
            process.wait(timeout=30)
            assert process.stderr is not None
            process.stderr.close()


def test_chromium_keeps_its_temporary_files_in_pytests_folder(
    browser: DevTools, tmp_path: Path, chromium_tmp: Path
) -> None:
    """The profile's singleton socket points into pytest's folder, not /tmp (where every
    killed browser used to leave an ``org.chromium.Chromium.*`` folder)."""
    assert browser.evaluate("1 + 1") == 2
    socket = Path(os.readlink(_profile(tmp_path) / "SingletonSocket"))
    assert socket.parent.parent == chromium_tmp
    assert socket.parent.name.startswith("org.chromium.Chromium.")


def _page(tmp_path: Path) -> tuple[Path, list[str]]:
    """A trace page of a run with a parallel batch, a failure, an invalid call and a
    discarded early start, and the call ids it logged."""
    db = str(tmp_path / "runs.db")
    model = ScriptedModel(
        [
            tool_call_turn(
                ("search", {"q": "a"}, "c-a"),
                ("search", {"q": "b"}, "c-b"),
                ("write", {"path": "p"}, "c-w"),
                ("search", {"nope": 1}, "c-bad"),
                fragment=3,
            ),
            text_turn("done"),
        ],
        chunk_delay=0.002,
    )
    Agent(model, [search, write], log=db).run_sync("go </script> & <b>")
    out = tmp_path / "trace.html"
    assert main(["trace", "last", "--db", db, "--html", str(out)]) == 0
    return out, ["c-a", "c-b", "c-w", "c-bad"]


def _problems(tools: DevTools) -> list[str]:
    problems = []
    for event in tools.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            problems.append(f"exception: {params['exceptionDetails']}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            problems.append(f"console.{params['type']}: {params.get('args')}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            problems.append(f"log: {params['entry']}")
        elif method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if not url.startswith(("file://", "data:")):  # a data: image is no fetch
                problems.append(f"fetch: {url}")
    return problems


def test_trace_page_in_headless_chromium(browser: DevTools, tmp_path: Path) -> None:
    page, call_ids = _page(tmp_path)
    browser.send("Page.navigate", url=page.as_uri())
    browser.wait_for("Page.loadEventFired")

    bars = browser.evaluate(
        "Array.from(document.querySelectorAll('.bar.call')).map(b => {"
        " const r = b.getBoundingClientRect();"
        " return {id: b.dataset.callId, status: b.dataset.status, left: r.left, right: r.right,"
        " width: r.width, height: r.height}; })"
    )
    assert sorted(b["id"] for b in bars) == sorted(call_ids)
    assert all(b["width"] > 0 and b["height"] > 0 for b in bars)  # every bar visible
    status = {b["id"]: b["status"] for b in bars}
    assert status == {"c-a": "ok", "c-b": "ok", "c-w": "error", "c-bad": "error"}
    by_id = {b["id"]: b for b in bars}
    model_bar = browser.evaluate(
        "(() => { const r = document.querySelector('.bar.model').getBoundingClientRect();"
        " return {left: r.left, right: r.right}; })()"
    )
    # The searches started early: before the stream's bar ends.
    assert by_id["c-a"]["left"] < model_bar["right"]
    assert by_id["c-b"]["left"] < model_bar["right"]

    details = browser.evaluate(
        "document.querySelector('.bar.call[data-call-id=\"c-w\"]').click();"
        " document.getElementById('details').textContent"
    )
    assert '"path": "p"' in details and "disk full while writing p" in details
    assert browser.evaluate("document.querySelectorAll('script').length") == 2  # nothing injected

    shot = browser.send("Page.captureScreenshot", format="png")
    screenshot = tmp_path / "trace.png"
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    assert screenshot.read_bytes().startswith(b"\x89PNG")
    assert _problems(browser) == []


def test_discarded_call_bar(browser: DevTools, tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    Agent(CorrectingModel(), [search], log=db).run_sync("go")
    out = tmp_path / "discarded.html"
    assert main(["trace", "last", "--db", db, "--html", str(out)]) == 0
    browser.send("Page.navigate", url=out.as_uri())
    browser.wait_for("Page.loadEventFired")
    statuses = browser.evaluate(
        "Array.from(document.querySelectorAll('.bar.call')).map(b => b.dataset.status)"
    )
    assert statuses == ["discarded", "ok"]
    assert _problems(browser) == []


INJECTED = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


def test_a_crafted_log_runs_no_script(browser: DevTools, tmp_path: Path) -> None:
    """Markup where a number belongs (round, seq, idx) is shown as text, and the page's
    policy lets only its own script run: the bars still open their details."""
    import sqlite3

    from toolwire.observe.trace import CSP, SCRIPT_HASH

    db = tmp_path / "runs.db"
    Agent(ScriptedModel([tool_call_turn(("search", {"q": "a"}, "c-a")), text_turn("ok")]),
          [search], log=str(db)).run_sync("go")  # fmt: skip
    conn = sqlite3.connect(db)
    conn.execute("UPDATE requests SET round = ?, seq = seq || ?", (INJECTED, INJECTED))
    conn.execute("UPDATE calls SET round = ?, idx = ?", (INJECTED, INJECTED))
    conn.commit()
    conn.close()
    out = tmp_path / "crafted.html"
    assert main(["trace", "last", "--db", str(db), "--html", str(out)]) == 0
    page = out.read_text()
    assert "<script>window.__pwned" not in page and "<img src=x" not in page
    assert f"script-src '{SCRIPT_HASH}';" in CSP and CSP in page
    assert "script-src 'unsafe-inline'" not in page
    browser.send("Page.navigate", url=out.as_uri())
    browser.wait_for("Page.loadEventFired")
    assert browser.evaluate("window.__pwned === undefined")
    assert browser.evaluate("document.querySelectorAll('img, script').length") == 2
    assert INJECTED in browser.evaluate("document.querySelector('section.round h2').textContent")
    details = browser.evaluate(  # the page's own script runs under its hash
        "document.querySelector('.bar.call').click();"
        " document.getElementById('details').textContent"
    )
    assert "found a" in details
    assert _problems(browser) == []


# -- the run on one axis, the legend, the answer, approvals -------------------------------

BOXES = (
    "Array.from(document.querySelectorAll(SELECTOR)).map(e => {"
    " const r = e.getBoundingClientRect();"
    " return {kind: e.dataset.kind || e.dataset.key || '', text: e.textContent,"
    " title: e.title || '', left: r.left, right: r.right, width: r.width, height: r.height,"
    " top: r.top}; })"
)


def _boxes(browser: DevTools, selector: str) -> list[dict[str, Any]]:
    return browser.evaluate(BOXES.replace("SELECTOR", json.dumps(selector)))  # type: ignore[no-any-return]


def _open(browser: DevTools, page: Path) -> None:
    browser.send("Page.navigate", url=page.as_uri())
    browser.wait_for("Page.loadEventFired")


def test_the_whole_run_on_one_axis_with_a_legend_and_the_answer(
    browser: DevTools, tmp_path: Path
) -> None:
    from .trace_runs import ANSWER, page_of, three_rounds

    three_rounds(tmp_path / "runs.db")
    _open(browser, page_of(tmp_path / "runs.db", tmp_path / "t.html"))

    # One axis: labels in human units, evenly spaced, the same above and below the lanes.
    ticks = _boxes(browser, ".axis span")
    top, bottom = ticks[: len(ticks) // 2], ticks[len(ticks) // 2 :]
    assert [t["text"] for t in top] == [t["text"] for t in bottom]
    assert top[0]["text"] == "0" and all(re.fullmatch(HUMAN, t["text"]) for t in top)
    centres = [(t["left"] + t["right"]) / 2 for t in top[1:]]  # each label centred on its tick
    gaps = [b - a for a, b in itertools.pairwise(centres)]
    assert max(gaps) - min(gaps) < 1.5  # pixels: one step apart, each
    tracks = _boxes(browser, ".track")
    assert len({(round(t["left"]), round(t["width"])) for t in tracks}) == 1  # one scale
    models = _boxes(browser, ".bar.model")
    assert [m["left"] >= p["right"] - 1 for p, m in itertools.pairwise(models)] == [True, True]

    # Every bar and mark drawn has a visible legend entry; the black tick is explained.
    drawn = {b["kind"] for b in _boxes(browser, ".lanes [data-kind]")}
    legend = {k["kind"]: k for k in _boxes(browser, "#legend .key")}
    assert {"model", "first-event", "waiting", "s-ok", "s-error"} <= drawn <= set(legend)
    assert all(legend[k]["width"] > 0 and legend[k]["height"] > 0 for k in drawn)
    assert "time to first token" in legend["first-event"]["text"]
    ticks_on_bars = _boxes(browser, ".lanes .mark.first-event")
    assert len(ticks_on_bars) == 3 and all(t["height"] > 0 for t in ticks_on_bars)

    # Tokens per request, the answer without a click, the approval wait as a segment.
    labels = [b["text"] for b in _boxes(browser, ".lane-model .label")]
    assert labels[0] == "model request #1812 in · 45 out tokens"
    assert browser.evaluate("document.querySelector('#answer pre').textContent") == ANSWER
    assert _boxes(browser, "#answer pre")[0]["height"] > 0
    [ran] = _boxes(browser, '.bar.call[data-call-id="c-d"]')
    # In the same lane (every call that may not run twice waits for its start row too).
    [waiting] = [b for b in _boxes(browser, ".bar.waiting") if b["top"] == ran["top"]]
    # It ends where the run begins (a wait shorter than a bar's 3 px minimum overlaps it).
    assert waiting["width"] > 0 and waiting["left"] <= ran["left"] <= waiting["right"] + 1.5
    details = browser.evaluate(
        "Array.from(document.querySelectorAll('.bar.waiting')).pop().click();"
        " document.getElementById('details').textContent"
    )
    assert "waiting to start" in details and '"path": "x"' in details
    assert browser.evaluate("window.__pwned === undefined")
    assert browser.evaluate("document.querySelectorAll('img, script').length") == 2
    shot = browser.send("Page.captureScreenshot", format="png")
    (tmp_path / "trace.png").write_bytes(base64.b64decode(shot["data"]))
    assert _problems(browser) == []


def test_a_paused_run_shows_its_approval_wait(browser: DevTools, tmp_path: Path) -> None:
    from .trace_runs import page_of, paused_and_resumed

    paused_and_resumed(tmp_path / "runs.db", answer="not now")
    _open(browser, page_of(tmp_path / "runs.db", tmp_path / "t.html"))
    [held] = _boxes(browser, ".bar.approval")
    [denied] = _boxes(browser, ".lanes .mark.denied")
    [paused] = _boxes(browser, ".bar.paused")
    assert held["width"] > 0 and denied["width"] > 0 and paused["width"] > 0
    assert "denied by alice" in held["title"] and abs(denied["left"] + 6 - held["right"]) < 1.5
    [call] = _boxes(browser, '.bar.call[data-call-id="c2"]')
    assert call["top"] == held["top"] and call["left"] >= held["right"] - 1.5
    assert "paused" in browser.evaluate("document.querySelector('section.pause').textContent")
    assert _problems(browser) == []


HUMAN = r"0|\d+(\.\d+)? (µs|ms|s)|\d+ min( \d+ s)?|\d+ h( \d+ min)?"


def test_a_retried_call_shows_each_attempt(browser: DevTools, tmp_path: Path) -> None:
    from .trace_runs import page_of, retried

    retried(tmp_path / "runs.db")
    _open(browser, page_of(tmp_path / "runs.db", tmp_path / "t.html"))
    [ran] = _boxes(browser, '.bar.call[data-call-id="c-f"]')
    lane = [b for b in _boxes(browser, ".lanes .bar") if b["top"] == ran["top"]]
    assert [b["kind"] for b in lane] == ["retried", "backoff", "retried", "backoff", "s-ok"]
    assert all(b["width"] > 0 for b in lane)
    assert all(a["left"] <= b["left"] for a, b in itertools.pairwise(lane))
    legend = {k["kind"] for k in _boxes(browser, "#legend .key")}
    assert {"retried", "backoff"} <= legend
    assert _problems(browser) == []
