"""The neutral history, checked and mapped to and from each provider.

* :mod:`.check` — the one-result-per-call rule, run before every request.
* :mod:`.openai_chat`, :mod:`.openai_responses`, :mod:`.anthropic` — pure encoders
  from the neutral model (``toolwire.messages``) to each provider's request shape,
  decoders back, and decoders of each provider's non-streaming response into a
  ``Turn`` (through the same assembler as the streams). Each module's docstring holds
  its mapping table and says what a round trip keeps.
* :mod:`.chat_dialects` — what each OpenAI-compatible server accepts back in a Chat
  request (DeepSeek's reasoning rules), as settings of a ``ChatDialect``.
* :mod:`.tools` — tool definitions and ``tool_choice`` from OpenAI Chat form to the
  other two.
"""

from __future__ import annotations

from ._common import TOOL_ERROR_PREFIX
from .anthropic import (
    ANTHROPIC_STOP_REASONS,
    INVALID_ARGUMENTS_KEY,
    decode_anthropic_response,
    from_anthropic,
    to_anthropic,
    usage_from_anthropic,
)
from .chat_dialects import CHAT_DIALECTS, ChatDialect, chat_dialect
from .check import check_history, missing_results
from .openai_chat import (
    decode_openai_chat_response,
    from_openai_chat,
    to_openai_chat,
    usage_from_openai_chat,
)
from .openai_responses import (
    RESPONSES_INCOMPLETE_REASONS,
    decode_responses_response,
    from_responses_input,
    responses_finish_reason,
    to_responses_input,
    usage_from_responses,
)
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
    "INVALID_ARGUMENTS_KEY",
    "RESPONSES_INCOMPLETE_REASONS",
    "TOOL_ERROR_PREFIX",
    "ChatDialect",
    "chat_dialect",
    "check_history",
    "decode_anthropic_response",
    "decode_openai_chat_response",
    "decode_responses_response",
    "from_anthropic",
    "from_openai_chat",
    "from_responses_input",
    "missing_results",
    "responses_finish_reason",
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
