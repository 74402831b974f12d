"""An incremental Server-Sent Events decoder (sans-I/O).

Bytes go in split anywhere — inside a line, inside a UTF-8 sequence, between CR and
LF — and complete events come out. It follows the WHATWG event-stream rules (``data``,
``event``, ``id``, ``retry`` fields, ``:`` comments, CR / LF / CRLF line ends,
multi-line data, a leading BOM) with one deliberate leniency: at ``close()`` a final
event that lacks its blank line is still dispatched, because servers that forget the
last newline are common and dropping their final chunk would lose data.

Bytes are decoded once per feed (a UTF-8 sequence cut at the end of a piece waits for
the next one) and split into lines with ``str.split``; only whole lines are
interpreted, so each byte is handled a constant number of times. A piece without a
line end is only kept (in a list of pieces, joined when the line ends), never joined to
what came before: an 8 MB line fed in 4 KB pieces must not be copied 2,000 times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import DecoderStateError, ProtocolError

__all__ = ["SSEDecoder", "SSEEvent"]


@dataclass(slots=True)
class SSEEvent:
    """One dispatched event: its type (``message`` by default), data, last id and retry."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    """Turns a byte stream into ``SSEEvent`` objects, however the bytes are split."""

    __slots__ = (
        "_bom_done",
        "_buf",
        "_closed",
        "_data",
        "_event",
        "_id",
        "_offset",
        "_partial",
        "_retry",
    )

    def __init__(self) -> None:
        self._partial = b""  # the start of a UTF-8 sequence cut off by the last piece
        self._buf: list[str] = []  # the pieces of an unfinished line
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._offset = 0  # bytes consumed, for error messages
        self._bom_done = False
        self._closed = False

    def feed(self, data: bytes | bytearray | memoryview) -> list[SSEEvent]:
        """Consume the next bytes; return the events they complete."""
        return self._lines(self._take(data, "feed"), final=False)

    def close(self) -> list[SSEEvent]:
        """End of stream: dispatch what is still buffered (see the module docstring)."""
        if self._closed:
            return []
        self._closed = True
        text = self._decode(b"", final=True)
        return self._lines(text, final=True)

    def feed_data(self, data: bytes | bytearray | memoryview) -> list[str]:
        """Like ``feed``, but return only each event's data.

        The provider decoders need nothing else (their JSON carries the event type), and
        skipping one ``SSEEvent`` per event is measurable on a stream of small chunks.
        """
        return self._lines(self._take(data, "feed_data"), final=False, payloads=True)

    def close_data(self) -> list[str]:
        """Like ``close``, but return only each event's data."""
        if self._closed:
            return []
        self._closed = True
        return self._lines(self._decode(b"", final=True), final=True, payloads=True)

    def _take(self, data: bytes | bytearray | memoryview, method: str) -> str:
        """Check the next bytes (``method`` is the public caller, for the error) and decode them."""
        if self._closed:
            raise DecoderStateError(f"SSEDecoder.{method}() called after close()")
        if not isinstance(data, (bytes, bytearray, memoryview)):  # the compiled build checks first
            raise TypeError(f"SSE input must be bytes, got {type(data).__name__}")
        text = self._decode(bytes(data), final=False)
        self._offset += len(data)
        return text

    def _decode(self, data: bytes, *, final: bool) -> str:
        # bytes.decode directly: an incremental decoder object costs more per piece
        # than the decoding itself on a stream of small reads (bench/bench_assembly.py).
        partial = self._partial
        if partial:
            data = partial + data
            self._partial = b""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            if final or exc.reason != "unexpected end of data":
                self._closed = True
                raise ProtocolError(
                    f"SSE stream is not valid UTF-8 ({exc.reason})",
                    where=f"byte {self._offset - len(partial) + exc.start}",
                ) from None
            # A sequence cut at the end of the piece: the rest comes with the next one.
            self._partial = data[exc.start :]
            text = data[: exc.start].decode("utf-8")
        if not self._bom_done and text:
            self._bom_done = True
            if text[0] == "\ufeff":
                text = text[1:]
        return text

    def _lines(self, text: str, *, final: bool, payloads: bool = False) -> list[Any]:  # noqa: PLR0912 — SSE's line rules in one pass per chunk, on the hot path
        buf = self._buf
        if (
            not final
            and "\n" not in text
            and "\r" not in text
            and not (buf and buf[-1][-1] == "\r")
        ):
            if text:
                buf.append(text)  # no line ends here: nothing to interpret yet
            return []
        if buf:
            buf.append(text)
            text = "".join(buf)
            buf.clear()
        lines = _split_lines(text, final)
        if not final:
            rest = lines.pop()
            if rest:
                buf.append(rest)
        events: list[Any] = []
        data = self._data
        for line in lines:
            if not line:
                if not data:
                    self._event = ""
                elif payloads and len(data) == 1:
                    # The usual event, one data line, dispatched without a call.
                    events.append(data[0])
                    data.clear()
                    self._event = ""
                else:
                    events.append(self._dispatch(payloads))
                    data = self._data
            elif line.startswith("data:"):
                data.append(line[6:] if line[5:6] == " " else line[5:])
            elif line[0] != ":":
                self._field(line)
        if final and data:
            events.append(self._dispatch(payloads))
        return events

    def _field(self, line: str) -> None:
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)  # "data" without a colon: an empty data line
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)

    def _dispatch(self, payload_only: bool = False) -> SSEEvent | str:
        data = self._data
        text = data[0] if len(data) == 1 else "\n".join(data)
        self._data = []
        event = self._event
        self._event = ""
        if payload_only:
            return text
        return SSEEvent(text, event or "message", self._id, self._retry)


def _split_lines(text: str, final: bool) -> list[str]:
    """``text`` split at CR, LF and CRLF; unless ``final``, the last item is unfinished."""
    if "\r" in text:
        # Keep a trailing CR back: its LF may be in the next piece.
        hold = text.endswith("\r") and not final
        if hold:
            text = text[:-1]
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if hold:
            text += "\r"
    return text.split("\n")
