"""Every error toolwire raises, split by whose fault it is.

The split follows h11's LocalProtocolError / RemoteProtocolError: the class tells the
reader who must act. ``fault`` is one of ``"caller"`` (you used the API wrongly),
``"provider"`` (the server broke its protocol or returned an error), ``"model"`` (the model
produced output that cannot be used) or ``"tool"`` (a tool failed). ``hint`` says what to
do about it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

Fault = Literal["caller", "provider", "model", "tool"]

__all__ = [
    "AuditLogError",
    "BackendError",
    "CallerError",
    "DecoderStateError",
    "Fault",
    "HistoryError",
    "MCPServerError",
    "MCPToolError",
    "ModelOutputError",
    "ProtocolError",
    "ProviderAPIError",
    "ProviderError",
    "ProviderStreamError",
    "RepairError",
    "RunNotFoundError",
    "ToolExecutionError",
    "ToolwireError",
    "TurnError",
]


class ToolwireError(Exception):
    """Base class of every error toolwire raises."""

    fault: ClassVar[Fault] = "caller"
    default_hint: ClassVar[str] = ""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint if hint is not None else self.default_hint
        super().__init__(message)

    def __str__(self) -> str:
        hint = f": {self.hint}" if self.hint else ""
        return f"{self._located()} ({self.fault} fault{hint})"

    def _located(self) -> str:
        return self.message


class CallerError(ToolwireError):
    """The caller misused the API: wrong argument type, wrong order of calls."""

    fault: ClassVar[Fault] = "caller"


class DecoderStateError(CallerError):
    """A decoder was used after it was closed."""

    default_hint = "create a new decoder for each model turn"


class HistoryError(CallerError):
    """A conversation history breaks the one-result-per-call rule or the message model."""

    default_hint = (
        "give every tool call exactly one tool result, placed after its assistant message"
    )

    def __init__(
        self, message: str, *, call_id: str | None = None, hint: str | None = None
    ) -> None:
        self.call_id = call_id
        super().__init__(message, hint=hint)


class ProviderError(ToolwireError):
    """The provider (server, SDK or stream) did something its protocol does not allow."""

    fault: ClassVar[Fault] = "provider"


class ProtocolError(ProviderError):
    """A stream or response broke the provider's wire protocol.

    ``where`` locates the problem (event number, byte offset, field path). ``partial``
    holds what was assembled before the failure (a ``Turn``) when there was any, so a
    cut stream loses nothing.
    """

    default_hint = (
        "the provider sent data toolwire cannot interpret; report it with the recorded stream"
    )

    def __init__(
        self, message: str, *, where: str = "", hint: str | None = None, partial: Any = None
    ) -> None:
        self.where = where
        self.partial = partial
        super().__init__(message, hint=hint)

    def _located(self) -> str:
        return f"{self.message} at {self.where}" if self.where else self.message


class TurnError(ProtocolError):
    """The assembled turn is unusable: a tool call lacks an id or a name, or ids repeat.

    ``index`` is the provider's index of the offending call; ``problem`` is one of
    ``"missing_id"``, ``"missing_name"``, ``"duplicate_id"``, ``"missing_index"``.
    """

    default_hint = (
        "retry the request; if it repeats, the provider or its tool-call parser is at fault"
    )

    def __init__(self, message: str, *, index: int | None, problem: str) -> None:
        self.index = index
        self.problem = problem
        super().__init__(message, where=f"tool call index {index}" if index is not None else "")


class ProviderAPIError(ProviderError):
    """The provider reported an error (an ``error`` event or an HTTP error status)."""

    def __init__(
        self,
        message: str,
        *,
        error_type: str | None = None,
        status: int | None = None,
        body: Any = None,
        hint: str | None = None,
    ) -> None:
        self.error_type = error_type
        self.status = status
        self.body = body
        super().__init__(message, hint=hint)


class ModelOutputError(ToolwireError):
    """The model produced output that cannot be used as it is."""

    fault: ClassVar[Fault] = "model"
    default_hint = "send the reason back to the model and let it try again"


class RepairError(ModelOutputError):
    """Malformed JSON from which nothing sensible could be recovered."""


class ToolExecutionError(ToolwireError):
    """A tool raised, timed out, or returned something that cannot be sent back."""

    fault: ClassVar[Fault] = "tool"


class SandboxUnavailableError(CallerError):
    """The sandbox cannot isolate here: bubblewrap or a kernel feature it needs is missing.

    Attributes:
        missing: What is missing, in words.
    """

    default_hint = (
        "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; or "
        "in a toolwire checkout pip install '.[sandbox]'), or pass allow_unisolated=True to run with "
        "resource limits only"
    )

    def __init__(self, missing: str, *, hint: str | None = None) -> None:
        self.missing = missing
        super().__init__(f"the sandbox cannot isolate commands here: {missing}", hint=hint)


class PathNotAllowedError(ModelOutputError):
    """A file tool was asked for a path outside its allowed roots (after resolving links).

    The message names the path as the model gave it, never the resolved host path.
    """

    default_hint = "use a path inside the tool's directory (relative paths are resolved there)"


class AuditLogError(CallerError):
    """The audit log's SQLite file cannot be used: locked, read-only, from a newer
    toolwire, or not a database.

    A run does not fail because of it unless the log is strict
    (``AuditLog(path, strict=True)``); otherwise it is reported as a warning.

    Attributes:
        path: The database file.
    """

    default_hint = (
        "check the file's permissions and that no other process holds a write lock, "
        "or point the log elsewhere (--log PATH, TOOLWIRE_LOG, or --no-log)"
    )

    def __init__(self, path: str, problem: str, *, hint: str | None = None) -> None:
        self.path = path
        super().__init__(f"audit log {path}: {problem}", hint=hint)


class RunNotFoundError(CallerError):
    """No logged run matches the given id (or the prefix matches more than one).

    Attributes:
        ref: The id, prefix or ``last`` that was asked for.
        latest: The ids of the latest runs in the log, newest first.
    """

    def __init__(self, path: str, ref: str, problem: str, latest: list[str]) -> None:
        self.ref = ref
        self.latest = latest
        shown = ", ".join(latest) if latest else "the log has no runs"
        super().__init__(
            f"audit log {path}: {problem}; latest runs: {shown}",
            hint="give a full run id, an unambiguous prefix, or 'last'",
        )


class MCPServerError(ToolExecutionError):
    """An MCP server failed: it would not start, broke the protocol, or crashed.

    ``server`` names it (the command line or the URL). Raised when the server is opened
    (before the run's first request), and as the error of a call it could not answer.
    """

    default_hint = "check the server command or URL, and the server's own log (stderr)"

    def __init__(self, message: str, *, server: str, hint: str | None = None) -> None:
        self.server = server
        super().__init__(message, hint=hint)


class MCPToolError(ToolExecutionError):
    """An MCP tool answered with ``isError``: its text becomes the call's error result."""

    default_hint = ""  # the message is the tool's own report


class BackendError(CallerError):
    """An execution backend cannot be used: no cluster to reach, or a tool it cannot ship."""

    default_hint = "connect Ray first (ray.init(address=...)) or set RAY_ADDRESS"


class ProviderStreamError(ProviderAPIError):
    """The provider reported an error in the middle of a streamed turn.

    ``partial`` is the ``Turn`` assembled from what arrived before the error (``None``
    if it cannot be built), so a caller can see or log how far the model got. The turn
    is not finished: retry the request rather than using it.
    """

    default_hint = "the provider failed mid-turn; retry the request (the partial turn is attached)"

    def __init__(
        self,
        message: str,
        *,
        error_type: str | None = None,
        body: Any = None,
        partial: Any = None,
    ) -> None:
        self.partial = partial
        super().__init__(message, error_type=error_type, body=body)
