"""The agent loop: request a turn, execute its calls, repeat until a final answer.

The loop is request → execute → decide → (exit | next round); the *decide* step is
:func:`toolwire.run.step.decide`, which says in one place what every kind of turn
means (a final answer, a pause, a cut at the token limit, owed provider items, feedback
for a broken call or a missing structured output, the next round).

One round: build a :class:`~toolwire.run.model.ModelRequest` (which checks the history:
one result per call, :func:`toolwire.history.check_history`), send it, stream the turn while a
:class:`~toolwire.run.execute.TurnRun` starts safe calls early, bind the final turn,
run the rest, and append the assistant message and exactly one result per call to the
history — in a ``finally``, so that cancellation, ``KeyboardInterrupt`` or an error
still leaves a history every provider accepts.

Stopping rules, checked after the round's results are in the history:

* invalid calls are never executed; their error result (with the tool's schema) goes
  back to the model, and a :class:`~toolwire.policies.FailureBudget` stops the run when a
  failure class or a tool's breaker is spent (``BudgetExceededError``);
* loop detection (:mod:`toolwire.policies.loops`): warn the model, then ``LoopDetectedError``;
* usage limits (:mod:`toolwire.policies.limits`): ``UsageLimitExceededError``;
* ``max_rounds``: after that many rounds with tool calls, one more request with
  ``tool_choice="none"`` asks for the final answer (``on_max_rounds="final_answer"``,
  the default), or the run raises ``MaxRoundsExceededError`` (``on_max_rounds="raise"``).

With an ``output_type`` the output is structured (:mod:`toolwire.output`): the run's
``OutputRun`` says what each request carries and whether a turn ends the run (a valid
``final_result`` call) or gets feedback; the forced request then names ``final_result``.

The errors the loop raises itself carry ``.messages``, the history at the stop;
``Agent.run_stream`` exposes the live history as ``stream.messages`` whatever happens.

A run given a ``history`` resumes it: calls left unanswered by an interruption get a
``not_executed`` result first (:func:`toolwire.run.resume.answer_missing`).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from types import TracebackType
from typing import Any, Literal

from ..checks import check_int
from ..context import ContextPolicy, RunContext, read_result_tool
from ..context.truncate import CURRENT_STORE, is_read_result
from ..errors import (
    BudgetExceededError,
    CallerError,
    LoopDetectedError,
    MaxRoundsExceededError,
    ProtocolError,
    ProviderAPIError,
    UsageLimitExceededError,
)
from ..messages import (
    IS_PROVIDER_PART,
    Message,
    SystemMessage,
    ToolResult,
    ToolStatus,
    Usage,
    UserMessage,
)
from ..output import FINAL_RESULT, Output, OutputMode, OutputRun, Step
from ..policies.budgets import FailureBudget, RetryPolicy
from ..policies.call_shaped import call_shape
from ..policies.diagnostics import RunDiagnostics
from ..policies.limits import UsageLimits
from ..policies.loops import LoopDetector, LoopPolicy
from ..tooldef import ToolChoice
from ..tools import outcomes
from ..tools.outcomes import RunOutcome
from ..tools.tool import Tool, Toolset
from ..tools.validate import Validation
from ..turn import Notice, Turn
from ..wire.events import ToolCallReady, ToolCallRetracted, ToolCallStarted
from ._scope import TaskScope
from ._upward import upward
from .answers import answer_owed, owed_handlers
from .calls import CallRecord, Discarded
from .events import (
    CallDiscarded,
    LoopWarning,
    RequestFailed,
    RequestStarted,
    ResponseDone,
    RoundEnd,
    RunEvent,
    RunFinished,
    ToolCallRunning,
    ToolResultReady,
)
from .execute import OFF_LOOP_ARGUMENTS, ExecutionOptions, Executor, TurnRun
from .gate import Approver, CallGate, PermissionPolicy
from .model import Model, ModelRequest, TurnDone
from .observers import Observation, RunHook, new_run_id, resolve_hooks
from .options import ObserveOptions, OnMaxRounds, RequestOptions, SafetyOptions, StopOptions
from .pause import DecidedGate, PendingCall, hold_every_call, pending_calls
from .progress import ToolScope
from .refused_images import answer_refused_images
from .resume import answer_missing
from .resuming import Resumption, answer_last_turn, call_journal, prepare_resume, store_of
from .runner import ResultShaper
from .sources import RunTools, ToolSource, prepare_tools, run_tools, split_tools
from .step import ENDING, Decision, Next, decide, has_calls

__all__ = [
    "Agent",
    "AgentStream",
    "RunResult",
    "resolve_model",
]

Emit = Callable[[RunEvent], None]

_FREE_CHOICES = ("auto", "none")  # the tool_choice values that do not ask for a call
_FORCED_REASON = "tool calls are not allowed in the final answer (max_rounds was reached)"
_EMPTY_TURN_FEEDBACK = (
    "Your last reply ended with finish reason tool_calls but contained no tool call. "
    "If you meant to call a tool, call it now; otherwise give your final answer."
)


def resolve_model(spec: Model | str) -> Model:
    """Turn the ``model=`` argument into a :class:`~toolwire.run.model.Model`.

    A string is a model spec (``"local"``, ``"openai:gpt-4.1-mini"``,
    ``"anthropic:claude-sonnet-4-5"``, ...) resolved by the providers, through the
    composition root (:mod:`toolwire.resolve`), so ``toolwire.run`` itself never loads
    a provider.

    Raises:
        CallerError: ``spec`` is an unknown spec, or not a model.
    """
    if isinstance(spec, str):
        resolved: Model = upward().model(spec)
        return resolved
    if not isinstance(spec, Model):
        raise CallerError(
            f"model={spec!r} is not a model",
            hint="pass a model spec such as 'openai:gpt-4.1-mini', or an object with a name and a stream(request) method",
        )
    return spec


@dataclass
class RunResult:
    """What a finished run produced.

    Attributes:
        output: The final answer text; with ``Agent(output_type=T)``, the ``T`` the
            model gave (``None`` when the run ended without one: a refusal, or a turn
            cut at the token limit).
        messages: The whole neutral history, final answer included.
        usage: Tokens, summed over every request.
        requests: Model requests made.
        tool_calls: Calls handed to their tool (invalid calls are not counted).
        rounds: Rounds in which the model called tools.
        diagnostics: Failed, repaired and valid calls, by class.
        forced_final: Whether the answer came from the request forced at ``max_rounds``.
        discarded: Calls started early and cancelled because their turn changed.
        run_id: The run's id: the one it is logged under when ``Agent(log=...)`` is
            used (``toolwire inspect RUN_ID``), set either way.
        context: The run's context state: ``context.report()`` (tokens per request, by
            part, with the provider's usage), ``context.full_result(call_id)`` (the full
            text of a truncated result).
        refused: Whether the run ended because the model refused (``Turn.refused``);
            ``refusal`` is then its refusal text, if it gave one.
        truncated: Whether the last turn was cut at the token limit (finish reason
            ``length``): the run ends there, ``output`` is what the model wrote before
            the cut, and the run's outcome is ``length`` (no exception).
        paused: Whether the run paused for approvals (``Agent(approve="pause")``):
            ``pending`` lists the calls that wait; ``Agent.resume(run_id,
            approvals=...)`` goes on. ``messages`` then ends with the turn whose calls
            wait (those calls have no result yet).
        pending: The calls a paused run waits for, in call order.
    """

    output: Any
    messages: list[Message]
    usage: Usage
    requests: int
    tool_calls: int
    rounds: int
    diagnostics: RunDiagnostics
    forced_final: bool = False
    discarded: list[Discarded] = field(default_factory=list)
    run_id: str = ""
    context: RunContext | None = None
    refused: bool = False
    refusal: str = ""
    truncated: bool = False
    paused: bool = False
    pending: list[PendingCall] = field(default_factory=list)

    @property
    def outcome(self) -> RunOutcome:
        """``paused`` for a paused run, ``length`` when the last turn was cut at the
        token limit, else ``ok``."""
        if self.paused:
            return "paused"
        return "length" if self.truncated else "ok"


class Agent:
    """A model, tools and the loop between them.

    Args:
        model: A :class:`~toolwire.run.model.Model` (see :func:`resolve_model`).
        tools: Tools, plain functions, or a :class:`~toolwire.tools.Toolset`; the list
            may also hold opened toolsets and tool sources (``toolwire.MCPToolset``),
            which the agent opens and closes around each run (:mod:`.sources`).
        system: The system prompt (``None``: none).
        max_rounds: Rounds with tool calls before the final answer is forced.
        on_max_rounds: ``"final_answer"`` (one more request with ``tool_choice="none"``)
            or ``"raise"`` (:class:`MaxRoundsExceededError`).
        tool_choice: Sent with the requests up to the first round that made calls:
            ``"auto"``, ``"required"``, ``"none"`` or a tool name. After that round the
            agent sends ``"auto"`` (see ``reset_tool_choice``), so that a run under
            ``"required"`` can end with an answer.
        reset_tool_choice: ``True`` (the default): a ``"required"`` or named
            ``tool_choice`` applies until the model has made calls once, then
            ``"auto"``. ``False``: sent every round (the run then ends only at
            ``max_rounds``, a loop stop or a budget stop).
        parallel_tool_calls: Sent with every request (``None``: the provider default).
        settings: Provider options, passed through (``max_tokens``, ...).
        early_execution: Start safe calls while the model still streams.
        execution: Executor options (threads, batch budget, retries backoff).
        retry_policy: Failure budgets per class and the per-tool breaker.
        loop_policy: Loop detection thresholds.
        limits: Usage limits per run.
        permissions: Which calls may run (``toolwire.Permissions``); a denied call
            gets a ``denied`` result and is never executed (``None``: every call runs).
        approve: Asked about each call the permissions say to ask about: gets the
            ``ToolRequest``, answers ``True``, ``False`` or a denial reason (sync or
            async). Without it, such calls are denied. ``"pause"``: such calls wait;
            the run stops at the end of the round with ``RunResult.paused`` and
            ``pending`` (see :meth:`resume`).
        approve_mcp: Asked about each MCP approval request of a Responses turn (a
            remote MCP server's tool call the provider wants approved): gets an
            ``MCPApprovalRequest``, answers ``True``, ``False`` or a denial reason
            (sync or async). The answer goes back in the next request; without this
            callback every request is denied, with a reason
            (``toolwire.history.responses_mcp``).
        builtin_handlers: Run the Responses API's client-executed built-in calls:
            ``{"shell": fn, "local_shell": fn, "apply_patch": fn}``, each given a
            ``BuiltinCall`` (sync or async). Every ``shell_call``,
            ``local_shell_call`` and ``apply_patch_call`` gets exactly one output in
            the next request; without a handler for its kind, that output says it was
            not executed (``toolwire.history.responses_builtin``). ``permissions=``
            do not apply to them: a shell handler should sandbox what it runs.
        log: Record every run in an audit log: a ``toolwire.AuditLog`` or a path to
            its SQLite file (``None``: no log).
        instrument: Emit OpenTelemetry spans through the global tracer provider
            (needs ``toolwire[otel]``).
        context: Context-window budgets: result truncation, tool routing, history
            compression, prompt caching (``None``: ``ContextPolicy()``'s defaults).
        request: The request options as one group (:class:`~toolwire.run.options.RequestOptions`:
            ``tool_choice``, ``reset_tool_choice``, ``parallel_tool_calls``, ``settings``).
        stop: The stopping rules as one group (:class:`~toolwire.run.options.StopOptions`:
            ``max_rounds``, ``on_max_rounds``, ``retry_policy``, ``loop_policy``, ``limits``).
        safety: Permissions and approvals as one group
            (:class:`~toolwire.run.options.SafetyOptions`: ``permissions``, ``approve``,
            ``approve_mcp``, ``builtin_handlers``).
        output_type: The type of ``RunResult.output``: a pydantic model, a dataclass, a
            TypedDict or a plain type (``int``, ``list[str]``...); ``None`` or ``str``:
            the answer text. The model gives a structured answer by calling the
            ``final_result`` tool, whose parameters are the type's JSON Schema (a plain
            type's under ``"result"``); the run ends when a call of it validates
            (:mod:`toolwire.output`).
        output_mode: ``"tool"`` (the default: ``final_result``, every model) or
            ``"native"``: the provider's own mode (OpenAI ``response_format``,
            Anthropic tool forcing); a model without one is a ``CallerError``.
        observe: Recording as one group (:class:`~toolwire.run.options.ObserveOptions`:
            ``log``, ``instrument``). An option given both as a keyword and in its
            group must have the same value there.
        deps: Anything the tools need (a client, a connection, settings): a tool
            reads it as ``ctx.deps`` from a parameter annotated ``toolwire.ToolContext``.
            With ``run_many`` on Ray it travels to the workers, so it must pickle.

    Raises:
        CallerError: An argument is invalid (unknown ``tool_choice`` name, an option
            given twice with different values, ...).
    """

    def __init__(  # noqa: PLR0913 — the agent's documented keyword-only options
        self,
        model: Model | str,
        tools: Toolset | Sequence[Tool | Callable[..., Any] | ToolSource | Toolset] = (),
        *,
        system: str | None = None,
        max_rounds: int = 25,
        on_max_rounds: OnMaxRounds = "final_answer",
        tool_choice: ToolChoice = "auto",
        reset_tool_choice: bool = True,
        parallel_tool_calls: bool | None = None,
        settings: dict[str, Any] | None = None,
        early_execution: bool = True,
        execution: ExecutionOptions | None = None,
        retry_policy: RetryPolicy | None = None,
        loop_policy: LoopPolicy | None = None,
        limits: UsageLimits | None = None,
        permissions: PermissionPolicy | None = None,
        approve: Approver | Literal["pause"] | None = None,
        approve_mcp: Callable[[Any], Any] | None = None,
        builtin_handlers: dict[str, Callable[[Any], Any]] | None = None,
        log: RunHook | str | os.PathLike[str] | None = None,
        instrument: bool = False,
        context: ContextPolicy | None = None,
        request: RequestOptions | None = None,
        stop: StopOptions | None = None,
        safety: SafetyOptions | None = None,
        observe: ObserveOptions | None = None,
        output_type: Any = None,
        output_mode: OutputMode = "tool",
        deps: Any = None,
    ) -> None:
        # The grouped options (run/options.py) fill in the keywords they set.
        RequestOptions.check(request, "request")
        StopOptions.check(stop, "stop")
        SafetyOptions.check(safety, "safety")
        ObserveOptions.check(observe, "observe")
        if request is not None:
            tool_choice, reset_tool_choice, parallel_tool_calls, settings = request.merge(
                tool_choice, reset_tool_choice, parallel_tool_calls, settings
            )
        if stop is not None:
            max_rounds, on_max_rounds, retry_policy, loop_policy, limits = stop.merge(
                max_rounds, on_max_rounds, retry_policy, loop_policy, limits
            )
        if safety is not None:
            permissions, approve, approve_mcp, builtin_handlers = safety.merge(
                permissions, approve, approve_mcp, builtin_handlers
            )
        if observe is not None:
            log, instrument = observe.merge(log, instrument)
        self.model = resolve_model(model)
        self.output = Output(output_type, output_mode, self.model)
        self.permissions = permissions
        # Kept for run_many on Ray, which asks it from the driver.
        self.approve = hold_every_call if approve == "pause" else approve
        # The handlers of the items a turn owes an answer (toolwire.history.owed), checked
        # here; a run pairs them up when a turn owes answers (run_many on Ray swaps
        # approve_mcp for a relay).
        owed_handlers(builtin_handlers, approve_mcp)
        self.approve_mcp = approve_mcp
        self.builtin_handlers = dict(builtin_handlers or {})
        self.context = _context_policy(context)
        plain, self.tool_sources = split_tools(tools)
        self.executor = Executor(
            self.output.tools(_with_reader(plain, self.context)),
            execution,
            gate=self.output.gate(_gate(permissions, approve)),
        )
        self.toolset = self.executor.toolset
        self.system = _optional_str("system", system)
        self.max_rounds = check_int("max_rounds", max_rounds)
        self.on_max_rounds = _choice("on_max_rounds", on_max_rounds, ("final_answer", "raise"))
        self.tool_choice = self.output.check_choice(self._check_tool_choice(tool_choice))
        self.reset_tool_choice = bool(reset_tool_choice)
        if parallel_tool_calls is not None and not isinstance(parallel_tool_calls, bool):
            raise CallerError(
                f"parallel_tool_calls must be a bool or None, not {parallel_tool_calls!r}"
            )
        self.parallel_tool_calls = parallel_tool_calls
        self.settings = dict(settings or {})
        self.early_execution = bool(early_execution)
        self.retry_policy = retry_policy or RetryPolicy()
        self.loop_policy = loop_policy or LoopPolicy()
        self.limits = limits or UsageLimits()
        self.hooks = resolve_hooks(log, instrument)
        self.store = store_of(self.hooks)  # the log, as the home of paused and crashed runs
        # Recorded with each run's settings in the log, under "launch" (toolwire run
        # records its --model and --tools there, for toolwire resume).
        self.log_settings: dict[str, Any] = {}
        self.deps = deps

    def _check_tool_choice(self, choice: object) -> ToolChoice:
        if choice in ("auto", "required", "none"):
            return choice
        if isinstance(choice, str) and (choice in self.toolset or self.tool_sources):
            return choice  # a source's tool names are known only once it is opened
        raise CallerError(
            f"tool_choice={choice!r} is neither 'auto', 'required', 'none' nor a tool name",
            hint=f"tools: {', '.join(self.toolset.names) or 'none'}",
        )

    async def run(
        self, prompt: str | None = None, *, history: Sequence[Message] | None = None
    ) -> RunResult:
        """Run until the model gives a final answer.

        Args:
            prompt: The user message to add (``None``: continue ``history`` as it is).
            history: An earlier history to continue; unanswered calls in it are
                answered ``not_executed`` first.

        Returns:
            The run's result.

        Raises:
            BudgetExceededError: Too many failed calls (see ``retry_policy``).
            LoopDetectedError: The model kept repeating itself.
            UsageLimitExceededError: A usage limit was reached.
            MaxRoundsExceededError: ``max_rounds`` was reached (``on_max_rounds="raise"``, or
                the model called tools in the forced final request).
            ProviderError: The model's stream failed.
        """
        return await _Run(self, prompt, history).drive(_ignore)

    def run_sync(
        self, prompt: str | None = None, *, history: Sequence[Message] | None = None
    ) -> RunResult:
        """:meth:`run` in a new asyncio event loop (tools may use asyncio).

        Raises:
            CallerError: Called from inside a running event loop (use ``await run``).
        """
        return _in_new_loop("run", lambda: self.run(prompt, history=history))

    async def resume(
        self,
        run_id: str,
        approvals: dict[str, bool | str] | None = None,
        *,
        by: str = "api",
    ) -> RunResult:
        """Go on with a logged run that paused for approval or whose process stopped.

        The run keeps its id; its history comes from the agent's log as it was logged
        (redacted values stay redacted; signed and encrypted provider parts are kept
        verbatim); the last turn's calls are answered (see :mod:`toolwire.run.resuming`:
        a call whose result is logged never runs again; a call that was running when
        the process stopped runs again only if it is harmless, else it is answered
        ``interrupted``); then the loop goes on with this agent's model, tools and
        limits (rounds already spent count towards ``max_rounds``).

        Args:
            run_id: The run's id, an unambiguous prefix, or ``"last"``.
            approvals: Answers to the paused run's pending calls, by call id: ``True``
                runs the call, ``False`` or a reason string denies it (the model reads
                the reason). A pending call left out is asked about again.
            by: Who answered, for the run's timeline.

        Raises:
            CallerError: The agent has no log, or ``approvals`` names calls that are
                not pending.
            RunNotFoundError: No such run (the error lists the latest).
            RunNotResumableError: The run ended (``ok``, a stopping rule).
            RunClaimedError: Another process runs it, or resumed it first.
            AuditLogError: The log cannot be read (damaged, from a newer toolwire).
        """
        resumption = await prepare_resume(self.store, run_id, approvals, by)
        return await _Run(self, None, None, resumption).drive(_ignore)

    def resume_sync(
        self,
        run_id: str,
        approvals: dict[str, bool | str] | None = None,
        *,
        by: str = "api",
    ) -> RunResult:
        """:meth:`resume` in a new asyncio event loop.

        Raises:
            CallerError: Called from inside a running event loop (use ``await resume``).
        """
        return _in_new_loop("resume", lambda: self.resume(run_id, approvals, by=by))

    def run_stream(
        self, prompt: str | None = None, *, history: Sequence[Message] | None = None
    ) -> AgentStream:
        """Run, yielding events as they happen (see :mod:`toolwire.run.events`).

        Use as ``async for event in agent.run_stream(...)`` — best inside
        ``async with``, which stops the run if the loop body exits early.
        """
        return AgentStream(_Run(self, prompt, history))


class AgentStream:
    """The events of one run, as an async iterator.

    The run starts at the first ``__anext__``. Leaving ``async with`` early, calling
    :meth:`aclose`, or cancelling the consumer cancels the run (its calls are answered
    ``cancelled``/``not_executed``). An error that stopped the run is raised by the
    iteration after the last event.
    """

    def __init__(self, run: _Run) -> None:
        self._run = run
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._scope = TaskScope()  # owns the producer task: aclose cancels and awaits it
        self._started = False
        self._result: RunResult | None = None
        self._error: BaseException | None = None
        self._done = False

    @property
    def messages(self) -> list[Message]:
        """The run's history so far (complete, with every call answered, between rounds)."""
        return self._run.messages

    @property
    def result(self) -> RunResult:
        """The result of the finished run.

        Raises:
            CallerError: The run has not finished (or failed).
        """
        if self._result is None:
            raise CallerError("the run has not finished; iterate the stream to the end first")
        return self._result

    def __aiter__(self) -> AgentStream:
        return self

    async def __anext__(self) -> RunEvent:
        if not self._started:
            self._started = True
            self._scope.start(self._produce())
        if self._done and self._queue.empty():
            raise StopAsyncIteration
        try:
            item = await self._queue.get()
        except asyncio.CancelledError:
            await self.aclose()
            raise
        if item is _END:
            self._done = True
            error, self._error = self._error, None
            if error is not None:
                raise error
            raise StopAsyncIteration
        return item  # type: ignore[no-any-return]

    async def _produce(self) -> None:
        """The run, as a task of this stream's scope. Its error goes to the consumer,
        raised by ``__anext__``; a cancellation (``aclose``) ends it as a cancellation."""
        try:
            self._result = await self._run.drive(self._queue.put_nowait)
        except Exception as exc:
            self._error = exc
        except (KeyboardInterrupt, SystemExit) as exc:  # a tool's, deferred by the executor:
            self._error = exc  # raised in the consumer's task, not out of the event loop
        finally:
            self._queue.put_nowait(_END)

    async def aclose(self) -> None:
        """Stop the run (if still running) and wait until its history is complete."""
        await self._scope.aclose()

    async def __aenter__(self) -> AgentStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


_END = object()


def _ignore(event: RunEvent) -> None:
    """The emitter of a run nobody streams."""


async def _settled() -> None:
    """The observers' wait of a run that nobody observes."""


class _Run:
    """The state of one run: the history, the counters, the budgets."""

    def __init__(
        self,
        agent: Agent,
        prompt: str | None,
        history: Sequence[Message] | None,
        resumption: Resumption | None = None,
    ) -> None:
        self.agent = agent
        self.resumption = resumption
        if resumption is None:
            self.messages = _start_history(agent.system, prompt, history)
        else:
            self.messages = resumption.history()
        self.usage = Usage()
        self.requests = 0
        self.tool_calls = 0
        self.rounds = 0
        self.diagnostics = RunDiagnostics()
        self.budget = FailureBudget(agent.retry_policy)
        self.loops = LoopDetector(agent.loop_policy)
        # The caps to check, decided once per run: without any (the default), no check
        # point of the loop calls a check that cannot fail.
        self.limits = agent.limits if agent.limits.capped else None
        self.discarded: list[Discarded] = []
        self.emit: Emit = _ignore
        # Whether anyone streams or observes the run (set with emit, in _drive): when
        # nobody does, none of the run's own events is built, nor a callback called.
        self.listening = False
        self.run_id = new_run_id()
        self._number = 0  # the current round's number, for the events of its calls
        if resumption is not None:  # the logged run goes on: its id, its counts
            saved = resumption.saved
            self.run_id, self._number = saved.run_id, saved.round
            self.rounds, self.requests, self.usage = saved.rounds, saved.requests, saved.usage
        # A run without a log has nothing to commit before a call starts (call_journal's
        # None, without the call).
        self.journal = (
            call_journal(agent.store, self.run_id, lambda: self._number)
            if agent.store is not None
            else None
        )
        self._first_event_at: float | None = None
        self.tools: RunTools | None = None
        # This run's executor: the agent's, until _loop has the one over the
        # tools its sources opened (an attribute, read every round: no property call).
        self.executor: Executor = agent.executor
        self.context = RunContext(agent.context, agent.executor.toolset, agent.model)
        self.reprompted = False  # the last turn was an empty-turn re-prompt
        self.pending: list[PendingCall] = []  # calls held for approval: the run pauses
        # The context's events, emitted after RequestStarted (collected for a listener).
        self.context_events: list[RunEvent] = []
        self.settle: Callable[[], Awaitable[None]] = _settled  # the observers' wait
        self.output: OutputRun = agent.output.start(agent.executor.toolset)

    async def drive(self, emit: Emit) -> RunResult:
        """Run the loop to its end, sending events to ``emit`` (and to the observers)."""
        if not self.agent.hooks:
            return await self._drive(emit)
        observation = self._observe()
        self.settle = observation.settle
        result: RunResult | None = None
        try:
            result = await self._drive(observation.wrap(emit))
        except BaseException as exc:
            observation.end(error=exc, **self._totals(result))
            raise
        observation.end(error=None, **self._totals(result))
        await observation.settle()  # the observers' last writes, off the event loop
        return result

    def _observe(self) -> Observation:
        agent = self.agent
        settings = {
            "tool_choice": agent.tool_choice,
            "parallel_tool_calls": agent.parallel_tool_calls,
            "max_rounds": agent.max_rounds,
            "on_max_rounds": agent.on_max_rounds,
            "early_execution": agent.early_execution,
            "provider": dict(agent.settings),
            **agent.output.settings(),
        }
        if agent.log_settings:
            settings["launch"] = dict(agent.log_settings)
        return Observation.begin(
            agent.hooks,
            run_id=self.run_id,
            model=agent.model.name,
            # The tools the caller registered (read_result is offered only once a result
            # was cut; the requests record what each one offered).
            tools=[t.definition() for t in self.executor.toolset if not is_read_result(t)],
            settings=settings,
            messages=self.messages,
            resumed=self.resumption is not None,
        )

    def _totals(self, result: RunResult | None) -> dict[str, Any]:
        return {
            "result": result,
            "rounds": self.rounds,
            "requests": self.requests,
            "usage": self.usage,
        }

    async def _drive(self, emit: Emit) -> RunResult:
        self.emit = emit if emit is _ignore else self.output.watch(emit)  # PartialOutput
        self.listening = emit is not _ignore
        # For the read_result tool, which asks the context for its store when it runs.
        store = CURRENT_STORE.set(self.context)
        try:
            if not self.agent.tool_sources:  # nothing to open or close around the run,
                # and the context was made over the agent's tools: nothing to tell it.
                # No RunTools either (nothing to merge or refresh): only its first step,
                # the backend's check of the tools before the first request.
                prepare_tools(self.executor)
                return await self._loop(None)
            async with run_tools(self.agent.executor, self.agent.tool_sources) as tools:
                self.context.use_toolset(tools.executor.toolset)  # with the sources' tools
                return await self._loop(tools)
        except (LoopDetectedError, UsageLimitExceededError, MaxRoundsExceededError) as exc:
            exc.messages = list(self.messages)
            if isinstance(exc, LoopDetectedError) and self._tool_choice() not in _FREE_CHOICES:
                exc.hint = f"{exc.hint}; {self._required_note()}".lstrip("; ")
            raise
        finally:
            CURRENT_STORE.reset(store)

    async def _loop(self, tools: RunTools | None) -> RunResult:
        """The run over ``tools`` (its sources opened; ``None``: the agent has none, and
        runs on its own executor): a resumed run's last turn answered first, then
        rounds until one ends the run."""
        if tools is not None:
            self.tools = tools
            self.executor = tools.executor
        if self.resumption is not None:
            ended = await answer_last_turn(self, self.resumption)
            if ended is not None:  # paused again, or the logged turn was the answer
                return self._finish(ended, False)
        agent = self.agent
        while True:
            forced = self.rounds >= agent.max_rounds
            if forced and agent.on_max_rounds == "raise":
                raise MaxRoundsExceededError(
                    agent.max_rounds,
                    "the model was still calling tools",
                    hint=self._max_rounds_hint(),
                )
            # Between rounds: a source's tools may change (list_changed and the like).
            # Only sources and live toolsets can (split_tools): the agent's own cannot.
            if agent.tool_sources and self.tools is not None:
                await self.tools.refresh()
                self.context.use_toolset(self.tools.executor.toolset)
            turn = await self._round(forced)  # request, then execute
            if turn is None:  # a provider refused the latest results' images: answered
                continue  # and sent again
            # Only a provider's items owe answers (owed_answers' own first test): a turn
            # of text and calls, every round of most runs, is passed over in C.
            owed = any(map(IS_PROVIDER_PART, turn.message.parts)) and await self._answer_owed(
                turn, forced
            )
            decision = decide(
                turn,
                forced=forced,
                paused=bool(self.pending),
                owed=owed,
                reprompted=self.reprompted,
                judge=self.output.judge,
            )
            if decision.next in ENDING:  # Next.ends, without a property to start
                return self._finish(turn, forced)
            self._act(decision)

    async def _answer_owed(self, turn: Turn, forced: bool) -> bool:
        """Answer the items the turn owes an answer (a provider's approval requests, calls
        the client runs): never left hanging, never approved by default. Not for a turn
        whose calls wait for approval, nor for a refusal (the model's last word). Called
        for a turn with provider items (the loop tests that)."""
        if self.pending or turn.refused:
            return False
        agent = self.agent  # its handlers, paired up only for a turn that owes answers
        handlers = owed_handlers(agent.builtin_handlers, agent.approve_mcp)
        return bool(await answer_owed(turn.message, handlers, final=forced))

    def _act(self, decision: Decision) -> None:
        """Get the history ready for the next round, as ``decision`` says (or raise)."""
        kind = decision.next
        if kind is Next.ROUND:
            self.reprompted = False
        elif kind is Next.ANSWER_OWED:
            self.rounds += 1  # the answers go in the next request: a round of its own
        elif kind is Next.FIX_CALL:
            # The model wrote a call the format could not read: tell it, as for an
            # invalid call, and let it try again (a round, bounded by max_rounds).
            assert decision.feedback is not None
            self.messages.append(UserMessage(decision.feedback))
            self.rounds += 1
        elif kind is Next.RETRY_OUTPUT:
            assert decision.output is not None
            self._retry_output(decision.output)
        elif kind is Next.REPROMPT:
            self._reprompt_empty_turn()
        elif kind is Next.CALLS_WHEN_FORCED:
            self.reprompted = False
            raise MaxRoundsExceededError(
                self.agent.max_rounds,
                "the model called tools even in the final request sent with tool_choice='none'",
                hint="this model ignores tool_choice='none'; raise max_rounds, or use a "
                "model (or server) that honours tool_choice",
            )

    def _max_rounds_hint(self) -> str:
        """What to do about a run stopped at ``max_rounds`` (``on_max_rounds='raise'``)."""
        hint = "raise max_rounds, or pass on_max_rounds='final_answer' to force an answer"
        if self._tool_choice() not in _FREE_CHOICES:
            hint += f"; {self._required_note()}"
        return hint

    def _required_note(self) -> str:
        return (
            f"tool_choice={self.agent.tool_choice!r} was sent every round, so the model "
            "could not answer without calling a tool: keep reset_tool_choice=True"
        )

    def _tool_choice(self) -> ToolChoice:
        """The tool_choice of the next (unforced) request: reset after a round with calls."""
        agent = self.agent
        if agent.reset_tool_choice and self.rounds >= 1 and agent.tool_choice != "none":
            return "auto"
        return agent.tool_choice

    def _retry_output(self, step: Step) -> None:
        """The structured output is missing or invalid: tell the model, within its budget."""
        if step.feedback is not None:
            self.messages.append(UserMessage(step.feedback))
            self.rounds += 1  # a round without calls: counted, as a broken call's is
        if step.kind is not None:
            message = step.feedback or ""
            self.diagnostics.record(step.kind, FINAL_RESULT, message, round=self.requests)
            self.budget.record(step.kind, FINAL_RESULT, message)  # raises when spent

    def _finish(self, turn: Turn, forced: bool) -> RunResult:
        result = RunResult(
            output=self.output.value(turn),
            messages=list(self.messages),
            usage=self.usage,
            requests=self.requests,
            tool_calls=self.tool_calls,
            rounds=self.rounds,
            diagnostics=self.diagnostics,
            forced_final=forced,
            discarded=list(self.discarded),
            run_id=self.run_id,
            context=self.context,
            refused=turn.refused,
            refusal=turn.refusal,
            truncated=turn.finish_reason == "length",
            paused=bool(self.pending),
            pending=list(self.pending),
        )
        if self.listening:
            self.emit(RunFinished(result))
        return result

    # -- one round -------------------------------------------------------------------------

    async def _round(self, forced: bool) -> Turn | None:
        """One request and its calls; the history gets the turn and its results.

        ``None``: the request failed on images the provider refused, which were answered
        with error results (:meth:`_send`); the request is to be sent again."""
        agent = self.agent
        request = await self._next_request(forced)  # counted in self.requests
        number = self._number = self.rounds + 1
        sent_at = time.time()
        # A run nobody listens to builds none of its events (RequestStarted, ResponseDone,
        # RoundEnd, RunFinished): each one a dataclass for _ignore to drop.
        listening = self.listening
        if listening:
            self._started(number, request, sent_at)
        run = self.executor.turn(
            early=agent.early_execution and not forced,
            allowed=None if self.limits is None else self.limits.tool_calls_left(self.tool_calls),
            on_call=self._on_call if listening else None,  # nobody listens: skip
            shape_result=self.context.shape_result,
            uncut=self.context.uncut_lengths,  # a result this short is not shaped
            on_start=self._on_start if listening else None,  # nobody listens: skip
            before_start=self.journal,
            # Only a tool that takes a ToolContext or reports progress reads the scope.
            scope=None if self.context.plain_tools else self.tool_scope(),
        )
        turn: Turn | None = None
        results: list[ToolResult] | None = None
        paused = False  # calls were held: they stay unanswered in the history
        try:
            async with run:
                turn = await self._send(request, run, number, sent_at)
                if turn is None:  # nothing started (no output came): nothing to answer
                    return None
                if turn.continuations:  # the model continued a paused turn: more requests
                    self.requests += turn.continuations
                    agent.limits.check_request(self.requests - 1)
                if listening:
                    ended_at = time.time()
                    self.emit(ResponseDone(number, turn, sent_at, self._first_event_at, ended_at))
                self.usage = self.usage + turn.usage
                self.context.observe(turn.message, turn.usage)
                run.bind(turn.requests)
                await run.finish(
                    skip_reason=_FORCED_REASON if forced else None, keep=self.output.keep(forced)
                )
                paused = bool(run.held)
            assert turn is not None  # set before bind(), or the block raised
            results = run.results(keep_held=paused)
            # The round's Validations are made only where read: by the output (tool
            # mode) and by a round that is not all plain (_account).
            if self.output.observes:
                self.output.observe(run.validations(), results)
            called = has_calls(turn)
            stop = self._judge(run, results) if called else None  # no calls: no loop
        finally:
            if run.discarded:  # early starts cancelled (rare): recorded and told
                self._record_discarded(run)
            if turn is not None and run.bound:
                self.messages.append(turn.message)
                self.messages.extend(
                    results if results is not None else run.results(keep_held=paused)
                )
                self.tool_calls += run.executed
        assert turn is not None and results is not None
        self.pending = pending_calls(run.held) if paused else []
        if called:
            self.rounds += 1
        else:  # an answer, or what the model wrote instead of a call
            self._check_answer(request, turn)
        if listening:
            self.emit(RoundEnd(number, turn, results))
        self._enforce(run, stop, results)
        return turn

    async def _next_request(self, forced: bool) -> ModelRequest:
        """The round's request (within the limits, the history compressed and checked),
        once the observers have settled; counted."""
        if self.limits is not None:
            self.limits.check_request(self.requests)
        if self.context.compressor is not None:  # no history budget (the default): nothing to fit
            await self._compress()
        request = self._request(forced)  # checks the history (ModelRequest)
        if self.settle is not _settled:  # without observers there is nothing to wait for
            await self.settle()
        self.requests += 1
        return request

    def _started(self, number: int, request: ModelRequest, sent_at: float) -> None:
        """Emit the request's ``RequestStarted``, then the context's events about it
        (for a listener: a run nobody listens to collects none)."""
        self.emit(RequestStarted(number, request, sent_at))
        for event in self.context_events:
            self.emit(event)
        self.context_events.clear()

    async def _send(
        self, request: ModelRequest, run: TurnRun, number: int, sent_at: float
    ) -> Turn | None:
        """Stream the request's turn. A request that fails is closed for the observers
        (:class:`RequestFailed`); a provider's 400 about the images of the latest tool
        results, before any output, answers those calls with an error result
        (:mod:`.refused_images`), and ``None`` says to send the request again."""
        self._first_event_at = None
        try:
            return await self._stream(request, run)
        except Exception as exc:
            answered = []
            if isinstance(exc, ProviderAPIError) and self._first_event_at is None:
                answered = self._answer_refused_images(exc, request)
            failed_at = time.time()
            first = self._first_event_at
            self.emit(RequestFailed(number, exc, sent_at, first, failed_at, answered))
            if not answered:
                raise
        return None

    def _answer_refused_images(
        self, error: ProviderAPIError, request: ModelRequest
    ) -> list[tuple[ToolResult, ToolResult]]:
        """Answer the calls whose images the provider refused (see :mod:`.refused_images`);
        the images are then gone from the history, so the request is resent once at most."""
        answered = answer_refused_images(self.messages, error, request.messages)
        for _, result in answered:
            self.diagnostics.record(
                "tool_error", result.name, result.content, call_id=result.call_id,
                round=self.requests,
            )  # fmt: skip
        return answered

    def _request(self, forced: bool) -> ModelRequest:
        agent = self.agent
        choice = self.output.choice(self._tool_choice(), forced)  # "none" when forced
        # Nobody listening: no event of the context's is built.
        prepared = self.context.prepare(
            self.messages, choice, self.rounds + 1, listened=self.listening
        )
        if self.listening:  # what is collected is emitted by _started, for a listener
            self.context_events.extend(prepared.events)
        return ModelRequest(
            messages=prepared.messages,
            tools=self.output.offer(prepared.tools, forced),
            output=self.output.format,
            tool_choice=choice,
            parallel_tool_calls=agent.parallel_tool_calls,
            settings=dict(agent.settings),
            cache_key=prepared.cache_key,
            deltas=self.listening,  # per-fragment events only for a listener
        )

    # -- context window (toolwire.context) ----------------------------------------------------

    async def _compress(self) -> None:
        """Fit the history sent into its budget (the policy has one); a summary request
        when the policy says so."""
        events = self.context.compress(self.messages, self.rounds + 1)
        if self.listening:  # emitted by _started, for a listener only
            self.context_events.extend(events)
        prompt = self.context.summary_request(self.messages)
        if prompt is None:
            return
        self.agent.limits.check_request(self.requests)
        request = ModelRequest(prompt, tool_choice="none", settings=dict(self.agent.settings))
        self.requests += 1
        turn = await _collect(self.agent.model, request)
        self.usage = self.usage + turn.usage
        self.context.set_summary(turn.text, turn.usage)

    def _reprompt_empty_turn(self) -> None:
        """A turn that says "tool calls" but has none: ask once more instead of ending."""
        self.reprompted = True
        self.diagnostics.record("empty_turn", "(none)", _EMPTY_TURN_FEEDBACK)
        self.messages.append(UserMessage(_EMPTY_TURN_FEEDBACK))

    async def _stream(self, request: ModelRequest, run: TurnRun) -> Turn:  # noqa: PLR0912, PLR0915 — one dispatch per item, kept flat
        """Stream one turn, feeding calls to the executor as they complete."""
        stream = self.agent.model.stream(request)
        turn: Turn | None = None
        emit = self.emit
        listening = self.listening  # nobody listens: no call per event
        # A call's ToolCallStarted is told to the executor with the next item: when that
        # is the same call's ToolCallReady (a call whole in one chunk, the common case;
        # with no listener the decoder sends that call's Ready alone, no Started),
        # the call's first close places it in the stream order too (TurnRun.ready), so a
        # call is one step of the executor's, not two. Anything else tells it first: the
        # executor sees the same order of starts and closes.
        started: ToolCallStarted | None = None
        stamped = self._first_event_at is not None  # the first event's time is taken
        try:
            async for item in stream:
                # Each call streams a ToolCallStarted and a ToolCallReady: those two are
                # told by their class, without isinstance (a subclass takes _kind). A
                # start, half of every call's items, is held and goes on at once.
                # (The type checker cannot follow a test by class: the ignores below
                # name what the tests made sure of.)
                kind = item.__class__
                if kind is ToolCallStarted:
                    if started is not None:
                        run.started(started)
                    started = item  # type: ignore[assignment]
                    if not stamped:
                        stamped = self._stamp_first(item)
                    if listening:
                        emit(item)  # type: ignore[arg-type]
                    continue
                if kind is not ToolCallReady:
                    if started is not None:
                        run.started(started)
                        started = None
                    if isinstance(item, TurnDone):
                        turn = item.turn
                        continue
                    kind = _KINDS.get(kind) or _kind(item)  # worked out once per class
                if not stamped:
                    stamped = self._stamp_first(item)
                if listening:
                    emit(item)  # type: ignore[arg-type]  # not a TurnDone: that went on
                if kind is ToolCallReady:
                    ready: ToolCallReady = item  # type: ignore[assignment]
                    if started is not None and started.index != ready.index:
                        run.started(started)  # another call's start, told first
                    started = None
                    if len(ready.request.raw_arguments) > OFF_LOOP_ARGUMENTS:
                        await run.ready_off_loop(ready)  # big arguments validate in a thread
                    else:
                        run.ready(ready)  # no coroutine per call
                elif kind is ToolCallStarted:
                    if started is not None:
                        run.started(started)
                    started = item  # type: ignore[assignment]
                elif kind is ToolCallRetracted:
                    retracted: ToolCallRetracted = item  # type: ignore[assignment]
                    run.retract(retracted.index, retracted.reason)
        finally:
            await _close(stream)
        if turn is None:
            raise _no_turn(self.agent.model)
        return turn

    def _stamp_first(self, item: object) -> bool:
        """Take the time of the stream's first event; whether it was taken. A provider's
        notice that it is retrying (or a ``FallbackModel``'s that it moves on to the
        next model) is none: the model has not answered yet."""
        if isinstance(item, Notice) and item.kind in ("retry", "fallback"):
            return False
        self._first_event_at = time.time()
        return True

    # -- what a resumed run's last turn needs (toolwire.run.resuming.ResumedRun) --------------

    def on_call_started(self) -> Callable[[int], None]:
        return self._on_start

    def result_shaper(self) -> ResultShaper:
        return self.context.shape_result

    def call_listener(self) -> Callable[[CallRecord, ToolResult], None] | None:
        return self._on_call if self.listening else None

    def tool_scope(self) -> ToolScope:
        return ToolScope(self.run_id, self._number, self.agent.deps, self.emit)

    def _on_call(self, call: CallRecord, result: ToolResult) -> None:
        self.emit(ToolResultReady(call.index, result, self._number, call))

    def _check_answer(self, request: ModelRequest, turn: Turn) -> None:
        """Notices for a turn without calls that could be misread (not errors: the turn
        is a usable answer, so the run goes on). One function for both: a round with
        calls starts none, the answer's starts one (bench/README.md, issue 30).

        * No call under ``required`` (or a named tool): some served models (and servers
          that drop the field) ignore ``tool_choice``; the user should know why no tool
          ran.
        * Text that looks like a call (:mod:`toolwire.policies.call_shaped`): no one
          should read it as the answer.
        """
        if request.tool_choice not in _FREE_CHOICES and request.tools:
            notice = Notice(
                "tool_choice_ignored",
                f"the model {self.agent.model.name!r} answered without a tool call although "
                f"tool_choice={request.tool_choice!r} was sent (finish reason "
                f"{turn.finish_reason!r}); its server may not support tool_choice",
            )
            self._tell(turn, notice)
        text = turn.message.text  # joined from the parts on each read
        shape = call_shape(text, self.executor.toolset) if text else None  # names by `in`
        if shape is not None:
            notice = Notice(
                "call_shaped_text",
                f"the model wrote {shape} as text, which was not read as a call: no tool ran, "
                "and the text is shown as it was written",
            )
            self._tell(turn, notice)

    def _tell(self, turn: Turn, notice: Notice) -> None:
        """Add ``notice`` to ``turn`` and tell the listeners."""
        turn.notices.append(notice)
        self.emit(notice)

    def _on_start(self, index: int) -> None:
        self.emit(ToolCallRunning(index))

    def _record_discarded(self, run: TurnRun) -> None:
        for item in run.discarded:
            self.discarded.append(item)
            self.emit(
                CallDiscarded(
                    item.index, item.call_id, item.name, item.reason, self._number, item.call
                )
            )
        run.discarded.clear()

    # -- after the round -----------------------------------------------------------------------

    def _judge(self, run: TurnRun, results: list[ToolResult]) -> LoopDetectedError | None:
        """Loop detection; its warnings go into the results before they enter the
        history. The stop it calls for, if any (raised by :meth:`_enforce`)."""
        verdict = self.loops.observe(run.answered_requests(), results)
        for note in verdict.warnings:
            result = results[note.position]
            result.content = f"{result.content}\n\n{note.text}"
            self.diagnostics.record(
                "loop", result.name, note.text, call_id=result.call_id, round=self.requests
            )
            self.emit(LoopWarning(note.kind, result.name, note.text, note.count))
        stop = verdict.stop
        if stop is not None:
            self.diagnostics.record("loop", stop.tool, stop.message)
        return stop

    def _enforce(
        self,
        run: TurnRun,
        stop: LoopDetectedError | None,
        results: list[ToolResult],
    ) -> None:
        """Account for the round's failures (its answered calls' verdicts and results),
        then raise the first stopping rule that hit (``stop``: loop detection's, from
        :meth:`_judge`)."""
        budget_error = self._account(run, results)
        if run.skipped_for_limit:
            raise UsageLimitExceededError(
                "max_tool_calls",
                self.agent.limits.max_tool_calls or 0,
                self.tool_calls + run.skipped_for_limit,
            )
        if stop is not None:
            raise stop
        if budget_error is not None:
            raise budget_error
        if self.limits is not None:
            self.limits.check_tokens(self.usage)

    def _account(self, run: TurnRun, results: list[ToolResult]) -> BudgetExceededError | None:
        """Feed diagnostics and the failure budget; return the first budget stop."""
        # A round counts at most once per failure class: four failing parallel siblings
        # are one retry, and the model sees their errors before the budget can stop it.
        self.budget.begin_round()
        if not results:  # a round without calls (the answer's): nothing to record
            return None
        if _all_plain(run.verdicts(), results):  # the common round: each call valid and ran
            _account_plain(self.diagnostics, self.budget, results)
            return None
        validations = run.validations()
        return _account_each(self.diagnostics, self.budget, validations, results, self.requests)


def _account_each(
    diagnostics: RunDiagnostics,
    budget: FailureBudget,
    validations: list[Validation],
    results: list[ToolResult],
    round_number: int,
) -> BudgetExceededError | None:
    """Record a round's calls one by one (validation, failure class, budget); return the
    first budget stop."""
    first: BudgetExceededError | None = None
    for validation, result in zip(validations, results, strict=True):
        if validation.ok and not validation.repaired and result.status is ToolStatus.OK:
            # The common call, valid and run: record_validation's and
            # failure_class's answers for it, written out (once per call).
            diagnostics.valid += 1
            budget.record_success(result.name)
            continue
        diagnostics.record_validation(validation, call_id=result.call_id, round=round_number)
        kind = outcomes.failure_class(validation.kind, result.status)
        if kind is None:
            if result.status is ToolStatus.OK:
                budget.record_success(result.name)
            continue
        if validation.ok:
            diagnostics.record(
                kind, result.name, result.content, call_id=result.call_id, round=round_number
            )
        try:
            budget.record(kind, result.name, result.content)
        except BudgetExceededError as exc:
            first = first or exc
    return first


def _account_plain(
    diagnostics: RunDiagnostics, budget: FailureBudget, results: list[ToolResult]
) -> None:
    """What :func:`_account_each` records for a round of plain successes (:func:`_all_plain`),
    at once: each call valid, each tool's failure streak over (a property test compares
    the two)."""
    diagnostics.valid += len(results)
    budget.record_successes(map(_NAME, results))


_NAME = attrgetter("name")  # lazy: record_successes reads the names only after a failure


def _all_plain(verdicts: Sequence[Validation | None], results: list[ToolResult]) -> bool:
    """Whether every call of the round was valid, not repaired, and ran to ``ok``:
    what ``_account``'s loop would record as plain successes. A verdict ``None`` is a
    call admitted without one (:meth:`TurnRun.verdicts`): valid, not repaired.

    Two comprehensions, not three ``map(attrgetter(...))``: a comprehension's
    ``LOAD_ATTR`` reads a slot at a fixed offset, ``attrgetter`` looks the name up for
    every item (bench/README.md, issue 30's tenth pass)."""
    count, ok = len(results), ToolStatus.OK  # the member read once: an enum class's lookup
    return (
        len(verdicts) == count
        and len([v for v in verdicts if v is None or (v.ok and not v.repaired)]) == count
        and len([r for r in results if r.status is ok]) == count
    )


def _kind(item: object) -> type:
    """The run loop's name for a stream item: the call event class it is an instance of
    (a subclass of one), else its own class. Worked out once per class and kept in
    ``_KINDS``, which the loop reads first: every turn's stream ends with events of a
    few classes (text, finish, usage)."""
    cls = item.__class__
    kinds = (ToolCallReady, ToolCallStarted, ToolCallRetracted)
    kind = _KINDS[cls] = next((k for k in kinds if issubclass(cls, k)), cls)
    return kind


_KINDS: dict[type, type] = {}  # a stream item's class -> its kind (a few dozen classes)


async def _collect(model: Model, request: ModelRequest) -> Turn:
    """The turn of one request whose events nobody streams (the summary request)."""
    stream = model.stream(request)
    turn: Turn | None = None
    try:
        async for item in stream:
            if isinstance(item, TurnDone):
                turn = item.turn
    finally:
        await _close(stream)
    if turn is None:
        raise _no_turn(model)
    return turn


def _in_new_loop(method: str, start: Callable[[], Coroutine[Any, Any, RunResult]]) -> RunResult:
    """``Agent.<method>_sync``: the coroutine ``start`` makes, run in a new event loop.

    Raises:
        CallerError: Called from inside a running event loop (use ``await <method>``).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise CallerError(
            f"Agent.{method}_sync() was called inside a running event loop",
            hint=f"use `await agent.{method}(...)` there",
        )
    held: list[RunResult] = []

    async def main() -> None:
        # The result is handed over beside the main task, not as its result: on its way
        # out asyncio.run (3.11) may format the main task (signal.getsignal makes an
        # error message of the SIGINT handler it installed, which holds the task), and a
        # task's repr formats its result: the whole history, ~0.4 ms at 100 calls.
        held.append(await start())

    asyncio.run(main())
    return held[0]


async def _close(stream: object) -> None:
    """Close a model's stream if it can be closed (an async generator can)."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


def _no_turn(model: Model) -> ProtocolError:
    """The error of a stream that ended without its ``TurnDone``: it broke the protocol.
    (Called only then: a function a run starts costs it once cold, bench/README.md.)"""
    return ProtocolError(
        f"the stream of model {model.name!r} ended without a TurnDone",
        hint="a Model's stream must end with exactly one TurnDone",
    )


def _context_policy(policy: object) -> ContextPolicy:
    """The run's ``ContextPolicy`` (the default one for ``None``)."""
    if policy is None:
        return ContextPolicy()
    if not isinstance(policy, ContextPolicy):
        raise CallerError(f"context must be a ContextPolicy or None, not {policy!r}")
    return policy


def _with_reader(
    tools: Toolset | Sequence[Tool | Callable[..., Any]], policy: ContextPolicy
) -> Toolset:
    """The tools plus ``read_result`` (offered once a result was cut), unless the name is taken."""
    toolset = tools if isinstance(tools, Toolset) else Toolset(tools)
    if "read_result" in toolset:
        return toolset
    extended = Toolset(list(toolset), repair_policy=toolset.repair_policy)
    extended.add(read_result_tool())
    return extended


def _gate(
    permissions: PermissionPolicy | None, approve: Approver | Literal["pause"] | None
) -> CallGate | None:
    """The executor's permission gate, built by the policy (``toolwire.safety``); the
    decisions of a resumed run come first (:class:`~toolwire.run.pause.DecidedGate`)."""
    if approve == "pause":
        approve = hold_every_call
    if approve is not None and not callable(approve):
        raise CallerError(
            f"approve must be a function of the ToolRequest or 'pause', not {approve!r}"
        )
    if permissions is None:
        if approve is not None:
            raise CallerError(
                "approve= was given without permissions=: nothing would ever ask it",
                hint="pass permissions=toolwire.Permissions(ask=['*']) to approve every call",
            )
        return None
    if not callable(getattr(permissions, "gate", None)):
        raise CallerError(
            f"permissions={permissions!r} is not a permission policy",
            hint="pass toolwire.Permissions(allow=..., deny=..., ask=...)",
        )
    return DecidedGate(permissions.gate(approve))


def _start_history(
    system: str | None, prompt: str | None, history: Sequence[Message] | None
) -> list[Message]:
    messages = answer_missing(history) if history else []
    if system is not None and not (messages and isinstance(messages[0], SystemMessage)):
        messages.insert(0, SystemMessage(system))
    if prompt is not None:
        if not isinstance(prompt, str):
            raise CallerError(f"the prompt must be a str, not {type(prompt).__name__}")
        messages.append(UserMessage(prompt))
    elif not any(isinstance(m, UserMessage) for m in messages):  # a history alone
        raise CallerError("the run has no user message", hint="pass a prompt or a history")
    return messages


def _optional_str(name: str, value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise CallerError(f"{name} must be a str or None, not {type(value).__name__}")
    return value


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> Any:
    if value not in allowed:
        raise CallerError(f"{name}={value!r}; use one of {', '.join(map(repr, allowed))}")
    return value
