"""The provider-neutral conversation model.

One history shape serves every provider; encoders in ``toolwire.history`` map it to
and from OpenAI Chat, OpenAI Responses and Anthropic Messages. An assistant message
keeps its parts in the order the model produced them (Anthropic and Responses
interleave text, reasoning and tool calls), and a tool call keeps its arguments as
the exact string the model sent, so what goes back to a provider is what it sent.
"""

from __future__ import annotations

import base64
import enum
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard, cast

from .errors import ImageError

__all__ = [
    "TOOL_ERROR_PREFIX",
    "IMAGE_MEDIA_TYPES",
    "AssistantMessage",
    "ContentPart",
    "Image",
    "Message",
    "Part",
    "ProviderPart",
    "ReasoningPart",
    "RefusalPart",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "ToolStatus",
    "Usage",
    "UserMessage",
    "parts_text",
]


@dataclass(slots=True)
class ToolCall:
    """A tool call exactly as the model sent it: the shape kept in history.

    ``arguments`` is the verbatim JSON text (never re-serialised), which keeps the
    history byte-identical for prompt caching and protocol-faithful for the provider.
    ``freeform`` marks a custom tool call (OpenAI's free-form input tools): then
    ``arguments`` is the model's raw input text, not JSON, and the call goes back as a
    ``custom_tool_call`` (Responses) or a ``custom`` tool call (Chat).
    ``caller`` is Anthropic's ``caller`` object of a programmatic call (a ``tool_use``
    made by code the provider ran, e.g. ``{"type": "code_execution_20250825",
    "tool_id": ...}``), kept verbatim and sent back with the call; ``None`` otherwise.
    """

    id: str
    name: str
    arguments: str
    kind: Literal["tool_call"] = "tool_call"
    freeform: bool = False
    caller: dict[str, Any] | None = None


@dataclass(slots=True)
class TextPart:
    """Visible answer text.

    ``citations`` holds the provider's citation objects for this text exactly as sent
    (Anthropic's ``citations`` of a text block), or ``None``; they go back with it.
    """

    text: str
    citations: list[dict[str, Any]] | None = None
    kind: Literal["text"] = "text"


@dataclass(slots=True)
class ReasoningPart:
    """Reasoning ("thinking") text, with whatever the provider needs to accept it back.

    ``signature`` is Anthropic's thinking signature; ``redacted`` holds Anthropic's
    redacted-thinking data or the Responses API's ``encrypted_content``; ``id`` is the
    Responses API's reasoning item id.
    """

    text: str
    signature: str | None = None
    redacted: str | None = None
    id: str | None = None
    kind: Literal["reasoning"] = "reasoning"


@dataclass(slots=True)
class ProviderPart:
    """A provider-side item of an assistant turn, kept verbatim and never executed.

    Server tools run at the provider (Anthropic's ``server_tool_use`` and
    ``mcp_tool_use`` blocks and their ``*_tool_result`` blocks, container and
    compaction blocks; the Responses API's built-in tool items). toolwire does not run
    them; it keeps each block in its place in the turn and sends it back unchanged in
    the next request to the same provider (a ``pause_turn`` continuation requires it).
    ``provider`` says whose wire shape ``data`` is (``"anthropic"`` or
    ``"openai_responses"``); encoders for another provider leave the part out.
    ``type`` is the block's or item's ``type``.
    """

    provider: str
    type: str
    data: dict[str, Any]
    kind: Literal["provider"] = "provider"


@dataclass(slots=True)
class RefusalPart:
    """The model declined to answer: its refusal message, apart from answer text.

    OpenAI sends a refusal in its own field (Chat's ``refusal``, a Responses
    ``refusal`` content part); it is kept here rather than merged into the text, and
    the turn says ``refused``. ``id`` is the Responses API's output message id (needed
    to send the refusal back as a ``refusal`` content part), or ``None``.
    """

    text: str
    id: str | None = None
    kind: Literal["refusal"] = "refusal"


Part = TextPart | ReasoningPart | ToolCall | ProviderPart | RefusalPart

# The first bytes of each image type every provider accepts (Anthropic, OpenAI Chat and
# Responses all take these four): an image whose bytes are not its type is refused here,
# not by the provider with a 400.
_SIGNATURES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),  # then 4 bytes of length, then WEBP (checked below)
}
IMAGE_MEDIA_TYPES = frozenset(_SIGNATURES)
"""The image types a tool may return (those all three hosted APIs accept)."""


@dataclass(frozen=True, slots=True)
class Image:
    """An image a tool returns (or a user sends): its bytes and media type.

    Return one from a tool, or a list mixing text and images, and the model sees the
    image in its tool result, in the shape its provider documents (see docs/tools.md, "Images
    in tool results").

    Args:
        data: The image file's bytes (PNG, JPEG, GIF or WebP).
        media_type: ``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp``.

    Raises:
        ImageError: ``data`` is empty, the type is not one of those, or the bytes are
            not an image of that type.
    """

    data: bytes
    media_type: str = "image/png"
    kind: Literal["image"] = "image"

    def __post_init__(self) -> None:
        if not isinstance(self.data, bytes):
            if not isinstance(self.data, (bytearray, memoryview)):
                raise ImageError(f"Image data must be bytes, not {type(self.data).__name__}")
            object.__setattr__(self, "data", bytes(self.data))
        signatures = _SIGNATURES.get(self.media_type)
        if signatures is None:
            raise ImageError(
                f"image media type {self.media_type!r} is not one of "
                f"{', '.join(sorted(IMAGE_MEDIA_TYPES))}"
            )
        if not self.data.startswith(signatures) or (
            self.media_type == "image/webp" and self.data[8:12] != b"WEBP"
        ):
            raise ImageError(f"the {len(self.data)} bytes given are not {self.media_type} data")

    def __repr__(self) -> str:  # the bytes would flood a log line or a test failure
        return f"Image({self.media_type}, {len(self.data)} bytes, sha256 {self.sha256[:12]})"

    @property
    def sha256(self) -> str:
        """The hex SHA-256 of the bytes: the image's key in the audit log."""
        return hashlib.sha256(self.data).hexdigest()

    def base64(self) -> str:
        """The bytes as base64 text (what every provider's JSON carries)."""
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        """The image as a ``data:`` URL (OpenAI's ``image_url``, the trace page)."""
        return f"data:{self.media_type};base64,{self.base64()}"


ContentPart = TextPart | Image
"""A part of a tool result or user message that holds images: text or an image."""


def parts_text(parts: Iterable[ContentPart]) -> str:
    """The text parts of ``parts``, concatenated (a parts message's ``content``)."""
    return "".join(p.text for p in parts if isinstance(p, TextPart))


class ToolStatus(str, enum.Enum):
    """How a tool call ended. Every call in a history has exactly one result."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    DENIED = "denied"
    NOT_EXECUTED = "not_executed"
    INTERRUPTED = "interrupted"
    """The process stopped while the call ran: whether it took effect is unknown."""

    @property
    def is_error(self) -> bool:
        """True for every status but ``ok``: providers mark these results as errors."""
        return self is not ToolStatus.OK


TOOL_ERROR_PREFIX = "Tool error: "
"""How a failed tool result's text starts: everything toolwire writes as an error result.

OpenAI Chat and Responses have no error flag on a tool result, so the text is the only
place a failure can show; their history decoders read a result starting with this prefix
as ``ToolStatus.ERROR`` and any other as ``ToolStatus.OK``. Defined here, in the core,
so every package that writes or reads such a result uses the same text.
"""


@dataclass(slots=True)
class Usage:
    """Token counts reported by the provider (zero when it reported none)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(slots=True)
class SystemMessage:
    """Instructions for the model."""

    content: str
    role: Literal["system"] = "system"


@dataclass(slots=True)
class UserMessage:
    """A user turn.

    ``parts`` holds text and images in order when the message has an image (build it
    with :meth:`from_parts`); ``content`` is then its text parts joined. Empty for a
    text-only message.
    """

    content: str
    role: Literal["user"] = "user"
    parts: tuple[ContentPart, ...] = ()

    @classmethod
    def from_parts(cls, parts: Iterable[ContentPart | str]) -> UserMessage:
        """A user message of text (``str`` or :class:`TextPart`) and :class:`Image` parts."""
        held = _content_parts(parts)
        return cls(parts_text(held), parts=_image_parts(held))

    @property
    def images(self) -> list[Image]:
        """The message's images, in order."""
        return [p for p in self.parts if isinstance(p, Image)]


@dataclass(slots=True)
class AssistantMessage:
    """One model turn: text, reasoning and tool calls, in the order produced."""

    parts: list[Part] = field(default_factory=list)
    role: Literal["assistant"] = "assistant"

    @property
    def text(self) -> str:
        """All answer text, concatenated."""
        return "".join([p.text for p in filter(_IS_TEXT, self.parts)])

    @property
    def reasoning(self) -> str:
        """All reasoning text, concatenated."""
        return "".join([p.text for p in filter(_IS_REASONING, self.parts)])

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls, in the order the model emitted them."""
        return list(filter(IS_CALL, self.parts))

    @property
    def refusal(self) -> str:
        """All refusal text, concatenated (empty when the model did not refuse in words)."""
        return "".join([p.text for p in filter(_IS_REFUSAL, self.parts)])


# C predicates for filter(): the run reads a message's calls and text a few times a round,
# and its reasoning and refusal once (the Chat encoder), and an isinstance test per part
# in a comprehension was most of each read. The three without an underscore are the
# package's, for its passes over a whole history (not exported).
_IS_TEXT = cast("Callable[[object], TypeGuard[TextPart]]", TextPart.__instancecheck__)
IS_CALL = cast("Callable[[object], TypeGuard[ToolCall]]", ToolCall.__instancecheck__)
IS_ASSISTANT = cast(
    "Callable[[object], TypeGuard[AssistantMessage]]", AssistantMessage.__instancecheck__
)
IS_PROVIDER_PART = cast(
    "Callable[[object], TypeGuard[ProviderPart]]", ProviderPart.__instancecheck__
)
_IS_REASONING = cast(
    "Callable[[object], TypeGuard[ReasoningPart]]", ReasoningPart.__instancecheck__
)
_IS_REFUSAL = cast("Callable[[object], TypeGuard[RefusalPart]]", RefusalPart.__instancecheck__)


@dataclass(slots=True)
class ToolResult:
    """The one answer to one tool call.

    ``content`` is the text the model will read; ``status`` says how the call ended
    (anything but ``ok`` is sent to the provider as an error result). ``parts`` holds
    text and images in order when the tool returned an image (build it with
    :meth:`from_parts`); ``content`` is then its text parts joined, which is what
    every reader that wants text (diagnostics, loop detection, spans) reads. Empty for
    a text-only result, the common case.
    """

    call_id: str
    name: str
    content: str
    status: ToolStatus = ToolStatus.OK
    role: Literal["tool"] = "tool"
    parts: tuple[ContentPart, ...] = ()

    @classmethod
    def from_parts(
        cls,
        call_id: str,
        name: str,
        parts: Iterable[ContentPart | str],
        status: ToolStatus = ToolStatus.OK,
    ) -> ToolResult:
        """A result of text (``str`` or :class:`TextPart`) and :class:`Image` parts."""
        held = _content_parts(parts)
        return cls(call_id, name, parts_text(held), status, parts=_image_parts(held))

    @property
    def images(self) -> list[Image]:
        """The result's images, in order."""
        return [p for p in self.parts if isinstance(p, Image)]


def _content_parts(parts: Iterable[ContentPart | str]) -> tuple[ContentPart, ...]:
    """Text and image parts, a ``str`` becoming a :class:`TextPart`.

    Raises:
        ImageError: A part is neither text nor an image.
    """
    held: list[ContentPart] = []
    for part in parts:
        if isinstance(part, str):
            held.append(TextPart(part))
        elif isinstance(part, (TextPart, Image)):
            held.append(part)
        else:
            raise ImageError(
                f"a part of a result with images is a {type(part).__name__}; "
                "only text (str) and toolwire.Image parts are allowed"
            )
    return tuple(held)


def _image_parts(parts: tuple[ContentPart, ...]) -> tuple[ContentPart, ...]:
    """``parts`` if one is an image, else none: a text-only message stays plain text, so
    "parts is empty or holds an image" is true of every message."""
    return parts if any(isinstance(p, Image) for p in parts) else ()


Message = SystemMessage | UserMessage | AssistantMessage | ToolResult
