"""Call ids for calls a model's output does not name."""

from __future__ import annotations

import secrets
import string

__all__ = ["AlphanumericIds", "IdFactory"]


class IdFactory:
    """Call ids for one stream: ``<prefix><index>`` (the default of every family).

    A family whose chat template constrains ids sets :attr:`Format.id_factory` to a
    subclass (see :class:`AlphanumericIds`). With an explicit prefix the ids are
    deterministic (tests, replays); without one a random token is drawn per stream,
    so ids never collide across turns.

    Args:
        prefix: The id prefix, or ``None`` for a random one.
    """

    __slots__ = ("prefix",)

    def __init__(self, prefix: str | None = None) -> None:
        self.prefix = prefix if prefix is not None else f"call_{secrets.token_hex(6)}_"

    def make(self, index: int) -> str:
        """Return the id of the call at ``index``."""
        return f"{self.prefix}{index}"


_ALNUM = string.ascii_letters + string.digits


class AlphanumericIds(IdFactory):
    """Call ids of exactly :attr:`LENGTH` characters from ``[A-Za-z0-9]``.

    ``mistral_common`` (``MistralRequestValidatorV3`` in
    ``src/mistral_common/protocol/instruct/validator.py``: ``^[a-zA-Z0-9]{9}$``) and
    Mistral's chat templates reject any other id when a call goes back into the
    history, so the generic ``call_<hex>_<n>`` would break the next request.

    With a prefix the id is deterministic: the prefix's letters and digits, then the
    call index, zero-padded in between (``"call_test_"`` gives ``calltest0``, and
    ``calltes10`` for call 10; a long prefix is cut so the index always fits).
    Without one each id is 9 random characters, as ``mistral_common`` draws them,
    redrawn in the unlikely case it repeats an earlier id of the same stream.

    Args:
        prefix: The id prefix, or ``None`` for random ids.
    """

    LENGTH = 9
    __slots__ = ("_issued", "_stem")

    def __init__(self, prefix: str | None = None) -> None:
        super().__init__("" if prefix is None else prefix)
        self._stem = None if prefix is None else "".join(c for c in prefix if c in _ALNUM)
        self._issued: set[str] = set()

    def make(self, index: int) -> str:
        """Return the id of the call at ``index``."""
        if self._stem is not None:
            # A stream never holds 10**9 calls, so the index fits in the 9 characters.
            digits = str(index)[-self.LENGTH :]
            stem = self._stem[: self.LENGTH - len(digits)]
            return stem + digits.rjust(self.LENGTH - len(stem), "0")
        while True:
            call_id = "".join(secrets.choice(_ALNUM) for _ in range(self.LENGTH))
            if call_id not in self._issued:
                self._issued.add(call_id)
                return call_id
