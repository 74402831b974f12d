"""CPU per generated token of the embedded model: the grammar first vs the lazy check.

    PYTHONPATH=src python bench/bench_local.py [--model smollm2] [--choice required]
        [--max-tokens 120] [--repeats 2]

One request (the code-search demo case, the demo tools offered), generated greedily with
llama-cpp-python's grammar-first sampler and with toolwire's lazy check
(:mod:`toolwire.providers.local_sampling`), alternately, after the prompt is in the
cache: CPU seconds (``time.process_time``) over the chunks, so the figure is the
generated tokens' cost alone. Both must give the same text; the script says if not.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from toolwire.demo.tools import DEMO_TOOLS
from toolwire.demo.verdict import DEMO_CASES
from toolwire.messages import UserMessage
from toolwire.providers.local import LocalModel, _generate, _load
from toolwire.providers.local_sampling import check_grammar_first, check_grammar_lazily
from toolwire.run.model import ModelRequest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="local model spec (default: the default)")
    parser.add_argument("--choice", default="required", help="tool_choice (auto, required, ...)")
    parser.add_argument("--max-tokens", type=int, default=120)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    model = LocalModel(args.model)
    llama, lock = _load(model.source, model.n_ctx, model.n_threads)
    tools = [tool.definition() for tool in DEMO_TOOLS]
    request = ModelRequest(
        [UserMessage(DEMO_CASES[0].prompt)], tools=tools, tool_choice=args.choice
    )
    prompt, grammar = model.prompt(request), model.grammar(request)
    settings = {"max_tokens": args.max_tokens, "temperature": 0.0}
    list(_generate(llama, lock, prompt, None, {**settings, "max_tokens": 2}))  # the prompt cached
    texts: dict[bool, set[str]] = {False: set(), True: set()}
    for _ in range(args.repeats):
        for lazy in (False, True):
            (check_grammar_lazily if lazy else check_grammar_first)(llama)
            start = time.process_time()
            chunks = list(_generate(llama, lock, prompt, grammar, settings))
            seconds = time.process_time() - start
            texts[lazy].add(_text(chunks))
            name = "lazy check   " if lazy else "grammar first"
            per = 1000 * seconds / len(chunks)
            print(f"{name} {len(chunks):4d} chunks {seconds:6.2f} s CPU {per:6.1f} ms a chunk")
    check_grammar_lazily(llama)
    same = texts[False] == texts[True] and len(texts[True]) == 1
    print("same text:", same, repr(next(iter(texts[True]))[:100]))


def _text(chunks: list[dict[str, Any]]) -> str:
    return "".join(chunk["choices"][0]["text"] for chunk in chunks)


if __name__ == "__main__":
    main()
