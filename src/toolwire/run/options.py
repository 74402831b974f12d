"""The agent's options, grouped the way users think of them.

``Agent`` takes each option as a keyword (``Agent(model, tools, max_rounds=5)``), and
also takes them in groups, each a frozen dataclass whose fields are the same keywords
with the same defaults:

=========================  ================================================================
group                      options
=========================  ================================================================
:class:`RequestOptions`    what every model request carries: ``tool_choice``,
                           ``reset_tool_choice``, ``parallel_tool_calls``, ``settings``
:class:`StopOptions`       when a run stops: ``max_rounds``, ``on_max_rounds``,
                           ``retry_policy``, ``loop_policy``, ``limits``
:class:`SafetyOptions`     which calls may run and who is asked: ``permissions``,
                           ``approve``, ``approve_mcp``, ``builtin_handlers``
:class:`ObserveOptions`    where a run is recorded: ``log``, ``instrument``
=========================  ================================================================

A group is built once and shared by several agents
(``Agent(model_a, tools, stop=strict)``, ``Agent(model_b, tools, stop=strict)``). An
option set both as a keyword and in its group must say the same thing; a group's field
left at its default leaves the keyword's value in place. No keyword goes away: new
options (``approve="pause"``, ``deps=``, ``output_type=``) come as keywords too, and join
a group where one fits.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..errors import CallerError
from ..policies.budgets import RetryPolicy
from ..policies.limits import UsageLimits
from ..policies.loops import LoopPolicy
from ..tooldef import ToolChoice
from .gate import Approver, PermissionPolicy

if TYPE_CHECKING:
    from .observers import RunHook

__all__ = ["ObserveOptions", "OnMaxRounds", "RequestOptions", "SafetyOptions", "StopOptions"]

OnMaxRounds = Literal["final_answer", "raise"]


class _Group:
    """What every group shares: merging with the keywords given beside it."""

    def merge(self, *given: Any) -> tuple[Any, ...]:
        """The options to use, in field order: each keyword in ``given`` (the same
        order), or this group's field where the field is not at its default.

        Raises:
            CallerError: An option set both ways, to different values.
        """
        merged = []
        for field, keyword in zip(dataclasses.fields(self), given, strict=True):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            default = field.default
            if _same(value, default):
                merged.append(keyword)
                continue
            if not _same(keyword, default) and not _same(keyword, value):
                raise CallerError(
                    f"{field.name} was given twice, differently: as a keyword and in "
                    f"{type(self).__name__}",
                    hint=f"pass {field.name} once: as a keyword or in {type(self).__name__}",
                )
            merged.append(value)
        return tuple(merged)

    @classmethod
    def check(cls, value: object, keyword: str) -> None:
        """Raise unless ``value`` is ``None`` or this group.

        Raises:
            CallerError: It is something else.
        """
        if value is not None and not isinstance(value, cls):
            raise CallerError(
                f"{keyword}= must be a {cls.__name__} or None, not {type(value).__name__}",
                hint=f"pass toolwire.{cls.__name__}(...)",
            )


def _same(a: object, b: object) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # an object whose == fails is not the same as anything else
        return False


@dataclass(frozen=True)
class RequestOptions(_Group):
    """What every model request of a run carries (see ``Agent`` for each option)."""

    tool_choice: ToolChoice = "auto"
    reset_tool_choice: bool = True
    parallel_tool_calls: bool | None = None
    settings: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class StopOptions(_Group):
    """When a run stops (see ``Agent`` for each option)."""

    max_rounds: int = 25
    on_max_rounds: OnMaxRounds = "final_answer"
    retry_policy: RetryPolicy | None = None
    loop_policy: LoopPolicy | None = None
    limits: UsageLimits | None = None


@dataclass(frozen=True)
class SafetyOptions(_Group):
    """Which calls may run, and who is asked (see ``Agent`` for each option)."""

    permissions: PermissionPolicy | None = None
    approve: Approver | None = None
    # The handlers' shapes live with the provider items they answer (history/); run/
    # types them as plain callables, as Agent's keywords do.
    approve_mcp: Callable[[Any], Any] | None = None
    builtin_handlers: Mapping[str, Callable[[Any], Any]] | None = None


@dataclass(frozen=True)
class ObserveOptions(_Group):
    """Where a run is recorded (see ``Agent`` for each option)."""

    log: RunHook | str | os.PathLike[str] | None = None
    instrument: bool = False
