"""The neutral history, checked and mapped to and from each provider.

* :mod:`.check` — the one-result-per-call rule, run before every request.
* :mod:`.openai_chat`, :mod:`.openai_responses` (with :mod:`.openai_responses_decode`
  and :mod:`.openai_responses_owed`), :mod:`.anthropic` — pure encoders
  from the neutral model (``toolwire.messages``) to each provider's request shape,
  and decoders back. Each module's docstring holds its mapping table and says what a
  round trip keeps. (A provider's non-streaming response body is decoded into a
  ``Turn`` in ``toolwire.wire``, beside its stream decoder.)
* :mod:`.chat_dialects` — what each OpenAI-compatible server accepts back in a Chat
  request (DeepSeek's reasoning rules), as settings of a ``ChatDialect``.
* :mod:`.tool_defs` — tool definitions and ``tool_choice`` from OpenAI Chat form to the
  other two.

Each name is imported from its module on first use (``toolwire._lazy``): the agent loop
reads only the check and what a turn owes, and a process that uses one provider's codec
does not import the others' (nor, through them, every stream decoder of ``toolwire.wire``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports
from ..messages import TOOL_ERROR_PREFIX

# public name -> module of this package that defines it
_EXPORTS = {
    "ANTHROPIC_STOP_REASONS": "anthropic",
    "from_anthropic": "anthropic",
    "to_anthropic": "anthropic",
    "usage_from_anthropic": "anthropic",
    "CHAT_DIALECTS": "chat_dialects",
    "ChatDialect": "chat_dialects",
    "chat_dialect": "chat_dialects",
    "check_history": "check",
    "missing_results": "check",
    "from_openai_chat": "openai_chat",
    "to_openai_chat": "openai_chat",
    "usage_from_openai_chat": "openai_chat",
    "RESPONSES_INCOMPLETE_REASONS": "openai_responses",
    "to_responses_input": "openai_responses",
    "usage_from_responses": "openai_responses",
    "from_responses_input": "openai_responses_decode",
    "to_anthropic_tool_choice": "tool_defs",
    "to_anthropic_tools": "tool_defs",
    "to_openai_chat_tool_choice": "tool_defs",
    "to_openai_chat_tools": "tool_defs",
    "to_responses_tool_choice": "tool_defs",
    "to_responses_tools": "tool_defs",
}

__getattr__ = lazy_exports(globals(), _EXPORTS)

if TYPE_CHECKING:
    from .anthropic import (
        ANTHROPIC_STOP_REASONS,
        from_anthropic,
        to_anthropic,
        usage_from_anthropic,
    )
    from .chat_dialects import CHAT_DIALECTS, ChatDialect, chat_dialect
    from .check import check_history, missing_results
    from .openai_chat import (
        from_openai_chat,
        to_openai_chat,
        usage_from_openai_chat,
    )
    from .openai_responses import (
        RESPONSES_INCOMPLETE_REASONS,
        to_responses_input,
        usage_from_responses,
    )
    from .openai_responses_decode import from_responses_input
    from .tool_defs import (
        to_anthropic_tool_choice,
        to_anthropic_tools,
        to_openai_chat_tool_choice,
        to_openai_chat_tools,
        to_responses_tool_choice,
        to_responses_tools,
    )

__all__ = [
    "ANTHROPIC_STOP_REASONS",
    "CHAT_DIALECTS",
    "RESPONSES_INCOMPLETE_REASONS",
    "TOOL_ERROR_PREFIX",
    "ChatDialect",
    "chat_dialect",
    "check_history",
    "from_anthropic",
    "from_openai_chat",
    "from_responses_input",
    "missing_results",
    "to_anthropic",
    "to_anthropic_tool_choice",
    "to_anthropic_tools",
    "to_openai_chat",
    "to_openai_chat_tool_choice",
    "to_openai_chat_tools",
    "to_responses_input",
    "to_responses_tool_choice",
    "to_responses_tools",
    "usage_from_anthropic",
    "usage_from_openai_chat",
    "usage_from_responses",
]
