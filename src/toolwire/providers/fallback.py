"""A model that hands a request to the next model when one fails before answering.

``FallbackModel(primary, backup, ...)`` is a :class:`~toolwire.run.model.Model` like any
other, so the loop needs nothing new: each request goes to the models in order, and
the first that answers answers it. The rule that decides when to move on is the HTTP
layer's rule for retries (:mod:`.http`), one level up:

* **Only before any output.** A model whose stream already yielded an event (text, a
  call fragment, usage) may have been shown or acted on — early execution may have
  started a call — so an error then is raised as it is, never retried on another model
  (the turn would be two models' halves spliced). A provider's ``retry`` notices are not
  output: they announce its own retries, which run first (a 429 falls back only after
  the provider's retries are spent).
* **Only for the errors ``on`` names.** By default: connection errors, timeouts, HTTP
  429 and 5xx (:func:`transient`); a 400 or a missing key is the caller's to fix and is
  raised from the first model that hits it.

Each move is announced by a ``Notice`` of kind ``fallback`` in the stream, and the
answering model's name is put on the turn (``Turn.model``), which the run's
``ResponseDone`` event carries and the audit log records per request. When every model
failed, the last error is raised with the earlier ones chained as its causes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from ..context.images import ImageLimits, strictest
from ..errors import (
    CallerError,
    ProviderAPIError,
    ProviderConnectionError,
    ProviderTimeoutError,
)
from ..run.agent import resolve_model
from ..run.model import Model, ModelEvent, ModelRequest, TurnDone
from ..turn import Notice

__all__ = ["FallbackModel", "transient"]

FallbackOn = Sequence[type[BaseException]] | type[BaseException] | Callable[[Exception], bool]


def transient(error: Exception) -> bool:
    """The default ``on``: the failures another model may not have.

    Connection errors, timeouts, and HTTP 429 (after the provider's own retries) or 5xx.
    """
    if isinstance(error, ProviderConnectionError | ProviderTimeoutError):
        return True
    if isinstance(error, ProviderAPIError):
        status = error.status or 0
        return status == 429 or status >= 500
    return False


class FallbackModel:
    """The first of several models that answers a request.

    Args:
        primary: The model tried first (a model, or a spec such as
            ``"openai:gpt-4.1-mini"``).
        *others: The models tried next, in order.
        on: Which errors move a request on: exception classes, or a predicate of the
            error (``None``: :func:`transient`).

    Raises:
        CallerError: No second model, or ``on`` is neither classes nor a function.
    """

    def __init__(self, primary: Model | str, *others: Model | str, on: FallbackOn | None = None):
        if not others:
            raise CallerError(
                "FallbackModel needs at least two models",
                hint="pass FallbackModel(primary, backup, ...)",
            )
        self.models: tuple[Model, ...] = tuple(resolve_model(m) for m in (primary, *others))
        self._on = _predicate(on)

    @property
    def name(self) -> str:
        """``fallback:`` and the models' names in order."""
        return "fallback:" + ",".join(m.name for m in self.models)

    @property
    def native_output(self) -> str | None:
        """The native structured output mode, when every model has the same one."""
        kinds = {getattr(m, "native_output", None) for m in self.models}
        return kinds.pop() if len(kinds) == 1 else None

    @property
    def image_limits(self) -> ImageLimits | None:
        """The strictest image limits of its models: any of them may answer."""
        return strictest(self.models)

    def falls_back(self, error: Exception) -> bool:
        """Whether ``error``, raised before any output, moves the request on."""
        return self._on(error)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the turn of the first model that answers.

        Raises:
            ToolwireError: The error of a model that failed after its output began,
                or whose error ``on`` does not name; when every model failed, the last
                model's error (the earlier ones chained as causes).
        """
        failures: list[Exception] = []
        for position, model in enumerate(self.models):
            started = False
            stream = model.stream(request)
            try:
                async for item in stream:
                    if isinstance(item, TurnDone):
                        item.turn.model = model.name
                    elif not started and not (isinstance(item, Notice) and item.kind == "retry"):
                        started = True
                    yield item
                return
            except Exception as exc:
                if started or not self._on(exc):
                    raise
                _chain(exc, failures)
                failures.append(exc)
                if position + 1 == len(self.models):
                    raise
                yield _moved_on(model, exc, self.models[position + 1])
            finally:
                await _close(stream)


def _moved_on(failed: Model, error: Exception, following: Model) -> Notice:
    return Notice(
        "fallback",
        f"model {failed.name!r} failed before answering ({type(error).__name__}: {error}); "
        f"the request goes to {following.name!r}",
    )


def _chain(error: Exception, earlier: list[Exception]) -> None:
    """Chain the previous model's error under ``error`` (its own cause, if any, stays
    reachable: the chain is made at the end of the earlier error's chain)."""
    if not earlier:
        return
    tail: BaseException = error
    seen = {id(tail)}
    while tail.__cause__ is not None and id(tail.__cause__) not in seen:
        tail = tail.__cause__
        seen.add(id(tail))
    tail.__cause__ = earlier[-1]


def _predicate(on: object) -> Callable[[Exception], bool]:
    if on is None:
        return transient
    if isinstance(on, type) and issubclass(on, BaseException):
        on = (on,)
    if (
        isinstance(on, (tuple, list))
        and on
        and all(isinstance(c, type) and issubclass(c, BaseException) for c in on)
    ):
        kinds = tuple(on)
        return lambda error: isinstance(error, kinds)
    if callable(on):
        predicate: Callable[[Exception], Any] = on
        return lambda error: bool(predicate(error))
    raise CallerError(
        f"FallbackModel(on={on!r}): pass exception classes or a function of the error",
        hint="e.g. on=(toolwire.ProviderAPIError,) or on=lambda error: ...",
    )


async def _close(stream: object) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()
