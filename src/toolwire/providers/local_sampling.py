"""Grammar-constrained sampling that asks the grammar only about the token chosen.

llama-cpp-python puts the grammar first in its sampler chain, so every generated token
runs the grammar over the whole vocabulary (151,936 tokens for Qwen2.5) before a token
is picked. llama.cpp's own tools check lazily, and so does :class:`LazyGrammarSampler`:
sample from the chain without the grammar, ask the grammar about that one token, and
only when it is rejected apply the grammar to every candidate and sample again. Under
greedy decoding the two pick the same token every time: the highest-scoring token the
grammar allows (the lowest id among ties, either way). With a temperature both give
output the grammar allows; the random draws differ.

Measured on the default model (``bench/bench_local.py``; bench/README.md, "eighth
pass"): a tool call's generated token cost 58-69 ms of CPU with the grammar first,
45-49 ms with the lazy check, 44-45 ms with no grammar at all. A rejection (the model
starting a sentence where the grammar wants ``<tool_call>``) is rare.

:func:`check_grammar_lazily` installs it on a loaded ``Llama`` through ``_init_sampler``,
which ``Llama.generate`` calls once per completion: the narrowest hook, leaving the rest
of ``create_completion`` (stop strings, end of generation, ``max_tokens``, UTF-8 split
across tokens, streaming, usage) as it is.
"""

from __future__ import annotations

import ctypes
import inspect
import math
import types
from typing import Any

from .local_import import import_llama_cpp

__all__ = ["LazyGrammarSampler", "check_grammar_first", "check_grammar_lazily"]


def check_grammar_lazily(llama: Any) -> None:
    """Make ``llama``'s completions check their grammar with :class:`LazyGrammarSampler`.

    The library's ``_init_sampler`` still builds the chain (penalties, temperature,
    top-k/p, seed, greedy or random), only without the grammar. A release of
    llama-cpp-python without that method (or without its ``grammar`` setting) is left
    as it is: its own sampling checks the grammar first, slower and as correct.
    """
    build = getattr(type(llama), "_init_sampler", None)  # the class's own, not a hook
    if build is None or "grammar" not in inspect.signature(build).parameters:
        return  # a llama-cpp-python built otherwise: its own sampling, grammar first

    def init_sampler(self: Any, *, grammar: Any = None, **settings: Any) -> Any:
        chain = build(self, grammar=None, **settings)
        return chain if grammar is None else LazyGrammarSampler(self, chain, grammar)

    llama._init_sampler = types.MethodType(init_sampler, llama)


def check_grammar_first(llama: Any) -> None:
    """Give ``llama`` back llama-cpp-python's own order: the grammar over the whole
    vocabulary before every token (what the lazy check is compared with)."""
    vars(llama).pop("_init_sampler", None)


class LazyGrammarSampler:
    """One completion's sampler: the chain without the grammar, and the grammar asked
    about the chosen token only (see the module docstring).

    It stands where ``Llama.generate`` keeps its sampler, so it answers the one call
    made there: :meth:`sample`.

    Args:
        llama: The loaded ``Llama`` (its vocabulary and model).
        chain: The chain ``Llama._init_sampler`` built without the grammar.
        grammar: The completion's ``LlamaGrammar``.

    Attributes:
        rejections: Tokens the chain chose and the grammar rejected, each followed by
            the full check (the grammar over every candidate) and a second pick.
    """

    def __init__(self, llama: Any, chain: Any, grammar: Any) -> None:
        import numpy as np

        self._lib: Any = import_llama_cpp()
        internals: Any = import_llama_cpp("llama_cpp._internals")
        self._chain = chain
        self._grammar: Any = internals.LlamaSampler()  # a chain of one, freed with it
        self._grammar.add_grammar(llama._model, grammar)
        self._size: int = llama.n_vocab()
        self._candidates = (self._lib.llama_token_data * self._size)()
        self._view: Any = np.ctypeslib.as_array(self._candidates)  # id, logit, p
        self._ids = np.arange(self._size, dtype=np.intc)
        self._np: Any = np
        self._one = (self._lib.llama_token_data * 1)()
        self.rejections = 0

    def sample(self, ctx: Any, idx: int = -1) -> int:
        """The next token from the logits at ``idx``; the grammar and the chain accept it.

        Args:
            ctx: llama-cpp-python's ``LlamaContext``.
            idx: The logits' row (negative: from the end), as ``Llama.sample`` passes it.
        """
        logits = self._lib.llama_get_logits_ith(ctx.ctx, idx)
        token = self._pick(logits, self._chain.sampler)
        if not self._allows(token):
            self.rejections += 1
            token = self._pick(logits, self._grammar.sampler, self._chain.sampler)
        self._lib.llama_sampler_accept(self._grammar.sampler, token)
        self._lib.llama_sampler_accept(self._chain.sampler, token)
        return token

    def _pick(self, logits: Any, *samplers: Any) -> int:
        """The token ``samplers``, applied in order to every candidate, select."""
        view = self._view
        view["id"] = self._ids  # a sampler may have sorted or cut the array last time
        view["logit"] = self._np.ctypeslib.as_array(logits, shape=(self._size,))
        view["p"] = 0.0
        candidates = self._array(self._candidates, self._size)
        for sampler in samplers:
            self._lib.llama_sampler_apply(sampler, ctypes.byref(candidates))
        return int(candidates.data[candidates.selected].id)

    def _allows(self, token: int) -> bool:
        """Whether the grammar accepts ``token`` next (it leaves an allowed logit as is
        and sets a rejected one to minus infinity)."""
        one = self._one
        one[0].id, one[0].logit, one[0].p = token, 1.0, 0.0
        self._lib.llama_sampler_apply(self._grammar.sampler, ctypes.byref(self._array(one, 1)))
        return not math.isinf(one[0].logit)

    def _array(self, data: Any, size: int) -> Any:
        lib = self._lib
        pointer = ctypes.cast(data, lib.llama_token_data_p)
        return lib.llama_token_data_array(data=pointer, size=size, selected=-1, sorted=False)
