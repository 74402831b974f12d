from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import DecoderStateError, ProtocolError, ToolwireError
from toolwire.wire import SSEDecoder, SSEEvent


def decode(data: bytes, cuts: list[int] | None = None) -> list[SSEEvent]:
    dec = SSEDecoder()
    events: list[SSEEvent] = []
    pos = 0
    for cut in sorted(set(cuts or [])):
        events += dec.feed(data[pos:cut])
        pos = cut
    events += dec.feed(data[pos:])
    return events + dec.close()


def test_fields_comments_and_multiline_data() -> None:
    raw = b": comment\nevent: update\nid: 7\nretry: 1500\ndata: first\ndata:second\n\ndata: x\n\n"
    assert decode(raw) == [
        SSEEvent("first\nsecond", "update", "7", 1500),
        SSEEvent("x", "message", "7", 1500),  # id and retry persist; event resets
    ]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_line_endings(eol: bytes) -> None:
    raw = eol.join([b"data: a", b"", b"data: b", b"", b""])
    assert [e.data for e in decode(raw)] == ["a", "b"]


def test_bom_field_without_colon_and_bad_retry() -> None:
    raw = "\ufeffdata\nretry: 12x\nid: a\x00b\n\n".encode()
    assert decode(raw) == [SSEEvent("", "message", None, None)]


def test_blank_line_without_data_dispatches_nothing() -> None:
    assert decode(b"event: ping\n\ndata: z\n\n") == [SSEEvent("z")]


def test_final_event_without_blank_line_is_kept() -> None:
    assert decode(b"data: tail") == [SSEEvent("tail")]


def test_invalid_utf8_is_a_protocol_error_with_offset() -> None:
    dec = SSEDecoder()
    dec.feed(b"data: ok\n\n")
    with pytest.raises(ProtocolError, match="byte 16"):
        dec.feed(b"data: \xff\xfe\n\n")


def test_non_bytes_and_use_after_close() -> None:
    dec = SSEDecoder()
    # A str is the caller's mistake (``response.text`` for ``.content``): TypeError, as
    # for any wrongly typed argument, in the pure and the compiled build alike.
    with pytest.raises(TypeError, match="str"):
        dec.feed("data: x\n\n")  # type: ignore[arg-type]
    assert dec.feed(memoryview(b"data: x\n\n"))[0].data == "x"
    dec.close()
    with pytest.raises(DecoderStateError):
        dec.feed(b"")


SAMPLE = 'event: a\r\ndata: é😀\r\n\r\n: c\ndata: {"k": [1, 2]}\ndata: two\n\nid: 9\rdata: x\r\r'.encode()


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(SAMPLE)), max_size=20))
def test_any_split_gives_the_same_events(cuts: list[int]) -> None:
    assert decode(SAMPLE, cuts) == decode(SAMPLE)


@settings(max_examples=1000, deadline=None)
@given(st.binary(max_size=200), st.lists(st.integers(min_value=0, max_value=200), max_size=5))
def test_fuzz_only_toolwire_errors(data: bytes, cuts: list[int]) -> None:
    try:
        decode(data, [c for c in cuts if c <= len(data)])
    except ToolwireError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(SAMPLE)), max_size=20))
def test_feed_data_gives_each_events_data(cuts: list[int]) -> None:
    dec = SSEDecoder()
    payloads: list[str] = []
    pos = 0
    for cut in sorted(set(cuts)):
        payloads += dec.feed_data(SAMPLE[pos:cut])
        pos = cut
    payloads += dec.feed_data(SAMPLE[pos:]) + dec.close_data()
    assert payloads == [e.data for e in decode(SAMPLE)]


def test_utf8_sequence_cut_between_pieces() -> None:
    dec = SSEDecoder()
    euro = "€".encode()
    assert dec.feed(b"data: " + euro[:1]) == []
    assert dec.feed(euro[1:2]) == []
    assert dec.feed(euro[2:] + b"\n\n") == [SSEEvent("€")]


def test_cut_sequence_that_turns_out_invalid_names_its_byte() -> None:
    dec = SSEDecoder()
    dec.feed(b"data: \xe2\x82")  # the start of a 3-byte sequence: bytes 6 and 7
    with pytest.raises(ProtocolError, match="byte 6"):
        dec.feed(b"(\n\n")


def test_stream_ending_inside_a_sequence_is_an_error() -> None:
    dec = SSEDecoder()
    dec.feed(b"data: ok\n\ndata: \xe2\x82")
    with pytest.raises(ProtocolError, match="not valid UTF-8"):
        dec.close()


def test_a_long_line_in_small_pieces_is_not_copied_per_piece() -> None:
    """Work counted, not timed: a piece of a long unfinished line is kept, not joined to
    what came before (an 8 MB line in 4 KB pieces was copied once per piece)."""
    dec = SSEDecoder()
    dec.feed(b"data: " + b"x" * 1_000_000)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        assert dec.feed(b"y" * 4096) == []
        copied = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert copied < 100_000
    events = dec.feed(b"\n\n")
    assert [len(e.data) for e in events] == [1_004_096]
