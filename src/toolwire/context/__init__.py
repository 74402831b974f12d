"""Context-window economics: keep a run inside its budget, and measure it.

Pure and synchronous (no I/O); the agent loop calls it.

* :mod:`.tokens` — ``count_tokens`` and per-request accounting by part.
* :mod:`.routing` — ``ToolRouter``: BM25 over tool names, descriptions and parameters.
* :mod:`.truncate` — head-and-tail truncation of tool results; full text by call id.
* :mod:`.images` — what images each model takes (``ImageLimits``); an image's token estimate.
* :mod:`.compress` — a sliding window over whole rounds, optionally with a summary.
* :mod:`.cache` — a stable prefix and Anthropic ``cache_control`` breakpoints.
* :mod:`.policy` — ``ContextPolicy``, the budgets.
* :mod:`.session` — ``RunContext``, one run's state.
* :mod:`.events` — the run events these policies emit.
"""

from __future__ import annotations

from .cache import anthropic_breakpoints
from .compress import SUMMARY_MARK, Compressor
from .events import CacheInvalidated, HistoryCompressed, TokensCounted, ToolsRouted
from .images import IMAGE_TOKENS, ImageLimits
from .policy import ContextPolicy
from .routing import ToolRouter
from .session import RequestRecord, RunContext, routing_query
from .tokens import RequestTokens, account, count_tokens, estimate_text_tokens
from .truncate import READ_RESULT, ResultStore, read_result_tool, truncate_middle

__all__ = [
    "IMAGE_TOKENS",
    "READ_RESULT",
    "SUMMARY_MARK",
    "CacheInvalidated",
    "Compressor",
    "ContextPolicy",
    "HistoryCompressed",
    "ImageLimits",
    "RequestRecord",
    "RequestTokens",
    "ResultStore",
    "RunContext",
    "TokensCounted",
    "ToolRouter",
    "ToolsRouted",
    "account",
    "anthropic_breakpoints",
    "count_tokens",
    "estimate_text_tokens",
    "read_result_tool",
    "routing_query",
    "truncate_middle",
]
