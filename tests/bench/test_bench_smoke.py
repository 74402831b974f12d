"""Smoke tests of the benchmarks: every contestant gives the same result on tiny workloads.

Correctness only, never timing: the benchmarks compare speed, and a speed comparison
is worthless if a contestant assembles different calls. Peers that are not installed
are skipped.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench_assembly  # noqa: E402
import bench_partial_json  # noqa: E402
import peers  # noqa: E402
import workloads  # noqa: E402

TOOL_CONTESTANTS = [(f"openai/{c}", f, m) for c, f, m in bench_assembly.OPENAI_CONTESTANTS] + [
    (f"anthropic/{c}", f, m) for c, f, m in bench_assembly.ANTHROPIC_CONTESTANTS
]
BIG_CAP = 10**12


def _need(module: str | None) -> None:
    if module is not None and not peers.available(module):
        pytest.skip(f"peer {module} is not installed")


@pytest.fixture(scope="module")
def tiny() -> workloads.ToolWorkload:
    return workloads.build_tool_workload(3, 300, seed=11)


# -- workloads -----------------------------------------------------------------------------


@pytest.mark.parametrize("calls,size", [(1, 100), (4, 2000), (16, 100)])
def test_workload_fragments_rebuild_the_arguments(calls: int, size: int) -> None:
    w = workloads.build_tool_workload(calls, size)
    assert len(w.calls) == calls
    for spec in w.calls:
        assert "".join(spec.fragments) == spec.arguments
        assert all(1 <= len(f) <= 8 for f in spec.fragments)
        assert isinstance(spec.input, dict)
        assert len(spec.arguments) >= size
    assert len({spec.id for spec in w.calls}) == calls


def test_schedule_keeps_each_calls_order_and_starts_calls_in_index_order() -> None:
    w = workloads.build_tool_workload(16, 100)
    seen = [0] * 16
    starts = []
    for call, k in w.schedule:
        assert k == seen[call]
        seen[call] += 1
        if k == 0:
            starts.append(call)
    assert starts == list(range(16))
    assert seen == [len(c.fragments) for c in w.calls]
    # The calls really are interleaved, not sent one after another.
    assert any(a != b for (a, _), (b, _) in zip(w.schedule, w.schedule[1:]))


def test_workloads_are_deterministic() -> None:
    a = workloads.build_tool_workload(4, 2000)
    b = workloads.build_tool_workload(4, 2000)
    assert a.openai_chunks() == b.openai_chunks()
    assert a.anthropic_events() == b.anthropic_events()


def test_openai_chunks_carry_one_fragment_each_and_id_name_first(
    tiny: workloads.ToolWorkload,
) -> None:
    chunks = tiny.openai_chunks()
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    opened: set[int] = set()
    for chunk in chunks[1:-1]:
        (tc,) = chunk["choices"][0]["delta"]["tool_calls"]
        first = tc["index"] not in opened
        assert ("id" in tc and "name" in tc["function"]) == first
        opened.add(tc["index"])


def test_sse_stream_and_reads_round_trip(tiny: workloads.ToolWorkload) -> None:
    data = workloads.sse_stream(tiny.openai_chunks())
    reads = workloads.sse_reads(data, seed=3)
    assert b"".join(reads) == data
    assert all(len(r) <= 4096 for r in reads)
    assert all(len(r) >= 64 for r in reads[:-1])
    payloads = [line[6:] for line in data.split(b"\n") if line.startswith(b"data: ")]
    assert payloads[-1] == b"[DONE]"
    assert [json.loads(p) for p in payloads[:-1]] == tiny.openai_chunks()


def test_partial_documents_have_the_requested_size() -> None:
    for size in workloads.PARTIAL_SIZES:
        text = workloads.json_document(size)
        assert size <= len(text) <= size + 1000  # overshoots by at most one record
        assert "".join(workloads.deltas(text)) == text


# -- contestants agree ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "label,factory,module", TOOL_CONTESTANTS, ids=[t[0] for t in TOOL_CONTESTANTS]
)
def test_tool_contestant_assembles_the_expected_calls(
    tiny: workloads.ToolWorkload, label: str, factory: Any, module: str | None
) -> None:
    _need(module)
    run = factory(tiny)
    first = run(BIG_CAP)
    assert not first.partial
    assert first.output == tiny.expected()
    assert run(BIG_CAP).output == tiny.expected()  # contestants can run again


def test_slow_peer_batches_stop_at_the_cap(
    tiny: workloads.ToolWorkload, monkeypatch: pytest.MonkeyPatch
) -> None:
    _need("openai")
    monkeypatch.setattr(peers, "BATCH", 5)
    result = peers.openai_sdk(tiny)(0)  # a cap of 0 ns stops after the first batch
    assert result.partial
    assert result.done == 5
    assert result.total == len(tiny.openai_chunks())


@pytest.mark.parametrize("factory", [peers.floor_sse, peers.toolwire_sse])
def test_sse_contestants_assemble_the_expected_calls(
    tiny: workloads.ToolWorkload, factory: Any
) -> None:
    reads = workloads.sse_reads(workloads.sse_stream(tiny.openai_chunks()), seed=5, low=1, high=64)
    assert factory(reads)(BIG_CAP).output == tiny.expected()


@pytest.mark.parametrize("stride", [1, 3])
@pytest.mark.parametrize(
    "name,factory,module",
    [
        ("toolwire", lambda p, s: peers.toolwire_partial(p), None),
        ("jiter", peers.jiter_partial, "jiter"),
        ("partial-json-parser", peers.partial_json_parser_partial, "partial_json_parser"),
    ],
)
def test_partial_contestants_reach_the_final_value(
    name: str, factory: Any, module: str | None, stride: int
) -> None:
    _need(module)
    text = workloads.json_document(600, seed=5)
    result = factory(workloads.deltas(text), stride)(BIG_CAP)
    assert result.output == json.loads(text)
    assert result.elapsed_ns >= 0


def test_json_loads_unit() -> None:
    text = workloads.json_document(300)
    assert peers.json_loads_unit(text)(BIG_CAP).output == json.loads(text)


# -- harness -------------------------------------------------------------------------------


def test_measure_reports_lower_bounds_and_best_samples() -> None:
    def capped(cap_ns: int) -> workloads.Run:
        return workloads.Run(1_000, done=1, total=10)

    def steady(cap_ns: int) -> workloads.Run:
        return workloads.Run(500, output="x")

    res = workloads.measure(
        {"capped": capped, "steady": steady}, repeats=3, min_sample_ns=0, cap_ns=1
    )
    assert res["capped"].lower_bound and res["capped"].ns == 10_000
    assert res["steady"].ns == 500 and res["steady"].samples == 3 and res["steady"].output == "x"
    assert res["capped"].cell(100).startswith(">= ")


def test_growth_exponent() -> None:
    assert workloads.growth_exponent([1, 100], [2, 200]) == pytest.approx(1.0)
    assert workloads.growth_exponent([1, 10, 100], [1, 100, 10_000]) == pytest.approx(2.0)


# -- the commands run end to end -----------------------------------------------------------


def test_bench_assembly_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "assembly.json"
    argv = [
        "--quick",
        "--calls",
        "2",
        "--sizes",
        "100",
        "--repeats",
        "1",
        "--no-peers",
        "--json",
        str(out),
    ]
    assert bench_assembly.main(argv) == 0
    printed = capsys.readouterr().out
    assert "## 1a. Decoded OpenAI chunks" in printed and "## 2. Raw SSE bytes" in printed
    assert "WRONG" not in printed
    data = json.loads(out.read_text())
    (row,) = data["workloads"]
    assert set(row["openai"]) == {"floor", "toolwire"}
    assert set(row["sse"]) == {"floor", "toolwire"}


def test_bench_partial_json_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "partial.json"
    argv = [
        "--quick",
        "--sizes",
        "300",
        "600",
        "--repeats",
        "1",
        "--pjp-samples",
        "20",
        "--json",
        str(out),
    ]
    assert bench_partial_json.main(argv) == 0
    printed = capsys.readouterr().out
    assert "growth exponent" in printed and "WRONG" not in printed
    data = json.loads(out.read_text())
    assert [d["size"] for d in data["documents"]] == [300, 600]
    assert "toolwire" in data["summary"]


def test_the_instruction_count_runs_every_short_workload_without_valgrind() -> None:
    import count_assembly

    for provider in count_assembly.PROVIDERS:
        for who in ("floor", "toolwire"):
            count_assembly._inner(provider, who, 1, 100, 1)  # what callgrind counts


@pytest.mark.parametrize("provider", bench_assembly.TURN_PROVIDERS)
@pytest.mark.parametrize(("calls", "size"), bench_assembly.TURN_WORKLOADS)
def test_per_turn_floor_and_toolwire_agree(provider: str, calls: int, size: int) -> None:
    items = bench_assembly.provider_turn(provider, calls, size)
    floor = bench_assembly.turn_floor(provider, items)()
    assert floor == bench_assembly.turn_toolwire(provider, items)()
    assert [name for _, name, _ in floor] and len(floor) == calls


def test_the_per_turn_count_runs_without_valgrind() -> None:
    import count_assembly

    for provider in bench_assembly.TURN_PROVIDERS:
        for who in ("floor_turn", "toolwire_turn"):
            count_assembly._inner(provider, who, 1, 100, 1)  # what callgrind counts


def test_the_hosted_count_runs_every_case_without_valgrind() -> None:
    import subprocess

    import count_hosted

    script = str(BENCH / "count_hosted.py")
    with subprocess.Popen(
        [sys.executable, script, "--serve"], stdout=subprocess.PIPE, text=True
    ) as server:
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline())
            for provider in count_hosted.PROVIDERS:
                for mode, extra, deltas in (
                    ("sse", 3, True),
                    ("sse", 0, False),
                    ("json", 0, False),
                ):
                    count_hosted.inner(provider, mode, extra, deltas, 1, port, own=False)
            count_hosted.inner("openai", "sse", 0, True, 1, port, own=True)
        finally:
            server.terminate()
