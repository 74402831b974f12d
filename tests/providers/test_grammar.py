"""The tool-call grammar: its rules, its errors, and (with llama.cpp) what it lets through."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from toolwire.errors import CallerError
from toolwire.providers.grammar import tool_call_grammar

from .conftest import demo_request

TOOLS = demo_request().tools

needs_llama = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed"
)


@needs_llama
def test_auto_allows_an_answer_or_calls() -> None:
    grammar = tool_call_grammar(TOOLS, "auto", max_calls=3)
    assert "root ::= answer | calls" in grammar
    assert 'calls ::= call ("\\n" call){0,2}' in grammar
    assert '"\\"explore_code\\""' in grammar and '"\\"get_weather\\""' in grammar
    assert '"\\"today\\""' in grammar and '"\\"tomorrow\\""' in grammar  # the enum


@needs_llama
def test_required_and_named_choices_narrow_the_grammar() -> None:
    assert "root ::= calls" in tool_call_grammar(TOOLS, "required")
    named = tool_call_grammar(TOOLS, "get_weather")
    assert "explore_code" not in named and "get_weather" in named


def test_choice_none_allows_a_plain_answer_only() -> None:
    """The tools stay in the prompt under ``none`` (a stable prefix): the grammar alone
    keeps them from being called or written out, and needs no tool to say so."""
    for tools in (TOOLS, []):
        grammar = tool_call_grammar(tools, "none")
        assert grammar.endswith("root ::= answer\n")
        assert "tool_call" not in grammar and "get_weather" not in grammar


@needs_llama
def test_choice_none_grammar_compiles() -> None:
    from toolwire.providers.local_import import import_llama_cpp

    grammars = import_llama_cpp("llama_cpp.llama_grammar")
    assert grammars.LlamaGrammar.from_string(tool_call_grammar(TOOLS, "none"), verbose=False)


@needs_llama
def test_refs_in_parameters_resolve() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "plan",
            "parameters": {
                "type": "object",
                "properties": {"step": {"$ref": "#/$defs/Step"}},
                "required": ["step"],
                "$defs": {
                    "Step": {
                        "type": "object",
                        "properties": {"n": {"type": "integer"}},
                        "required": ["n"],
                    }
                },
            },
        },
    }
    grammar = tool_call_grammar([tool], "required")
    assert "plan" in grammar and "integer" in grammar


@pytest.mark.parametrize(
    ("tools", "choice", "max_calls", "match"),
    [
        ([], "auto", 4, "at least one tool"),
        (TOOLS, "auto", 0, "max_calls"),
        (TOOLS, "send_email", 4, "not auto, required or one of the tools"),
    ],
)
def test_bad_arguments_are_caller_errors(
    tools: list, choice: str, max_calls: int, match: str
) -> None:
    if tools and importlib.util.find_spec("llama_cpp") is None and match != "max_calls":
        pytest.skip("llama-cpp-python not installed")
    with pytest.raises(CallerError, match=match):
        tool_call_grammar(tools, choice, max_calls=max_calls)


def test_missing_llama_cpp_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes the import fail
    monkeypatch.setitem(sys.modules, "llama_cpp.llama_grammar", None)
    with pytest.raises(CallerError, match=r"toolwire\[local\]"):
        tool_call_grammar(TOOLS)


def test_a_free_form_tool_is_a_clear_error_not_a_key_error() -> None:
    """Needs no llama.cpp: the tools are checked before any grammar is built."""
    from toolwire import tool
    from toolwire.errors import ToolMappingError

    @tool(freeform=True)
    def apply_patch(patch: str) -> str:
        """Apply a patch."""
        return patch

    with pytest.raises(
        ToolMappingError, match="free-form \\(custom\\) tools: 'apply_patch'"
    ) as info:
        tool_call_grammar([*TOOLS, apply_patch.definition()], "auto")
    assert isinstance(info.value, CallerError) and info.value.fault == "caller"
    assert "responses:gpt-5" in (info.value.hint or "")


def _import_llama_cpp_and_exit(*options: str) -> subprocess.CompletedProcess[str]:
    code = (
        "from toolwire.providers.grammar import tool_call_grammar\n"
        "from toolwire.demo.tools import DEMO_TOOLS\n"
        "print(len(tool_call_grammar([t.definition() for t in DEMO_TOOLS], 'auto')))\n"
    )
    return subprocess.run(
        [sys.executable, *options, "-W", "error::ResourceWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@needs_llama
def test_importing_llama_cpp_leaves_no_file_open_at_exit() -> None:
    """llama_cpp's import opens /dev/null twice and never closes it; toolwire's import
    of it closes both at exit, so a process with ResourceWarning as an error is quiet."""
    done = _import_llama_cpp_and_exit()
    quiet = "ResourceWarning" not in done.stderr and "/dev/null" not in done.stderr
    if done.returncode != 0 or not quiet:
        # An unclosed file's warning names the file either way; tracemalloc adds where it
        # was opened, but slows the whole import of llama_cpp tenfold (1.5 -> 17 s of
        # CPU), so it runs only to explain a failure.
        done = _import_llama_cpp_and_exit("-X", "tracemalloc=5")
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 0  # the grammar was built: llama_cpp was imported
    assert "ResourceWarning" not in done.stderr and "/dev/null" not in done.stderr, done.stderr
