"""``AuditLog``: the SQLite file every observed run is written to.

Writes leave the run's event loop at once: the recorder turns each event into one row
(a tuple) and puts it on a queue; a writer thread takes whatever has queued up, redacts
it, and commits it in one transaction. A finished call's row is urgent: it wakes the
writer, which commits at once whatever has queued by then (no waiting for more), so a
call is in the file microseconds after it ends, without the event loop waiting for
the commit. Other rows wait up to ``GROUP_WINDOW`` for company; when calls end in
bursts, one commit covers what queued during the previous one. (A commit is an
fsync-free WAL append with ``synchronous=NORMAL``, tens of microseconds: per call, that
alone is about the executor's whole overhead, bench/bench_observe.py.) Before each
model request after the first, and at the end of the run, the recorder waits for the
queue to drain: a process killed with SIGKILL loses at most the calls in flight (and
the model turn in flight), never an earlier round, and a finished run is in the file
when ``Agent.run`` returns.

Errors: an unusable file (locked, read-only, corrupt, from a newer toolwire) is an
:class:`~toolwire.errors.AuditLogError` naming it. A strict log raises it when a run
begins, before the first model request; otherwise it becomes an
:class:`AuditLogWarning` and the run goes on without a log. The writer thread never
dies: whatever a commit raises becomes the log's :attr:`AuditLog.error` (a warning at
the run's end, or the strict log's error), and flush waiters are always released.
Values are made bindable before they reach SQLite (an integer beyond SQLite's 64 bits
is clamped, a lone surrogate becomes U+FFFD, any other object its ``str``).

Secrets: every text is redacted in the writer thread (:mod:`toolwire.observe.redact`),
and a structured value (a :class:`JsonValue`: messages, tool calls, tools, settings) is
redacted field by field before it is encoded, so no secret survives JSON-escaped
inside another value. ``AuditLog(path, redact=False)`` keeps everything verbatim (the
file then holds secrets). The file, its ``-wal``/``-shm`` companions and a directory
the log creates are private to the user (0600 and 0700).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import operator
import os
import queue
import re
import sqlite3
import threading
import time
import warnings
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import AuditLogError, CallerError, RunClaimedError, ToolwireError
from ..run.events import RunStarted
from ..run.observers import RunListener
from ..run.store import ApprovalRecord, CallStart, SavedRun
from .redact import Redactor
from .schema import SCHEMA_VERSION, apply_migrations, schema_version

__all__ = ["AuditLog", "AuditLogWarning", "JsonValue", "connect", "describe_error", "log_errors"]

Row = tuple[str, tuple[Any, ...]]
"""One write: an SQL statement and its parameters."""

_MAX_GROUP = 2000  # rows per commit at most, so that one commit never holds the lock long
GROUP_WINDOW = 0.002
"""Seconds the writer waits after the first row of a group for more to arrive.

Without the wait, every row woke the writer and handed it the GIL while the run was
busy (about 10 µs per row); with it, queueing a row is a list append. A flush or an
urgent row (a finished call) cuts the wait short."""


FLUSH_TIMEOUT = 60.0
"""Seconds :meth:`AuditLog.flush` waits for the writer at most, by default."""

_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1  # what SQLite can bind
_SURROGATE = re.compile("[\ud800-\udfff]")
# Provider data that must go back byte for byte (a changed thinking signature or
# encrypted reasoning breaks the turn): never redacted.
SIGNED_FIELDS = frozenset({"signature", "redacted", "encrypted_content", "encrypted_index"})


class AuditLogWarning(UserWarning):
    """The audit log could not be written; the run went on without it."""


class JsonValue:
    """A row parameter that the writer redacts, then encodes as JSON.

    Args:
        value: Plain JSON-like data (dicts, lists, strings, numbers), copied already.
        keep: Keys whose values are never redacted (signed or encrypted provider data).
    """

    __slots__ = ("keep", "value")

    def __init__(self, value: Any, keep: frozenset[str] = frozenset()) -> None:
        self.value = value
        self.keep = keep

    def encode(self, redact: Redactor | None) -> str:
        """The JSON text, redacted unless ``redact`` is ``None`` (an object JSON has no
        form for is written as its ``repr``, redacted as text)."""
        if redact is None:
            return json.dumps(self.value, default=repr)
        return json.dumps(
            redact.structure(self.value, self.keep), default=lambda item: redact(repr(item))
        )


class _Flush:
    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = threading.Event()


_STOP = object()


def describe_error(path: str, exc: sqlite3.Error, timeout: float) -> AuditLogError:
    """The :class:`AuditLogError` for an SQLite failure on ``path``."""
    text = str(exc)
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        return AuditLogError(
            path,
            f"the database is locked by another connection (waited {timeout:g} s)",
            hint="let the other process finish, or log to another file (--log PATH)",
        )
    if "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
        return AuditLogError(path, f"the file cannot be written ({text})")
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return AuditLogError(
            path,
            f"the file is not a usable SQLite database ({text})",
            hint="move the file away (it may be corrupt, or not an audit log) and log again",
        )
    return AuditLogError(path, f"SQLite error: {text}")


def connect(path: str, *, readonly: bool = False, timeout: float = 5.0) -> sqlite3.Connection:
    """A connection to the audit log at ``path``, checked and migrated.

    Args:
        path: The file (``":memory:"``: a private in-memory database).
        readonly: Open for reading only; the file must exist and is never migrated.
        timeout: Seconds to wait for another connection's write lock.

    Raises:
        AuditLogError: The file is missing (``readonly``), locked, read-only, corrupt,
            or from a newer toolwire.
    """
    try:
        if readonly:
            if not Path(path).is_file():
                raise AuditLogError(
                    path,
                    "no such file",
                    hint="run something with the log on first, or pass --db PATH",
                )
            uri = Path(path).resolve().as_uri() + "?mode=ro"
            conn = sqlite3.connect(
                uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        else:
            if path != ":memory:":
                _private_file(Path(path))
            conn = sqlite3.connect(
                path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
    except sqlite3.Error as exc:
        raise describe_error(path, exc, timeout) from None
    except OSError as exc:
        raise AuditLogError(path, f"cannot create it or its directory ({exc.strerror})") from None
    try:
        _prepare(conn, path, readonly=readonly)
        if not readonly:
            _make_private(path)
        if readonly and schema_version(conn) < SCHEMA_VERSION:
            # An older log: bring it up to date once (a writable connection), so that
            # the readers' queries can rely on one schema.
            connect(path, timeout=timeout).close()
    except BaseException:
        conn.close()
        raise
    return conn


def _private_file(path: Path) -> None:
    """Create ``path`` (and a missing directory) readable by the user alone: the log
    holds every prompt and result. An existing directory's mode is left alone."""
    if not path.parent.is_dir():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))


def _make_private(path: str) -> None:
    """Mode 0600 for the log and its ``-wal``/``-shm`` files: SQLite gives new ones the
    database file's mode, but a log made by an older toolwire (or another program) may
    be 0644."""
    if path == ":memory:":
        return
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):  # gone, or not ours to change
            file = Path(path + suffix)
            if file.stat().st_mode & 0o077:
                file.chmod(0o600)


@contextlib.contextmanager
def log_errors(path: str) -> Iterator[None]:
    """Turn what a damaged log makes the readers raise into one :class:`AuditLogError`.

    A log edited by hand or by another program can hold anything: a missing table,
    text where a number belongs, a column that is not JSON. Reading it is then not a
    bug of the reader but a fault of the file, said in one line that names it.
    """
    try:
        yield
    except ToolwireError:
        raise  # already says what is wrong (no such run, ...)
    except sqlite3.Error as exc:
        raise AuditLogError(
            path, f"the log is damaged or incomplete ({exc})", hint=_DAMAGED_HINT
        ) from exc
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError) as exc:
        raise AuditLogError(
            path,
            f"the log is damaged: a row holds what toolwire never writes "
            f"({type(exc).__name__}: {str(exc)[:200]})",
            hint=_DAMAGED_HINT,
        ) from exc


_DAMAGED_HINT = "move the file away and log again (or pass --db PATH to read another log)"


def _prepare(conn: sqlite3.Connection, path: str, *, readonly: bool) -> None:
    try:
        version = schema_version(conn)
        if version > SCHEMA_VERSION:
            raise AuditLogError(
                path,
                f"it was written by a newer toolwire (schema version {version}; this "
                f"toolwire knows versions up to {SCHEMA_VERSION})",
                hint="upgrade toolwire, or log to another file (--log PATH)",
            )
        if readonly:
            if version == 0:
                raise AuditLogError(path, "it is not a toolwire audit log (no schema)")
            return
        if path != ":memory:" and conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] != "wal":
            raise AuditLogError(path, "SQLite refused WAL mode for it")
        conn.execute("PRAGMA synchronous=NORMAL")
        apply_migrations(conn)
    except sqlite3.Error as exc:
        raise describe_error(path, exc, conn_timeout(conn)) from None


def conn_timeout(conn: sqlite3.Connection) -> float:
    """The connection's busy timeout in seconds."""
    return float(conn.execute("PRAGMA busy_timeout").fetchone()[0]) / 1000.0


class AuditLog:
    """Every run of the agents that use it, in one SQLite file.

    Use as ``Agent(model, tools, log=AuditLog("runs.db"))`` (or ``log="runs.db"``); one
    log may serve many agents and concurrent runs. Read it back with
    ``toolwire log``/``toolwire inspect``, :meth:`runs` and :meth:`inspect`.

    Args:
        path: The SQLite file (created with its directory), or ``":memory:"``.
        strict: Fail a run (before its first request) when the log cannot be
            written, instead of warning and going on without it.
        redact: What to redact before writing (default: the built-in patterns and
            names, see :mod:`toolwire.observe.redact`). ``False`` keeps everything
            verbatim, for exact replays and resumes: the file then holds every secret
            the run saw; keep it like a credential.
        timeout: Seconds to wait for another process's write lock.
        group_commits: Commit from a writer thread, grouping rows that arrive
            together (the default). ``False`` commits every row in the caller's
            thread as it is recorded: slower, for comparison (bench/).

    Raises:
        CallerError: An argument has the wrong type.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        strict: bool = False,
        redact: Redactor | bool | None = None,
        timeout: float = 5.0,
        group_commits: bool = True,
    ) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise CallerError(f"AuditLog(path): a path or ':memory:', not {path!r}")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout < 0:
            raise CallerError(f"AuditLog(timeout): a number of seconds >= 0, not {timeout!r}")
        self.path = os.fspath(path)
        self.strict = bool(strict)
        if redact is not None and not isinstance(redact, (Redactor, bool)):
            raise CallerError(f"AuditLog(redact): a Redactor, True or False, not {redact!r}")
        self.redact: Redactor | None = (
            redact if isinstance(redact, Redactor) else None if redact is False else Redactor()
        )
        """What the writer redacts with (``None``: nothing, ``redact=False``)."""
        self.timeout = float(timeout)
        self.group_commits = bool(group_commits)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()  # one statement sequence on the connection at a time
        self._open_lock = threading.Lock()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._wake = threading.Event()  # ends the writer's group window early
        self._writer: threading.Thread | None = None
        self.error: AuditLogError | None = None
        """The last write error (the writer thread keeps going; rows in it are lost)."""

    def __repr__(self) -> str:
        return f"AuditLog({self.path!r})"

    # -- opening ---------------------------------------------------------------------------

    def open(self) -> AuditLog:
        """Open (create, migrate) the file now rather than at the first run.

        Raises:
            AuditLogError: The file cannot be used.
        """
        with self._open_lock:
            if self._conn is None:
                self._conn = connect(self.path, timeout=self.timeout)
                if self.group_commits:
                    self._start_writer()
        return self

    def _start_writer(self) -> None:
        writer = threading.Thread(
            target=_write_loop,
            args=(weakref.ref(self), self._queue, self._wake),
            name=f"toolwire-audit-log:{self.path}",
            daemon=True,
        )
        writer.start()
        self._writer = writer
        atexit.register(self.close)

    def begin(self, start: RunStarted) -> RunListener:
        """The listener for one run (the :class:`~toolwire.run.observers.RunHook` side).

        Raises:
            AuditLogError: Only when ``strict``: the file cannot be used.
        """
        from .record import RunRecorder

        try:
            first = self._conn is None
            self.open()
            recorder = RunRecorder(self, start)
            if start.resumed:  # its row is there (claimed): number the new rows after the old
                recorder.continue_after(*self._counts(start.run_id))
            elif first or self.strict or not self.group_commits:
                self.write_now(recorder.start_row())  # proves the file writable, now
            else:
                self.submit(recorder.start_row())
        except AuditLogError as exc:
            if self.strict:
                raise
            warnings.warn(f"{exc}; the run is not logged", AuditLogWarning, stacklevel=2)
            return _ignore
        return recorder

    # -- writing ---------------------------------------------------------------------------

    def submit(self, row: Row, *, urgent: bool = False) -> None:
        """Queue one row for the writer (or write it now without ``group_commits``).

        ``urgent`` (a finished call): the writer commits it, with what has queued, as
        soon as it runs, instead of waiting ``GROUP_WINDOW`` for more; the caller does
        not wait.
        """
        if self._writer is None:
            self.write_now(row)
        else:
            self._queue.put(row)
            if urgent:
                self._wake.set()

    def write_now(self, row: Row) -> None:
        """Write and commit one row in this thread, after what is queued.

        Raises:
            AuditLogError: The write failed.
        """
        self.flush()
        conn = self._conn
        assert conn is not None, "write_now() before open()"
        with self._lock:
            try:
                _commit(conn, [row], self.redact)
            except Exception as exc:
                raise self._failure(exc) from None

    def _failure(self, exc: Exception) -> AuditLogError:
        """The :class:`AuditLogError` for what a commit raised."""
        if isinstance(exc, AuditLogError):
            return exc
        if isinstance(exc, sqlite3.Error):
            return describe_error(self.path, exc, self.timeout)
        return AuditLogError(self.path, f"a row could not be written ({type(exc).__name__}: {exc})")

    def flush(self, timeout: float | None = FLUSH_TIMEOUT) -> bool:
        """Wait until everything queued so far is committed (or failed).

        Args:
            timeout: Seconds to wait at most (``None``: no bound).

        Returns:
            Whether the writer got there within ``timeout`` (what is still queued then
            is written later, in order).
        """
        writer = self._writer
        if writer is None or not writer.is_alive():
            return True
        marker = _Flush()
        self._queue.put(marker)
        self._wake.set()
        return marker.done.wait(timeout)

    def close(self) -> None:
        """Commit what is queued, stop the writer and close the file (idempotent)."""
        with self._open_lock:
            writer, self._writer = self._writer, None
            if writer is not None and writer.is_alive():
                self._queue.put(_STOP)
                self._wake.set()
                writer.join()
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        atexit.unregister(self.close)

    def __enter__(self) -> AuditLog:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A connection to read from, after what is queued is committed.

        Raises:
            AuditLogError: The file cannot be read, or is damaged (what the reading
                code raises on a row toolwire never writes becomes this error).
        """
        self.flush()
        if self.path == ":memory:":
            self.open()  # nothing to read from but this connection
        if self._conn is not None:
            with self._lock, log_errors(self.path):
                yield self._conn
            return
        conn = connect(self.path, readonly=True, timeout=self.timeout)
        try:
            with log_errors(self.path):  # a damaged file: one error naming it
                yield conn
        finally:
            conn.close()

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The latest runs, newest first (what ``toolwire log --json`` prints)."""
        from .query import list_runs

        with self.reading() as conn:
            return list_runs(conn, limit)

    def resolve(self, ref: str) -> str:
        """The full id of a run: ``ref`` is an id, an unambiguous prefix, or ``last``.

        Raises:
            RunNotFoundError: No run, or more than one, matches.
        """
        from .query import resolve_run

        with self.reading() as conn:
            return resolve_run(conn, ref, self.path)

    # -- the run store (toolwire.run.store.RunStore; toolwire.observe.durable) -------------

    def load_run(self, ref: str) -> SavedRun:
        """The logged run ``ref`` names, as a resumed run's state.

        Raises:
            RunNotFoundError: No run matches (the error lists the latest).
            AuditLogError: The file is missing, damaged or from a newer toolwire.
        """
        from .durable import load_saved

        with self.reading() as conn:
            return load_saved(conn, ref, self.path)

    def claim_run(self, saved: SavedRun, owner: str, by: str) -> None:
        """Make ``owner`` the run's one owner, with a ``resumed`` timeline row (committed).

        Raises:
            RunClaimedError: Another process claimed the run since it was loaded.
        """
        from .durable import claim, timeline_row

        self.open()
        self.flush()
        row = timeline_row(
            saved.run_id, time.time(), "resumed", {"owner": owner, "by": by, "from": saved.outcome}
        )
        conn = self._conn
        assert conn is not None
        with self._lock:
            try:
                taken = claim(conn, saved, owner, os.getpid(), row)
                current = conn.execute(
                    "SELECT owner, pid FROM runs WHERE run_id = ?", (saved.run_id,)
                ).fetchone()
            except sqlite3.Error as exc:
                raise describe_error(self.path, exc, self.timeout) from None
        if not taken:
            holder = current[0] or f"process {current[1]}" if current else "unknown"
            raise RunClaimedError(
                saved.run_id, str(holder), "was claimed by another process since it was loaded"
            )

    def record_approvals(self, run_id: str, approvals: Sequence[ApprovalRecord]) -> None:
        """Commit the answers to a paused run's calls to its timeline."""
        from .durable import approval_row

        self.open()
        for answer in approvals:
            self.write_now(approval_row(run_id, answer))

    def record_call_start(self, run_id: str, start: CallStart) -> None:
        """Commit a call's start row before it runs (blocking: call it off the event loop).

        The row goes through the writer thread, which commits it with whatever else has
        queued (the start rows of the batch's other calls, a finished call): the calls
        of a parallel batch wait for one commit, not one each (bench/bench_durable.py).

        A log that is not strict and cannot be written lets the call run unrecorded (the
        run goes on without its log, as for every row; the error is reported at the
        run's end); a strict log stops the call.

        Raises:
            AuditLogError: Only when ``strict``: the row could not be committed.
        """
        try:
            self._commit_start(run_id, start)
        except AuditLogError as exc:
            if self.strict:
                raise
            self.error = exc

    def _commit_start(self, run_id: str, start: CallStart) -> None:
        from .durable import call_start_row

        self.open()
        row = call_start_row(run_id, start)
        if self._writer is None:
            self.write_now(row)
            return
        self.submit(row, urgent=True)
        if not self.flush():
            raise AuditLogError(self.path, "the writer did not commit a call's start row in time")
        if self.error is not None:
            raise self.error

    def _counts(self, run_id: str) -> tuple[int, int, int, int, int]:
        """The run's last request number, call number and round in the file, its last
        progress number and the number of its last request's notices."""
        self.flush()
        conn = self._conn
        assert conn is not None
        with self._lock:
            requests, round_ = conn.execute(
                "SELECT COALESCE(MAX(seq), 0), COALESCE(MAX(round), 0) FROM requests"
                " WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            # Plain ``?`` placeholders: Python 3.12.0-3.12.3 take a numbered one bound
            # from a sequence for a named one and warn (an error in this suite).
            calls, progress, noted = conn.execute(
                "SELECT (SELECT COALESCE(MAX(seq), 0) FROM calls WHERE run_id = ?),"
                " (SELECT COALESCE(MAX(seq), 0) FROM progress WHERE run_id = ?),"
                " (SELECT COALESCE(MAX(seq), 0) FROM notices WHERE run_id = ? AND request = ?)",
                (run_id, run_id, run_id, requests),
            ).fetchone()
        return int(requests), int(calls), int(round_), int(progress), int(noted)

    def inspect(self, ref: str, *, loop_threshold: int = 2) -> dict[str, Any]:
        """The analysis of one run (what ``toolwire inspect RUN --json`` prints)."""
        from .inspect import inspect_run
        from .query import load_run

        with self.reading() as conn:
            return inspect_run(load_run(conn, ref, self.path), loop_threshold=loop_threshold)


def _ignore(event: object) -> None:
    """The listener of a run whose log could not be opened."""


def _commit(conn: sqlite3.Connection, rows: list[Row], redact: Redactor | None) -> None:
    # Everything is made bindable before the transaction begins: a row that cannot be
    # prepared fails the group without leaving a transaction open.
    groups = [
        (sql, [_bindable(params, redact) for _, params in group])
        for sql, group in itertools.groupby(rows, key=operator.itemgetter(0))
    ]
    conn.execute("BEGIN")
    try:
        for sql, params in groups:
            conn.executemany(sql, params)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _bindable(params: tuple[Any, ...], redact: Redactor | None) -> tuple[Any, ...]:
    """The row's parameters redacted, encoded and made bindable."""
    values = list(params)
    texts = [p for p in values if isinstance(p, str)]
    if redact is not None and redact.may_contain("\0".join(texts)):  # one check per row
        values = [redact(p) if isinstance(p, str) else p for p in values]
    # A structured value is redacted field by field as it is encoded (its signed
    # fields stay as they are), never again as text.
    return tuple(_bindable_value(p.encode(redact) if type(p) is JsonValue else p) for p in values)


def _bindable_value(value: Any) -> Any:
    if value is None or type(value) is float or type(value) is bytes:
        return value
    if isinstance(value, str):
        if not value.isascii() and _SURROGATE.search(value):  # not UTF-8 encodable
            return _SURROGATE.sub("\ufffd", value)
        return value
    if isinstance(value, int):
        return min(max(int(value), _INT_MIN), _INT_MAX)
    if isinstance(value, float):
        return float(value)
    return _bindable_value(str(value))


def _write_loop(
    owner: weakref.ReferenceType[AuditLog], rows: queue.SimpleQueue[Any], wake: threading.Event
) -> None:
    """The writer thread: commit whatever has queued up, as one transaction."""
    while True:
        group = [rows.get()]
        if not isinstance(group[0], _Flush) and group[0] is not _STOP:
            wake.wait(GROUP_WINDOW)  # let the rest of the burst arrive
        wake.clear()
        while len(group) < _MAX_GROUP:
            try:
                group.append(rows.get_nowait())
            except queue.Empty:
                break
        log = owner()
        try:
            writes = [item for item in group if isinstance(item, tuple)]
            if writes and log is not None and log._conn is not None:
                with log._lock:
                    _commit(log._conn, writes, log.redact)
        except Exception as exc:
            if log is not None:
                log.error = log._failure(exc)
        finally:
            for item in group:  # waiters are released whatever happened
                if isinstance(item, _Flush):
                    item.done.set()
        if log is None or any(item is _STOP for item in group):
            return
        del log
