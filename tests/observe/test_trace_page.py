"""The trace page's HTML, read without a browser: one axis for the run, a legend entry
for every mark drawn, tokens per request, the answer, approval waits as segments, and
every logged text escaped."""

from __future__ import annotations

import itertools
import re
from html.parser import HTMLParser
from pathlib import Path

from toolwire.observe.trace import LEGEND

from .helpers import rows
from .trace_runs import ANSWER, HOSTILE, page_of, paused_and_resumed, retried, three_rounds

HUMAN = re.compile(r"^(0|\d+(\.\d+)? (µs|ms|s)|\d+ min( \d+ s)?|\d+ h( \d+ min)?)$")


class Elements(HTMLParser):
    """Every element's attributes, and the text inside chosen elements."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict[str, str]] = []
        self.texts: dict[int, list[str]] = {}
        self._open: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = {k: v or "" for k, v in attrs} | {"tag": tag, "at": str(len(self.found))}
        self.found.append(element)
        if tag not in ("meta", "br", "img", "input"):
            self._open.append(len(self.found) - 1)

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for index in self._open:
            self.texts.setdefault(index, []).append(data)

    def text(self, element: dict[str, str]) -> str:
        return "".join(self.texts.get(int(element["at"]), []))

    def having(self, css: str) -> list[dict[str, str]]:
        return [e for e in self.found if css in e.get("class", "").split()]

    def drawn(self, kind: str) -> list[dict[str, str]]:
        """The timeline's bars and marks of one kind (not the legend's swatches)."""
        return [e for e in self.found if e.get("data-kind") == kind]


def _parse(page: Path) -> Elements:
    parsed = Elements()
    parsed.feed(page.read_text())
    return parsed


def _left(element: dict[str, str]) -> float:
    return float(re.search(r"left:([0-9.]+)%", element["style"]).group(1))  # type: ignore[union-attr]


def _width(element: dict[str, str]) -> float:
    return float(re.search(r"width:([0-9.]+)%", element["style"]).group(1))  # type: ignore[union-attr]


def test_one_axis_in_human_units_for_the_whole_run(tmp_path: Path) -> None:
    three_rounds(tmp_path / "runs.db")
    page = _parse(page_of(tmp_path / "runs.db", tmp_path / "t.html"))
    axes = page.having("axis")
    assert len(axes) == 2  # above and below the lanes, the same ticks
    labels = [
        page.text(e) for e in page.found if e["tag"] == "span" and "left:" in e.get("style", "")
    ]
    assert labels[: len(labels) // 2] == labels[len(labels) // 2 :]
    assert labels[0] == "0" and all(HUMAN.match(t) for t in labels), labels
    # The rounds share the axis: each request's bar starts after the previous one ended.
    models = page.drawn("model")
    assert len(models) == 3
    for before, after in itertools.pairwise(models):
        assert _left(after) >= _left(before) + _width(before) - 0.01
    assert [e["data-round"] for e in page.having("round")] == ["1", "2", "3"]


def test_every_mark_drawn_has_a_legend_entry(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    paused_and_resumed(db, answer=False)
    three_rounds(db)
    retried(db)
    drawn = set()
    for (run,) in rows(str(db), "SELECT run_id FROM runs"):
        page = _parse(page_of(db, tmp_path / "t.html", run))
        drawn |= {e["data-kind"] for e in page.found if "data-kind" in e}
        keys = {e["data-key"] for e in page.found if "data-key" in e}
        assert keys == {kind for kind, _, _ in LEGEND} | {"tokens"}
    assert drawn <= keys
    assert {"model", "first-event", "waiting", "approval", "denied", "paused", "s-ok",
            "s-error", "s-denied", "retried", "backoff"} <= drawn  # fmt: skip
    legend = {kind: meaning for kind, _, meaning in LEGEND}
    assert "time to first token" in legend["first-event"]


def test_tokens_per_request_and_the_answer_are_on_the_page(tmp_path: Path) -> None:
    three_rounds(tmp_path / "runs.db")
    out = page_of(tmp_path / "runs.db", tmp_path / "t.html")
    page = _parse(out)
    notes = [page.text(e) for e in page.found if e["tag"] == "small"]
    assert notes[:1] == ["812 in · 45 out tokens"]
    assert "930 in · 17 out tokens" in notes and "1004 in · 9 out tokens" in notes
    [answer] = [e for e in page.found if e.get("id") == "answer"]
    assert page.text(answer) == f"Answer{ANSWER}"
    assert "2746 input / 71 output tokens" in " ".join(page.text(e) for e in page.having("meta"))


def test_an_approval_during_the_run_is_a_waiting_segment_before_the_call_ran(
    tmp_path: Path,
) -> None:
    three_rounds(tmp_path / "runs.db")
    page = _parse(page_of(tmp_path / "runs.db", tmp_path / "t.html"))
    [row] = [e for e in page.found if "[0] delete" in e.get("title", "")]
    at = page.found.index(row)
    waiting, ran = page.found[at + 2], page.found[at + 3]  # label, track, then its bars
    assert waiting["data-kind"] == "waiting" and ran["data-call-id"] == "c-d"
    assert ran["data-status"] == "ok"
    assert abs(_left(waiting) + _width(waiting) - _left(ran)) < 0.01  # it ran once approved


def test_a_paused_run_shows_the_wait_the_answer_and_the_resume(tmp_path: Path) -> None:
    paused_and_resumed(tmp_path / "runs.db", answer=True)
    page = _parse(page_of(tmp_path / "runs.db", tmp_path / "t.html"))
    [held] = page.drawn("approval")
    assert "approved by alice" in held["title"]
    [mark] = page.drawn("approved")
    assert mark["title"] == "approved by alice"
    [paused] = page.drawn("paused")
    assert "until resumed by alice" in paused["title"]
    assert abs(_left(mark) - (_left(held) + _width(held))) < 0.01  # the wait ends at the answer
    assert page.text(page.having("event")[0]).startswith("paused ")


def test_hostile_text_from_the_model_and_the_tools_stays_text(tmp_path: Path) -> None:
    three_rounds(tmp_path / "runs.db")
    text = page_of(tmp_path / "runs.db", tmp_path / "t.html").read_text()
    assert HOSTILE not in text and "<img" not in text and 'onerror="' not in text
    assert text.count("<script") == 2
    page = _parse(tmp_path / "t.html")
    assert HOSTILE in page.text(next(e for e in page.found if e.get("id") == "answer"))


def test_each_retried_attempt_and_its_backoff_are_segments(tmp_path: Path) -> None:
    retried(tmp_path / "runs.db")
    page = _parse(page_of(tmp_path / "runs.db", tmp_path / "t.html"))
    [row] = [e for e in page.found if "[0] flaky" in e.get("title", "")]
    at = page.found.index(row)
    bars = [e for e in page.found[at:] if "bar" in e.get("class", "").split()][:5]
    kinds = [b["data-kind"] for b in bars]
    assert kinds == ["retried", "backoff", "retried", "backoff", "s-ok"]
    assert [b["title"].split(":")[0] for b in bars] == [
        "attempt 1 failed", "backoff after attempt 1", "attempt 2 failed",
        "backoff after attempt 2", "ok (attempt 3)",
    ]  # fmt: skip
    for before, after in itertools.pairwise(bars):  # end to end, in order
        assert abs(_left(before) + _width(before) - _left(after)) < 0.01
    notes = [page.text(e) for e in page.found if e["tag"] == "small"]
    assert "3 attempts" in notes


def test_a_crafted_retry_column_places_nothing(tmp_path: Path) -> None:
    import sqlite3

    retried(tmp_path / "runs.db")
    for crafted in ("[[1, 2]]", '{"a": 1}', '[["<b>", 3]]', "not json", "[[9e99, 9e99]]"):
        conn = sqlite3.connect(tmp_path / "runs.db")
        conn.execute("UPDATE calls SET retried = ?", (crafted,))
        conn.commit()
        conn.close()
        page = _parse(page_of(tmp_path / "runs.db", tmp_path / "t.html"))
        assert [b["data-kind"] for b in page.drawn("s-ok")] == ["s-ok"]
        assert not page.drawn("retried") and not page.drawn("backoff"), crafted


def test_a_long_pause_is_a_break_and_the_rest_stays_readable(tmp_path: Path) -> None:
    """The answer came two hours after the pause: the wait is a break, not 99.99 % of
    the axis, and the ticks after it count from the resume."""
    import sqlite3

    db = tmp_path / "runs.db"
    paused_and_resumed(db, answer=True)
    conn = sqlite3.connect(db)
    [(paused_at,)] = conn.execute("SELECT at FROM timeline WHERE kind = 'paused'")
    later = (7200.0, paused_at)
    conn.execute("UPDATE timeline SET at = at + ? WHERE at > ?", later)
    conn.execute("UPDATE runs SET ended_at = ended_at + ?", later[:1])
    for table, columns in (("requests", ("started_at", "first_event_at", "ended_at")),
                           ("calls", ("started_at", "ended_at"))):  # fmt: skip
        for column in columns:
            conn.execute(f"UPDATE {table} SET {column} = {column} + ? WHERE {column} > ?", later)
    conn.commit()
    conn.close()
    page = _parse(page_of(db, tmp_path / "t.html"))
    [gap] = page.drawn("break")
    assert page.text(gap) == "paused 2 h" and 4.9 < _width(gap) < 5.1
    models = page.drawn("model")
    # Drawn to scale, the first request would sit at 0.001 % of the axis; with the break
    # it gets its share of the time actually spent (how much depends on the machine's
    # load, so only its order of magnitude is checked), and the break lies between it
    # and the resumed request.
    assert _left(models[0]) > 0.02
    assert _left(models[0]) < _left(gap) < _left(models[-1])
    ticks = [
        page.text(e) for e in page.found if e["tag"] == "span" and "left:" in e.get("style", "")
    ]
    assert ticks[0] == "0" and "+0" in ticks and all(HUMAN.match(t.lstrip("+")) for t in ticks)
    [held] = page.drawn("approval")
    assert _left(held) < _left(gap) + _width(gap) <= _left(held) + _width(held) + 0.01


def test_a_failed_request_is_drawn_as_failed_with_its_error(tmp_path: Path) -> None:
    import json
    import sqlite3

    three_rounds(tmp_path / "runs.db")
    conn = sqlite3.connect(tmp_path / "runs.db")
    conn.execute(
        "UPDATE requests SET error = ?, error_type = 'ProviderError', error_status = 400"
        " WHERE seq = 2",
        (f"image refused {HOSTILE}",),
    )
    conn.commit()
    conn.close()
    out = page_of(tmp_path / "runs.db", tmp_path / "t.html")
    page = _parse(out)
    [failed] = page.drawn("model-failed")
    assert failed["data-request"] == "2" and "ProviderError" in failed["title"]
    assert len(page.drawn("model")) == 2 and len(page.drawn("first-event")) == 2
    data = out.read_text().split('id="trace-data">', 1)[1].split("</script>", 1)[0]
    item = json.loads(data)["items"][int(failed["data-item"])]
    assert item["sections"][0] == ["error: ProviderError (HTTP 400)", f"image refused {HOSTILE}"]
    assert HOSTILE not in out.read_text()
