"""Tool routing: offer a model only the tools relevant to the conversation.

:class:`ToolRouter` ranks tools with Okapi BM25 over each tool's name (split on ``_``,
``-``, ``.`` and camelCase), description, and parameter names and descriptions. The
index is built once per tool set: every term's BM25 weight per tool is precomputed, so
ranking a query costs one dict lookup per distinct query term plus one addition per
posting — well under a millisecond for 1,000 tools (``bench/bench_context.py``).

Terms are lowercased, stop words dropped, and reduced by a light suffix stemmer
(``files``/``filing`` → ``file``), so that the way a user phrases a request meets the
way a tool describes itself.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..checks import check_int
from ..errors import CallerError

__all__ = ["METHODS", "ToolRouter", "terms"]

METHODS = ("bm25", "embeddings", "hybrid")

_K1 = 1.2
_B = 0.75
_RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al., 2009)
_NAME_WEIGHT = 3  # a term in the tool's name counts as three occurrences
_RANKINGS_KEPT = 16  # rankings a router remembers (ToolRouter.rank)

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[0-9]+|[^\W\d_A-Za-z]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "could",
        "do",
        "does",
        "for",
        "from",
        "get",
        "given",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "should",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "to",
        "use",
        "used",
        "using",
        "want",
        "was",
        "we",
        "what",
        "when",
        "which",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "s")


def _stem(word: str) -> str:
    """A light suffix stemmer: enough to match plurals and verb forms."""
    if len(word) <= 4:
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                return stem + "y"
            if suffix == "es" and not stem.endswith(("s", "x", "z", "ch", "sh")):
                return stem + "e"
            return stem
    return word


def terms(text: str) -> list[str]:
    """The index terms of ``text``: words (camelCase split), lowercased and stemmed."""
    out = []
    for match in _WORD.findall(text):
        word = match.lower()
        if word not in _STOP:
            out.append(_stem(word))
    return out


class ToolRouter:
    """Ranks tools by relevance to a query.

    Args:
        tools: ``Tool`` objects or OpenAI-format definitions
            (``{"type": "function", "function": {"name", "description", "parameters"}}``).
            Only names, descriptions and parameter names/descriptions are read, so a
            schema need not be valid JSON Schema.
        method: ``"bm25"``; ``"embeddings"`` (cosine similarity of all-MiniLM-L6-v2
            sentence vectors) and ``"hybrid"`` (reciprocal-rank fusion of both) need the
            ``toolwire[embeddings]`` extra.

    Raises:
        CallerError: An unknown method, a method whose extra is missing, a tool without
            a name, or two tools with one name.
    """

    def __init__(self, tools: Iterable[Any], *, method: str = "bm25") -> None:
        if method not in METHODS:
            raise CallerError(
                f"ToolRouter method={method!r} is unknown",
                hint=f"use one of {', '.join(map(repr, METHODS))}",
            )
        self.method = method
        self.names: list[str] = []
        documents: list[list[str]] = []
        texts: list[str] = []
        for entry in tools:
            name, document, text = _document(entry)
            if name in self.names:
                raise CallerError(f"two tools are named {name!r}")
            self.names.append(name)
            documents.append(document)
            texts.append(text)
        self._postings = _index(documents)
        self._order = {name: i for i, name in enumerate(self.names)}  # ties: registration
        # The latest rankings asked for: a router is shared by every run over its tool
        # set, and a run's queries (its first user message, the model's latest words)
        # repeat request after request and run after run; ranking one again gives the
        # same list. A few are kept (then forgotten together: one atomic clear, as
        # runs in several threads may share a router).
        self._ranked: dict[tuple[str, int], list[tuple[str, float]]] = {}
        self._encoder: Any = None
        self._vectors: Any = None
        if method != "bm25":
            self._encoder = _encoder()
            self._vectors = self._encoder.encode(texts)

    def __len__(self) -> int:
        return len(self.names)

    def scores(self, query: str) -> dict[str, float]:
        """The BM25 score of every tool that shares a term with ``query``."""
        if not isinstance(query, str):
            raise CallerError(f"the query must be a str, not {type(query).__name__}")
        totals: dict[int, float] = {}
        postings = self._postings
        for term in set(terms(query)):
            for doc, weight in postings.get(term, ()):
                totals[doc] = totals.get(doc, 0.0) + weight
        names = self.names
        return {names[doc]: score for doc, score in totals.items()}

    def similarities(self, query: str) -> dict[str, float]:
        """Cosine similarity of ``query`` to every tool (``embeddings``/``hybrid`` only)."""
        if self._encoder is None:
            raise CallerError("similarities() needs method='embeddings' or 'hybrid'")
        vector = self._encoder.encode([query])[0]
        values = self._vectors @ vector
        return {name: float(v) for name, v in zip(self.names, values, strict=True)}

    def _hybrid(self, query: str) -> dict[str, float]:
        """Reciprocal-rank fusion of the BM25 and the embedding rankings."""
        fused: dict[str, float] = {}
        for ranking in (self.scores(query), self.similarities(query)):
            ordered = sorted(ranking, key=lambda n: -ranking[n])
            for position, name in enumerate(ordered):
                fused[name] = fused.get(name, 0.0) + 1.0 / (_RRF_K + position + 1)
        return fused

    def rank(self, query: str, k: int = 15) -> list[tuple[str, float]]:
        """The ``k`` best tools with their scores, best first.

        Tools with no matching term fill the list (score 0, in registration order), so
        the list is ``k`` long unless there are fewer tools.

        Raises:
            CallerError: ``k`` is not a positive int, or ``query`` is not a str.
        """
        check_int("k", k, minimum=1)
        if not isinstance(query, str):
            raise CallerError(f"the query must be a str, not {type(query).__name__}")
        known = self._ranked.get((query, k))
        if known is not None:
            return list(known)  # a copy: the caller may change its list
        ranked = self._rank(query, k)
        if len(self._ranked) >= _RANKINGS_KEPT:
            self._ranked.clear()
        self._ranked[(query, k)] = ranked
        return list(ranked)

    def _rank(self, query: str, k: int) -> list[tuple[str, float]]:
        if self.method == "embeddings":
            scored = self.similarities(query)
        elif self.method == "hybrid":
            scored = self._hybrid(query)
        else:
            scored = self.scores(query)
        order = self._order
        best = heapq.nsmallest(k, scored.items(), key=lambda item: (-item[1], order[item[0]]))
        ranked = [(name, round(score, 4)) for name, score in best]
        if len(ranked) < k:
            ranked += [(n, 0.0) for n in self.names if n not in scored][: k - len(ranked)]
        return ranked

    def select(self, query: str, k: int = 15) -> list[str]:
        """Tool names, best first: at most ``k``, fewer only when there are fewer tools.

        Raises:
            CallerError: ``k`` is not a positive int, or ``query`` is not a str.
        """
        return [name for name, _ in self.rank(query, k)]


def _document(entry: Any) -> tuple[str, list[str], str]:
    """A tool's name, its document's terms (name terms three times), and its text."""
    if isinstance(entry, Mapping):
        # A free-form tool's definition keeps its fields under "custom".
        function = entry.get("function") or entry.get("custom") or entry
        if not isinstance(function, Mapping):
            raise CallerError(f"a tool definition's 'function' must be an object: {entry!r}")
        name = function.get("name")
        description = function.get("description") or ""
        parameters = function.get("parameters") or {}
    else:
        name = getattr(entry, "name", None)
        description = getattr(entry, "description", "") or ""
        parameters = getattr(entry, "parameters", {}) or {}
    if not isinstance(name, str) or not name:
        raise CallerError(
            f"{entry!r} has no name",
            hint='pass Tool objects or {"type": "function", "function": {"name": ...}} dicts',
        )
    document = terms(name) * _NAME_WEIGHT + terms(str(description))
    words = [" ".join(w.lower() for w in _WORD.findall(name)), str(description)]
    for pname, pdesc in _parameters(parameters):
        document += terms(pname) + terms(pdesc)
        words.append(f"{pname}: {pdesc}")
    return name, document, ". ".join(words)


def _encoder() -> Any:
    """The sentence-embedding model (a lazy import: the extra is optional, and numpy
    loads only for a router that embeds)."""
    from .embeddings import default_encoder

    return default_encoder()


def _parameters(schema: Any) -> list[tuple[str, str]]:
    """(name, description) of each top-level parameter; whatever the schema dialect."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return []
    out = []
    for pname, spec in properties.items():
        desc = spec.get("description", "") if isinstance(spec, Mapping) else ""
        out.append((str(pname), str(desc or "")))
    return out


def _index(documents: Sequence[list[str]]) -> dict[str, list[tuple[int, float]]]:
    """Term -> [(document, BM25 weight)], every weight computed once."""
    count = len(documents)
    if not count:
        return {}
    average = sum(len(d) for d in documents) / count or 1.0
    frequencies = [Counter(d) for d in documents]
    containing: Counter[str] = Counter()
    for freq in frequencies:
        containing.update(freq.keys())
    postings: dict[str, list[tuple[int, float]]] = {}
    for doc, freq in enumerate(frequencies):
        norm = _K1 * (1 - _B + _B * len(documents[doc]) / average)
        for term, tf in freq.items():
            n = containing[term]
            idf = math.log(1 + (count - n + 0.5) / (n + 0.5))
            postings.setdefault(term, []).append((doc, idf * tf * (_K1 + 1) / (tf + norm)))
    return postings
