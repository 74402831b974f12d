"""The audit log's schema: numbered migrations, applied in order, never edited.

``PRAGMA user_version`` holds the number of migrations applied. A new version of the
schema is a new entry appended to :data:`MIGRATIONS`; an existing entry is never
changed, so that every database, however old, reaches the same schema by running the
entries it has not run yet. A database with a higher version than this toolwire knows
was written by a newer toolwire: it is refused, not guessed at.
"""

from __future__ import annotations

import sqlite3

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "apply_migrations", "schema_version"]

MIGRATIONS: tuple[str, ...] = (
    # 1: runs, model requests and tool calls.
    """
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        started_at REAL NOT NULL,
        ended_at REAL,
        model TEXT NOT NULL,
        tools TEXT NOT NULL,          -- JSON: the tool definitions offered
        settings TEXT NOT NULL,       -- JSON: tool choice, limits, provider options
        prompt TEXT,                  -- the last user message at the start
        outcome TEXT NOT NULL,        -- running | ok | error | cancelled
        error TEXT,
        error_type TEXT,
        output TEXT,
        rounds INTEGER NOT NULL DEFAULT 0,
        requests INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE requests (
        run_id TEXT NOT NULL REFERENCES runs(run_id),
        seq INTEGER NOT NULL,         -- 1-based request number in the run
        round INTEGER NOT NULL,
        started_at REAL NOT NULL,
        first_event_at REAL,
        ended_at REAL NOT NULL,
        latency_ms REAL NOT NULL,
        messages TEXT NOT NULL,       -- JSON: the messages added since the previous request
        history_length INTEGER NOT NULL, -- messages sent in all
        tool_choice TEXT,
        finish_reason TEXT,
        text TEXT NOT NULL,
        reasoning TEXT NOT NULL,
        tool_calls TEXT NOT NULL,     -- JSON: [{id, name, arguments}] verbatim
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE calls (
        run_id TEXT NOT NULL REFERENCES runs(run_id),
        seq INTEGER NOT NULL,         -- order in which results arrived
        round INTEGER NOT NULL,
        idx INTEGER NOT NULL,         -- the provider's index in its turn
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,      -- as the model sent them
        repaired INTEGER NOT NULL,
        status TEXT NOT NULL,         -- ok | error | timeout | cancelled | not_executed | discarded
        result TEXT NOT NULL,         -- the full text, even when the model saw a cut one
        started_at REAL,
        ended_at REAL NOT NULL,
        latency_ms REAL,
        attempts INTEGER NOT NULL,
        failure_class TEXT,
        early INTEGER NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    """,
    # 2: cache and reasoning tokens, the writer's process id (a run still 'running'
    # whose process is gone was killed), why a call was discarded, and the indexes
    # the inspector's queries use.
    """
    ALTER TABLE runs ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN pid INTEGER;
    ALTER TABLE requests ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE requests ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE calls ADD COLUMN reason TEXT;
    CREATE INDEX runs_by_start ON runs (started_at);
    CREATE INDEX calls_by_tool ON calls (run_id, tool);
    """,
    # 3: a refused turn: its refusal text, and whether the model refused at all (a
    # provider may say so without words: Anthropic's stop_reason "refusal").
    """
    ALTER TABLE requests ADD COLUMN refusal TEXT NOT NULL DEFAULT '';
    ALTER TABLE requests ADD COLUMN refused INTEGER NOT NULL DEFAULT 0;
    """,
    # 4: a denied call's failure class is ``denied`` (toolwire.tools.outcomes), as
    # RunDiagnostics counted it; logs written before had none, so ``toolwire log`` did
    # not count such calls as failed. (Statuses and run outcomes: tools/outcomes.py;
    # a call's status may also be ``denied``, a run's outcome ``length``.)
    """
    UPDATE calls SET failure_class = 'denied' WHERE status = 'denied' AND failure_class IS NULL;
    """,
    # 5: progress a running call reported (ToolProgress: ToolContext.progress, or a
    # generator tool's yielded values but the last), in the order it arrived.
    """
    CREATE TABLE progress (
        run_id TEXT NOT NULL REFERENCES runs(run_id),
        seq INTEGER NOT NULL,         -- order of arrival in the run
        round INTEGER NOT NULL,
        idx INTEGER NOT NULL,         -- the provider's index of the call in its turn
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        at REAL NOT NULL,
        value TEXT NOT NULL,          -- the value's text, made as a result's is (redacted)
        PRIMARY KEY (run_id, seq)
    );
    """,
    # 6: the model that answered each request: a FallbackModel's answering model (the
    # run's ``model`` names the fallback chain); NULL in older logs (the run's model).
    """
    ALTER TABLE requests ADD COLUMN model TEXT;
    """,
    # 7: durable runs (toolwire.run.store). Each request's assistant message verbatim
    # (provider parts and signatures: a resumed run sends the last turn back as it
    # came), the process that owns a resumed run, and the run's timeline: a start row
    # committed before each call that may not run twice, pauses with the calls they
    # wait for, approvals (who answered what, when) and resumes. A call's status may
    # be ``interrupted`` and a run's outcome ``paused``.
    """
    ALTER TABLE requests ADD COLUMN message TEXT;
    ALTER TABLE runs ADD COLUMN owner TEXT;
    CREATE TABLE timeline (
        run_id TEXT NOT NULL REFERENCES runs(run_id),
        seq INTEGER NOT NULL,
        at REAL NOT NULL,
        kind TEXT NOT NULL,
        round INTEGER,
        call_id TEXT,
        detail TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    """,
    # 8: images in tool results and user messages, each stored once by its SHA-256; a
    # call row and a logged message name them in their ``parts`` (JSON: text parts and
    # {kind: image, sha256, media_type, bytes}).
    """
    CREATE TABLE images (
        sha256 TEXT PRIMARY KEY,      -- hex SHA-256 of the bytes
        media_type TEXT NOT NULL,
        data BLOB NOT NULL
    );
    ALTER TABLE calls ADD COLUMN parts TEXT; -- JSON: the result's parts, when it has images
    """,
    # 9: a request `toolwire serve` proxied (one run each): the upstream, the HTTP status
    # the client got, the upstream's body as received, what the client received, and
    # the notices it was told (JSON).
    """
    CREATE TABLE proxied (
        run_id TEXT PRIMARY KEY REFERENCES runs(run_id),
        upstream TEXT NOT NULL,
        status INTEGER NOT NULL,
        raw TEXT,
        received TEXT NOT NULL,
        notices TEXT NOT NULL
    );
    """,
    # 10: a request that failed (RequestFailed): its row holds the error instead of a
    # turn (empty text, no calls, no tokens); ``error_status`` is the provider's HTTP
    # status, when it answered one. Readers that rebuild turns skip these rows.
    """
    ALTER TABLE requests ADD COLUMN error TEXT;
    ALTER TABLE requests ADD COLUMN error_type TEXT;
    ALTER TABLE requests ADD COLUMN error_status INTEGER;
    """,
    # 11: a retried call's attempts in time: for each attempt that failed and was
    # retried, when it failed and when the next one began, after the backoff (JSON
    # [[failed_at, next_at], ...]; NULL: it ran once, or the log is older).
    """
    ALTER TABLE calls ADD COLUMN retried TEXT;
    """,
    # 12: the notices of each request (toolwire.turn.Notice: a repaired or dropped call,
    # text shaped like a call, a retry, a generation stopped for repeating, ...), in the
    # order the run heard them: what labelled an answer or dropped a call. ``request``
    # is the ``requests`` row's ``seq``; ``idx`` the provider's index of the call a
    # notice concerns (NULL: none). Older logs have none. And a call whose images a
    # provider's 400 refused (toolwire.run.refused_images): ``images_refused`` 1, its
    # status, failure class and result those of the error result that replaced the
    # tool's in the history (what the model read, as RunDiagnostics counts it); its
    # ``parts`` stay what the tool returned (a replay answers the call with them).
    """
    ALTER TABLE calls ADD COLUMN images_refused INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE notices (
        run_id TEXT NOT NULL REFERENCES runs(run_id),
        request INTEGER NOT NULL,     -- the request's seq
        seq INTEGER NOT NULL,         -- 1-based order within the request
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        idx INTEGER,
        PRIMARY KEY (run_id, request, seq)
    );
    """,
)
"""Each entry moves the schema one version up (entry ``n - 1`` makes version ``n``)."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The version this toolwire writes."""


def schema_version(conn: sqlite3.Connection) -> int:
    """The database's schema version (0: empty)."""
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def apply_migrations(conn: sqlite3.Connection, *, upto: int = SCHEMA_VERSION) -> int:
    """Apply the migrations the database has not run yet, each in its own transaction.

    Args:
        conn: A connection in autocommit mode (``isolation_level=None``).
        upto: Stop at this version (tests build old databases with it).

    Returns:
        The version before migrating. A version above ``upto`` is left alone; the
        caller decides whether it is acceptable.
    """
    before = schema_version(conn)
    for version in range(before + 1, upto + 1):
        statements = [s for s in MIGRATIONS[version - 1].split(";") if s.strip()]
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return before
