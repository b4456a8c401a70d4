"""The server's stores: :class:`SQLiteStore` (the embedded default) and
:class:`PostgresStore` (``postgresql://...``, psycopg 3), behind one interface,
:class:`Store`; :func:`open_store` picks one from a ``--db`` text.

A game is stored as its header (the record's JSON with no action: rules, seed, the
initial hands, the seats' labels) and one row per action, appended as the game goes.
Storing an action therefore costs the same at move 1 and at move 200, and every
stored change is a compare-and-swap: :meth:`Store.append` and :meth:`Store.truncate`
name the version they were computed from, and in the same transaction that writes
the rows, the game's version moves on only if it is still that one; otherwise
nothing is written and :class:`Conflict` is raised. Two server processes on one
database can therefore never both accept an action on the same state: the later one
loses the race, reloads, and tries again or refuses (see ``games.py``).

A game's version is +1 per stored action and +1 per undo; ``resets`` counts undos
(an undo deletes rows, so a process that knew the game before one must reload it
from its header rather than read only the new rows).

Seat tokens are kept only as SHA-256 digests: a restarted server recognises the same
tokens, and a copy of the database does not hand them out.

SQLite runs in WAL mode with ``synchronous=NORMAL`` and a busy timeout (several
processes may share the file; a write waits for the others' write transactions): a
commit is in the write-ahead log before the server answers, so it survives the server
process being killed at any moment; an operating-system crash or power cut may lose
the last commits (never the file's consistency).

Every method is safe to call from several threads.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

_T = TypeVar("_T")

__all__ = [
    "Conflict",
    "GameRow",
    "Head",
    "PostgresStore",
    "SQLiteStore",
    "Store",
    "StoreError",
    "open_store",
    "token_digest",
]

SCHEMA_VERSION = 3
BUSY_TIMEOUT_MS = 30_000  # how long a SQLite write waits for another process's transaction
NOTIFY_CHANNEL = "qwirkle_games"  # PostgreSQL: every stored change notifies '<id> <version>'

_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id       TEXT PRIMARY KEY,
    created  REAL NOT NULL,           -- seconds since the epoch
    updated  REAL NOT NULL,
    version  INTEGER NOT NULL,        -- +1 per stored action, +1 per undo
    actions  INTEGER NOT NULL,        -- how many action rows the game has
    resets   INTEGER NOT NULL,        -- how many undos (each deletes action rows)
    over     INTEGER NOT NULL,        -- 1 once the game has ended
    header   TEXT NOT NULL,           -- the record's JSON without its actions
    deal     TEXT,                    -- how the deal's seed was made (JSON; NULL: before schema 3)
    clock    TEXT,                    -- the time control and the seats' clocks (JSON; NULL: none)
    deadline REAL,                    -- when the seat to move runs out of time (NULL: no clock runs)
    creator  TEXT                     -- the address that created it (guard.client_key; NULL: unknown)
);
CREATE TABLE IF NOT EXISTS seats (
    game_id  TEXT NOT NULL REFERENCES games(id),
    seat     INTEGER NOT NULL,
    agent    TEXT NOT NULL,           -- 'human' or an agent spec
    token    TEXT,                    -- SHA-256 hex digest of the seat's token; NULL for agents
    PRIMARY KEY (game_id, seat)
);
CREATE TABLE IF NOT EXISTS actions (
    game_id  TEXT NOT NULL REFERENCES games(id),
    seq      INTEGER NOT NULL,        -- 0, 1, 2, ...: the action's index in the game
    action   TEXT NOT NULL,           -- the record's action object (JSON)
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS requests (
    game_id  TEXT NOT NULL REFERENCES games(id),
    seat     INTEGER NOT NULL,
    id       TEXT NOT NULL,           -- the client's action id
    answer   TEXT NOT NULL,           -- the answer the action got (JSON)
    PRIMARY KEY (game_id, seat, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS games_deadline ON games (deadline) WHERE deadline IS NOT NULL;
CREATE INDEX IF NOT EXISTS games_updated ON games (over, updated);
CREATE TABLE IF NOT EXISTS sockets (
    game_id  TEXT NOT NULL,
    owner    TEXT NOT NULL,           -- the server process that holds the connections
    count    INTEGER NOT NULL,        -- its WebSocket connections to the game
    seen     REAL NOT NULL,           -- when the process last said it still holds them
    PRIMARY KEY (game_id, owner)
) WITHOUT ROWID;
"""

# schema 2 -> 3: the deal, the clocks, the clients' action ids (the tables are made by the schema)
_V3_COLUMNS = (("deal", "TEXT"), ("clock", "TEXT"), ("deadline", "{real}"))

_POSTGRES_SCHEMA = """
CREATE TABLE IF NOT EXISTS qwirkle_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id       TEXT PRIMARY KEY,
    created  DOUBLE PRECISION NOT NULL,
    updated  DOUBLE PRECISION NOT NULL,
    version  BIGINT NOT NULL,
    actions  INTEGER NOT NULL,
    resets   INTEGER NOT NULL,
    over     BOOLEAN NOT NULL,
    header   TEXT NOT NULL,
    deal     TEXT,
    clock    TEXT,
    deadline DOUBLE PRECISION
);
CREATE TABLE IF NOT EXISTS seats (
    game_id  TEXT NOT NULL REFERENCES games(id),
    seat     INTEGER NOT NULL,
    agent    TEXT NOT NULL,
    token    TEXT,
    PRIMARY KEY (game_id, seat)
);
CREATE TABLE IF NOT EXISTS actions (
    game_id  TEXT NOT NULL REFERENCES games(id),
    seq      INTEGER NOT NULL,
    action   TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
);
ALTER TABLE games ADD COLUMN IF NOT EXISTS deal TEXT;
ALTER TABLE games ADD COLUMN IF NOT EXISTS clock TEXT;
ALTER TABLE games ADD COLUMN IF NOT EXISTS deadline DOUBLE PRECISION;
ALTER TABLE games ADD COLUMN IF NOT EXISTS creator TEXT;
CREATE INDEX IF NOT EXISTS games_creator ON games (creator) WHERE NOT over;
CREATE TABLE IF NOT EXISTS requests (
    game_id  TEXT NOT NULL REFERENCES games(id),
    seat     INTEGER NOT NULL,
    id       TEXT NOT NULL,
    answer   TEXT NOT NULL,
    PRIMARY KEY (game_id, seat, id)
);
CREATE INDEX IF NOT EXISTS games_deadline ON games (deadline) WHERE deadline IS NOT NULL;
CREATE INDEX IF NOT EXISTS games_updated ON games (over, updated);
CREATE TABLE IF NOT EXISTS sockets (
    game_id  TEXT NOT NULL,
    owner    TEXT NOT NULL,
    count    INTEGER NOT NULL,
    seen     DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (game_id, owner)
);
"""


def token_digest(token: str) -> str:
    """The stored form of a seat token: its SHA-256 digest in hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class StoreError(Exception):
    """A database that cannot be used: a wrong schema version, a bad ``--db`` text."""


class Conflict(Exception):
    """The stored game is no longer at the version a change was computed from (another
    process stored a change first); nothing was written."""


@dataclass(frozen=True)
class Head:
    """Where a stored game stands: ``version``, ``actions`` (rows), ``resets`` (undos)."""

    version: int
    actions: int
    resets: int


@dataclass(frozen=True)
class GameRow:
    """One stored game: ``agents`` (one label per seat), ``digests`` (the token digest
    of each human seat, None for agents), ``header`` (JSON text), ``actions`` (the
    action rows from ``start`` on, JSON text each), its :class:`Head`, ``deal`` (how
    its seed was made, JSON text) and ``clock`` (its time control and clocks, JSON
    text; None for a game without one)."""

    id: str
    agents: tuple[str, ...]
    digests: tuple[str | None, ...]
    header: str
    actions: tuple[str, ...]
    head: Head
    over: bool
    start: int = 0
    deal: str | None = None
    clock: str | None = None

    @property
    def record(self) -> str:
        """The game's record (JSON text): the header with the action rows (which must
        have been read from ``start`` 0)."""
        if self.start:
            raise ValueError(f"the row holds the actions from {self.start} on, not the whole record")
        data = json.loads(self.header)
        data["actions"] = [json.loads(a) for a in self.actions]
        return json.dumps(data)


class Store(ABC):
    """Where the games are kept. Every write is one transaction; :meth:`append` and
    :meth:`truncate` are compare-and-swaps on the game's version (:class:`Conflict`)."""

    url: str
    inline_reads = False
    """True where :meth:`head` is a local read of microseconds (SQLite), which the
    server then makes on its event loop instead of in a worker thread."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def create(
        self,
        game_id: str,
        agents: Sequence[str],
        digests: Sequence[str | None],
        header: str,
        deal: str | None = None,
        clock: str | None = None,
        deadline: float | None = None,
        creator: str | None = None,
    ) -> Head:
        """Store a new game with no action; returns its head (version 1). ``deal``,
        ``clock``: JSON texts; ``deadline``: seconds since the epoch (see :meth:`due`);
        ``creator``: the client that created it (for :meth:`running`)."""

    @abstractmethod
    def head(self, game_id: str) -> Head | None:
        """The game's :class:`Head` (one indexed read), or None for no such game."""

    @abstractmethod
    def load(self, game_id: str, start: int = 0) -> GameRow | None:
        """The stored game with its action rows from ``start`` on (one transaction, so
        the rows and the head agree), or None."""

    @abstractmethod
    def append(
        self,
        game_id: str,
        expected: Head,
        actions: Sequence[str],
        over: bool,
        request: tuple[int, str, str] | None = None,
        clock: tuple[str, float | None] | None = None,
    ) -> Head:
        """Append ``actions`` (JSON texts) as rows ``expected.actions``, ... if the game
        is still at ``expected.version``; returns the new head. Raises :class:`Conflict`
        (also when ``request`` names an action id the seat has used already).

        In the same transaction: ``request`` ``(seat, action id, answer JSON)`` is
        stored for :meth:`answer`; ``clock`` ``(clock JSON, deadline)`` replaces the
        game's clock and deadline."""

    @abstractmethod
    def answer(self, game_id: str, seat: int, action_id: str) -> str | None:
        """The answer (JSON text) stored with the seat's action ``action_id``, or None."""

    @abstractmethod
    def due(self, now: float, limit: int = 100) -> list[str]:
        """The ids of running games whose deadline is ``now`` or earlier (at most ``limit``)."""

    @abstractmethod
    def truncate(self, game_id: str, expected: Head, keep: int) -> Head:
        """Delete the action rows from ``keep`` on (an undo) if the game is still at
        ``expected.version``; returns the new head. Raises :class:`Conflict`."""

    @abstractmethod
    def versions(self, game_ids: Sequence[str]) -> dict[str, int]:
        """``{id: version}`` of the stored games among ``game_ids`` (for the pushes of
        changes made by other processes)."""

    @abstractmethod
    def count(self) -> int:
        """The number of stored games."""

    @abstractmethod
    def running(self, creator: str | None = None) -> int:
        """The number of stored games that are not over (created by ``creator`` when given)."""

    @abstractmethod
    def stale(self, before: float, limit: int = 100) -> list[str]:
        """Up to ``limit`` ids of games last changed before ``before`` (seconds since
        the epoch)."""

    @abstractmethod
    def delete(self, game_id: str, before: float) -> bool:
        """Delete the game (its seats, actions and sockets) if it was last changed
        before ``before``; whether it was."""

    @abstractmethod
    def join(self, game_id: str, owner: str, cap: int, fresh: float) -> bool:
        """Count one more WebSocket connection of ``owner`` (a server process) to the
        game if the connections of every process, counting only the processes that
        said they hold theirs since ``fresh`` (and ``owner``), are fewer than ``cap``;
        whether it was counted. One transaction: processes racing for the last place
        get it once."""

    @abstractmethod
    def leave(self, game_id: str, owner: str) -> None:
        """Count one WebSocket connection of ``owner`` to the game less."""

    @abstractmethod
    def hold(self, owner: str) -> None:
        """Say that ``owner`` still holds its connections (every game's): each process
        does every few seconds; the counts of a process that stopped saying so (killed)
        stop counting."""

    @abstractmethod
    def release(self, owner: str) -> None:
        """Forget every connection of ``owner`` (a process that stops)."""


def open_store(db: str | os.PathLike[str]) -> Store:
    """The store of a ``--db`` text: ``postgresql://...`` (or ``postgres://``) is a
    :class:`PostgresStore`; anything else a SQLite file path (``":memory:"``: a
    throwaway store)."""
    text = os.fspath(db)
    if text.startswith(("postgresql://", "postgres://")):
        return PostgresStore(text)
    if "://" in text:
        raise StoreError(f"--db {text!r}: a SQLite file path or a postgresql:// URL")
    return SQLiteStore(text)


def _action_texts(actions: Sequence[str]) -> list[str]:
    for a in actions:
        if not isinstance(a, str):
            raise TypeError(f"an action row is JSON text, not {type(a).__name__}")
    return list(actions)


# -- SQLite -----------------------------------------------------------------------------


class SQLiteStore(Store):
    """A SQLite database of games at ``path`` (created if missing; several processes
    may open the same file). A version 1 database (one record per game) is converted
    on opening. Raises ``sqlite3.Error`` or :class:`StoreError` for a file that is not
    such a database."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.url = os.fspath(path)
        self._db = self._connect()  # the writes, under _lock
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=OFF")  # a conversion renames a referenced table
        self._transaction(self._migrate)
        with self._lock:
            self._db.execute("PRAGMA foreign_keys=ON")
        # reads go through connections of their own (a pool): in WAL mode they wait for no write
        self.inline_reads = self.url != ":memory:" and not self.url.startswith("file:")
        self._idle: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.url, check_same_thread=False, isolation_level=None, timeout=30)
        db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        return db

    @contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        """An idle read connection (opened when none is; the write connection for
        ``:memory:``, which other connections cannot see)."""
        if not self.inline_reads:
            with self._lock:
                yield self._db
            return
        try:
            db = self._idle.get_nowait()
        except queue.Empty:
            db = self._connect()
            with self._readers_lock:
                self._readers.append(db)
        try:
            yield db
        finally:
            self._idle.put(db)

    def _migrate(self, db: sqlite3.Connection) -> None:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, 1, 2, SCHEMA_VERSION):
            raise StoreError(f"{self.url}: database schema version {version}; this server reads {SCHEMA_VERSION}")
        if version == 1:
            _migrate_v1(db)
        elif version == 2:
            for name, kind in _V3_COLUMNS:
                db.execute(f"ALTER TABLE games ADD COLUMN {name} {kind.format(real='REAL')}")
        _script(db, _SQLITE_SCHEMA)
        if "creator" not in {row[1] for row in db.execute("PRAGMA table_info(games)")}:
            db.execute("ALTER TABLE games ADD COLUMN creator TEXT")  # a column older servers ignore
        db.execute("CREATE INDEX IF NOT EXISTS games_creator ON games (creator) WHERE over = 0")
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        with self._readers_lock:
            for db in self._readers:
                db.close()
            self._readers.clear()
        with self._lock:
            self._db.close()

    def _transaction(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = fn(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return result

    def create(
        self,
        game_id: str,
        agents: Sequence[str],
        digests: Sequence[str | None],
        header: str,
        deal: str | None = None,
        clock: str | None = None,
        deadline: float | None = None,
        creator: str | None = None,
    ) -> Head:
        now = time.time()

        def insert(db: sqlite3.Connection) -> Head:
            db.execute(
                "INSERT INTO games (id, created, updated, version, actions, resets, over, header, deal, clock, "
                "deadline, creator) VALUES (?, ?, ?, 1, 0, 0, 0, ?, ?, ?, ?, ?)",
                (game_id, now, now, header, deal, clock, deadline, creator),
            )
            db.executemany(
                "INSERT INTO seats (game_id, seat, agent, token) VALUES (?, ?, ?, ?)",
                [(game_id, i, a, d) for i, (a, d) in enumerate(zip(agents, digests))],
            )
            return Head(1, 0, 0)

        return self._transaction(insert)

    def head(self, game_id: str) -> Head | None:
        with self._reader() as db:
            row = db.execute("SELECT version, actions, resets FROM games WHERE id = ?", (game_id,)).fetchone()
        return None if row is None else Head(*row)

    def load(self, game_id: str, start: int = 0) -> GameRow | None:
        def read(db: sqlite3.Connection) -> GameRow | None:
            row = db.execute(
                "SELECT version, actions, resets, over, header, deal, clock FROM games WHERE id = ?", (game_id,)
            ).fetchone()
            if row is None:
                return None
            seats = db.execute("SELECT agent, token FROM seats WHERE game_id = ? ORDER BY seat", (game_id,)).fetchall()
            actions = db.execute(
                "SELECT action FROM actions WHERE game_id = ? AND seq >= ? ORDER BY seq", (game_id, start)
            ).fetchall()
            return GameRow(
                game_id,
                tuple(a for a, _ in seats),
                tuple(d for _, d in seats),
                row[4],
                tuple(a for (a,) in actions),
                Head(row[0], row[1], row[2]),
                bool(row[3]),
                start,
                row[5],
                row[6],
            )

        with self._reader() as db:  # a read transaction: the rows and the head of one moment
            db.execute("BEGIN")
            try:
                return read(db)
            finally:
                db.execute("COMMIT")

    def append(
        self,
        game_id: str,
        expected: Head,
        actions: Sequence[str],
        over: bool,
        request: tuple[int, str, str] | None = None,
        clock: tuple[str, float | None] | None = None,
    ) -> Head:
        texts = _action_texts(actions)
        new = Head(expected.version + len(texts), expected.actions + len(texts), expected.resets)

        def write(db: sqlite3.Connection) -> Head:
            cur = db.execute(
                "UPDATE games SET version = ?, actions = ?, over = ?, updated = ? "
                "WHERE id = ? AND version = ? AND actions = ? AND resets = ?",
                (new.version, new.actions, int(over), time.time(), game_id, *_cas(expected)),
            )
            if cur.rowcount != 1:
                raise Conflict(game_id)
            db.executemany(
                "INSERT INTO actions (game_id, seq, action) VALUES (?, ?, ?)",
                [(game_id, expected.actions + i, a) for i, a in enumerate(texts)],
            )
            if clock is not None:
                db.execute("UPDATE games SET clock = ?, deadline = ? WHERE id = ?", (*clock, game_id))
            if request is not None:
                try:
                    db.execute(
                        "INSERT INTO requests (game_id, seat, id, answer) VALUES (?, ?, ?, ?)", (game_id, *request)
                    )
                except sqlite3.IntegrityError:
                    raise Conflict(game_id) from None  # the id was used: the transaction is rolled back
            return new

        return self._transaction(write)

    def answer(self, game_id: str, seat: int, action_id: str) -> str | None:
        with self._reader() as db:
            row = db.execute(
                "SELECT answer FROM requests WHERE game_id = ? AND seat = ? AND id = ?", (game_id, seat, action_id)
            ).fetchone()
        return None if row is None else str(row[0])

    def due(self, now: float, limit: int = 100) -> list[str]:
        with self._reader() as db:
            rows = db.execute(
                "SELECT id FROM games WHERE deadline IS NOT NULL AND deadline <= ? AND over = 0 "
                "ORDER BY deadline LIMIT ?",
                (now, limit),
            ).fetchall()
        return [r[0] for r in rows]

    def truncate(self, game_id: str, expected: Head, keep: int) -> Head:
        if not 0 <= keep <= expected.actions:
            raise ValueError(f"keep {keep} is not in 0..{expected.actions}")
        new = Head(expected.version + 1, keep, expected.resets + 1)

        def write(db: sqlite3.Connection) -> Head:
            cur = db.execute(
                "UPDATE games SET version = ?, actions = ?, resets = ?, over = 0, updated = ? "
                "WHERE id = ? AND version = ? AND actions = ? AND resets = ?",
                (new.version, new.actions, new.resets, time.time(), game_id, *_cas(expected)),
            )
            if cur.rowcount != 1:
                raise Conflict(game_id)
            db.execute("DELETE FROM actions WHERE game_id = ? AND seq >= ?", (game_id, keep))
            return new

        return self._transaction(write)

    def versions(self, game_ids: Sequence[str]) -> dict[str, int]:
        ids = list(game_ids)
        out: dict[str, int] = {}
        with self._reader() as db:
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                marks = ",".join("?" * len(chunk))
                out.update(db.execute(f"SELECT id, version FROM games WHERE id IN ({marks})", chunk).fetchall())
        return out

    def count(self) -> int:
        with self._reader() as db:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def running(self, creator: str | None = None) -> int:
        with self._reader() as db:
            if creator is not None:
                sql = "SELECT COUNT(*) FROM games WHERE over = 0 AND creator = ?"
                return int(db.execute(sql, (creator,)).fetchone()[0])
            return int(db.execute("SELECT COUNT(*) FROM games WHERE over = 0").fetchone()[0])

    def stale(self, before: float, limit: int = 100) -> list[str]:
        with self._reader() as db:
            rows = db.execute(
                "SELECT id FROM games WHERE over IN (0, 1) AND updated < ? ORDER BY updated LIMIT ?", (before, limit)
            ).fetchall()
        return [r[0] for r in rows]

    def delete(self, game_id: str, before: float) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            row = db.execute("SELECT updated FROM games WHERE id = ?", (game_id,)).fetchone()
            if row is None or row[0] >= before:
                return False
            for table in ("actions", "seats", "sockets", "requests"):
                db.execute(f"DELETE FROM {table} WHERE game_id = ?", (game_id,))
            db.execute("DELETE FROM games WHERE id = ?", (game_id,))
            return True

        return self._transaction(write)

    def join(self, game_id: str, owner: str, cap: int, fresh: float) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            (held,) = db.execute(
                "SELECT COALESCE(SUM(count), 0) FROM sockets WHERE game_id = ? AND (owner = ? OR seen >= ?)",
                (game_id, owner, fresh),
            ).fetchone()
            if held >= cap:
                return False
            db.execute(
                "INSERT INTO sockets (game_id, owner, count, seen) VALUES (?, ?, 1, ?) "
                "ON CONFLICT (game_id, owner) DO UPDATE SET count = count + 1, seen = excluded.seen",
                (game_id, owner, time.time()),
            )
            return True

        return self._transaction(write)

    def leave(self, game_id: str, owner: str) -> None:
        def write(db: sqlite3.Connection) -> None:
            db.execute("UPDATE sockets SET count = count - 1 WHERE game_id = ? AND owner = ?", (game_id, owner))
            db.execute("DELETE FROM sockets WHERE game_id = ? AND owner = ? AND count <= 0", (game_id, owner))

        self._transaction(write)

    def hold(self, owner: str) -> None:
        self._transaction(lambda db: db.execute("UPDATE sockets SET seen = ? WHERE owner = ?", (time.time(), owner)))

    def release(self, owner: str) -> None:
        self._transaction(lambda db: db.execute("DELETE FROM sockets WHERE owner = ?", (owner,)))


def _script(db: sqlite3.Connection, script: str) -> None:
    """Run the statements of ``script`` in the open transaction (``executescript``
    would commit it first)."""
    text = "\n".join(line.split("--")[0] for line in script.splitlines())
    for statement in text.split(";"):
        if statement.strip():
            db.execute(statement)


def _cas(head: Head) -> tuple[int, int, int]:
    return head.version, head.actions, head.resets


def _migrate_v1(db: sqlite3.Connection) -> None:
    """Convert a version 1 database (``games.record``: the whole record per game) into
    header + action rows, in the opening transaction."""
    db.execute("PRAGMA legacy_alter_table=ON")  # seats go on referring to "games", the new table
    db.execute("ALTER TABLE games RENAME TO games_v1")
    db.execute("PRAGMA legacy_alter_table=OFF")
    _script(db, _SQLITE_SCHEMA)
    rows = db.execute("SELECT id, created, updated, version, over, record FROM games_v1").fetchall()
    for game_id, created, updated, version, over, record in rows:
        data = json.loads(record)
        actions = data.get("actions") or []
        header = json.dumps({**data, "actions": [], "final_scores": None, "winner": None})
        db.execute(
            "INSERT INTO games (id, created, updated, version, actions, resets, over, header) "
            "VALUES (?, ?, ?, ?, ?, 0, ?, ?)",
            (game_id, created, updated, version, len(actions), over, header),
        )
        db.executemany(
            "INSERT INTO actions (game_id, seq, action) VALUES (?, ?, ?)",
            [(game_id, i, json.dumps(a)) for i, a in enumerate(actions)],
        )
    db.execute("DROP TABLE games_v1")
    if db.execute("PRAGMA foreign_key_check").fetchone() is not None:
        raise StoreError("the converted database does not hold together (PRAGMA foreign_key_check)")


# -- PostgreSQL -------------------------------------------------------------------------


class PostgresStore(Store):
    """The games in a PostgreSQL database (``postgresql://user@host/db``, any libpq
    connection URL), through psycopg 3 (``pip install 'qwirkle-core[postgres]'``).
    Up to ``pool`` connections are opened as threads need them. Every stored change
    also sends ``NOTIFY qwirkle_games, '<id> <version>'`` (delivered at commit).
    Raises :class:`StoreError` if psycopg is missing or the database cannot be used."""

    def __init__(self, url: str, pool: int = 8) -> None:
        try:
            import psycopg
        except ImportError:
            raise StoreError("a postgresql:// store needs psycopg 3: pip install 'qwirkle-core[postgres]'") from None
        self.url = url
        self._psycopg = psycopg
        self._pool: queue.LifoQueue[Any] = queue.LifoQueue()
        self._size = pool
        self._opened = 0
        self._open_lock = threading.Lock()
        self._all: list[Any] = []
        try:
            with self._conn() as db:
                with db.transaction():
                    db.execute("SELECT pg_advisory_xact_lock(7470019)")  # one process creates the schema
                    db.execute(_POSTGRES_SCHEMA)
                    row = db.execute("SELECT version FROM qwirkle_schema").fetchone()
                    if row is None:
                        db.execute("INSERT INTO qwirkle_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
                    elif row[0] == 2:  # the schema's ADD COLUMN IF NOT EXISTS made it version 3
                        db.execute("UPDATE qwirkle_schema SET version = %s", (SCHEMA_VERSION,))
                    elif row[0] != SCHEMA_VERSION:
                        raise StoreError(f"database schema version {row[0]}; this server reads {SCHEMA_VERSION}")
        except psycopg.Error as e:
            self.close()
            raise StoreError(f"PostgreSQL store {_safe(url)}: {e}".strip()) from None

    def _connect(self) -> Any:
        db = self._psycopg.connect(self.url, autocommit=True)
        self._all.append(db)
        return db

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        try:
            db = self._pool.get_nowait()
        except queue.Empty:
            with self._open_lock:
                can_open = self._opened < self._size
                if can_open:
                    self._opened += 1
            if can_open:
                try:
                    db = self._connect()
                except BaseException:
                    with self._open_lock:
                        self._opened -= 1
                    raise
            else:
                db = self._pool.get(timeout=60)
        try:
            yield db
        except self._psycopg.OperationalError:
            db.close()  # a broken connection is not given back
            with self._open_lock:
                self._opened -= 1
            raise
        except BaseException:
            self._pool.put(db)  # a refused change (Conflict...): the transaction was rolled back
            raise
        self._pool.put(db)

    def close(self) -> None:
        for db in self._all:
            try:
                db.close()
            except Exception:  # noqa: BLE001 - closing what may already be broken
                pass
        self._all.clear()

    def create(
        self,
        game_id: str,
        agents: Sequence[str],
        digests: Sequence[str | None],
        header: str,
        deal: str | None = None,
        clock: str | None = None,
        deadline: float | None = None,
        creator: str | None = None,
    ) -> Head:
        now = time.time()
        with self._conn() as db, db.transaction():
            db.execute(
                "INSERT INTO games (id, created, updated, version, actions, resets, over, header, deal, clock, "
                "deadline, creator) VALUES (%s, %s, %s, 1, 0, 0, false, %s, %s, %s, %s, %s)",
                (game_id, now, now, header, deal, clock, deadline, creator),
            )
            with db.cursor() as cur:
                cur.executemany(
                    "INSERT INTO seats (game_id, seat, agent, token) VALUES (%s, %s, %s, %s)",
                    [(game_id, i, a, d) for i, (a, d) in enumerate(zip(agents, digests))],
                )
        return Head(1, 0, 0)

    def head(self, game_id: str) -> Head | None:
        with self._conn() as db:
            row = db.execute("SELECT version, actions, resets FROM games WHERE id = %s", (game_id,)).fetchone()
        return None if row is None else Head(int(row[0]), int(row[1]), int(row[2]))

    def load(self, game_id: str, start: int = 0) -> GameRow | None:
        with self._conn() as db, db.transaction():
            db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            row = db.execute(
                "SELECT version, actions, resets, over, header, deal, clock FROM games WHERE id = %s", (game_id,)
            ).fetchone()
            if row is None:
                return None
            seats = db.execute("SELECT agent, token FROM seats WHERE game_id = %s ORDER BY seat", (game_id,)).fetchall()
            actions = db.execute(
                "SELECT action FROM actions WHERE game_id = %s AND seq >= %s ORDER BY seq", (game_id, start)
            ).fetchall()
        return GameRow(
            game_id,
            tuple(a for a, _ in seats),
            tuple(d for _, d in seats),
            row[4],
            tuple(a for (a,) in actions),
            Head(int(row[0]), int(row[1]), int(row[2])),
            bool(row[3]),
            start,
            row[5],
            row[6],
        )

    def append(
        self,
        game_id: str,
        expected: Head,
        actions: Sequence[str],
        over: bool,
        request: tuple[int, str, str] | None = None,
        clock: tuple[str, float | None] | None = None,
    ) -> Head:
        texts = _action_texts(actions)
        new = Head(expected.version + len(texts), expected.actions + len(texts), expected.resets)
        try:
            with self._conn() as db, db.transaction():
                self._append(db, game_id, expected, new, texts, over, request, clock)
        except self._psycopg.errors.UniqueViolation:
            raise Conflict(game_id) from None  # the action id was used: rolled back
        return new

    def _append(
        self,
        db: Any,
        game_id: str,
        expected: Head,
        new: Head,
        texts: list[str],
        over: bool,
        request: tuple[int, str, str] | None,
        clock: tuple[str, float | None] | None,
    ) -> None:
        cur = db.execute(
            "UPDATE games SET version = %s, actions = %s, over = %s, updated = %s "
            "WHERE id = %s AND version = %s AND actions = %s AND resets = %s",
            (new.version, new.actions, over, time.time(), game_id, *_cas(expected)),
        )
        if cur.rowcount != 1:
            raise Conflict(game_id)
        with db.cursor() as c:
            c.executemany(
                "INSERT INTO actions (game_id, seq, action) VALUES (%s, %s, %s)",
                [(game_id, expected.actions + i, a) for i, a in enumerate(texts)],
            )
        if clock is not None:
            db.execute("UPDATE games SET clock = %s, deadline = %s WHERE id = %s", (*clock, game_id))
        if request is not None:
            db.execute("INSERT INTO requests (game_id, seat, id, answer) VALUES (%s, %s, %s, %s)", (game_id, *request))
        db.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, f"{game_id} {new.version}"))

    def answer(self, game_id: str, seat: int, action_id: str) -> str | None:
        with self._conn() as db:
            row = db.execute(
                "SELECT answer FROM requests WHERE game_id = %s AND seat = %s AND id = %s", (game_id, seat, action_id)
            ).fetchone()
        return None if row is None else str(row[0])

    def due(self, now: float, limit: int = 100) -> list[str]:
        with self._conn() as db:
            rows = db.execute(
                "SELECT id FROM games WHERE deadline IS NOT NULL AND deadline <= %s AND NOT over "
                "ORDER BY deadline LIMIT %s",
                (now, limit),
            ).fetchall()
        return [r[0] for r in rows]

    def truncate(self, game_id: str, expected: Head, keep: int) -> Head:
        if not 0 <= keep <= expected.actions:
            raise ValueError(f"keep {keep} is not in 0..{expected.actions}")
        new = Head(expected.version + 1, keep, expected.resets + 1)
        with self._conn() as db, db.transaction():
            cur = db.execute(
                "UPDATE games SET version = %s, actions = %s, resets = %s, over = false, updated = %s "
                "WHERE id = %s AND version = %s AND actions = %s AND resets = %s",
                (new.version, new.actions, new.resets, time.time(), game_id, *_cas(expected)),
            )
            if cur.rowcount != 1:
                raise Conflict(game_id)
            db.execute("DELETE FROM actions WHERE game_id = %s AND seq >= %s", (game_id, keep))
            db.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, f"{game_id} {new.version}"))
        return new

    def versions(self, game_ids: Sequence[str]) -> dict[str, int]:
        with self._conn() as db:
            rows = db.execute("SELECT id, version FROM games WHERE id = ANY(%s)", (list(game_ids),)).fetchall()
        return {r[0]: int(r[1]) for r in rows}

    def count(self) -> int:
        with self._conn() as db:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def running(self, creator: str | None = None) -> int:
        with self._conn() as db:
            if creator is not None:
                sql = "SELECT COUNT(*) FROM games WHERE NOT over AND creator = %s"
                return int(db.execute(sql, (creator,)).fetchone()[0])
            return int(db.execute("SELECT COUNT(*) FROM games WHERE NOT over").fetchone()[0])

    def stale(self, before: float, limit: int = 100) -> list[str]:
        with self._conn() as db:
            rows = db.execute(
                "SELECT id FROM games WHERE over IN (false, true) AND updated < %s ORDER BY updated LIMIT %s",
                (before, limit),
            ).fetchall()
        return [r[0] for r in rows]

    def delete(self, game_id: str, before: float) -> bool:
        with self._conn() as db, db.transaction():
            row = db.execute("SELECT updated FROM games WHERE id = %s FOR UPDATE", (game_id,)).fetchone()
            if row is None or row[0] >= before:
                return False
            for table in ("actions", "seats", "sockets", "requests"):
                db.execute(f"DELETE FROM {table} WHERE game_id = %s", (game_id,))
            db.execute("DELETE FROM games WHERE id = %s", (game_id,))
            return True

    def join(self, game_id: str, owner: str, cap: int, fresh: float) -> bool:
        with self._conn() as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(7470020, hashtext(%s))", (game_id,))  # one joiner per game
            (held,) = db.execute(
                "SELECT COALESCE(SUM(count), 0) FROM sockets WHERE game_id = %s AND (owner = %s OR seen >= %s)",
                (game_id, owner, fresh),
            ).fetchone()
            if held >= cap:
                return False
            db.execute(
                "INSERT INTO sockets (game_id, owner, count, seen) VALUES (%s, %s, 1, %s) "
                "ON CONFLICT (game_id, owner) DO UPDATE SET count = sockets.count + 1, seen = excluded.seen",
                (game_id, owner, time.time()),
            )
            return True

    def leave(self, game_id: str, owner: str) -> None:
        with self._conn() as db, db.transaction():
            db.execute("UPDATE sockets SET count = count - 1 WHERE game_id = %s AND owner = %s", (game_id, owner))
            db.execute("DELETE FROM sockets WHERE game_id = %s AND owner = %s AND count <= 0", (game_id, owner))

    def hold(self, owner: str) -> None:
        with self._conn() as db:
            db.execute("UPDATE sockets SET seen = %s WHERE owner = %s", (time.time(), owner))

    def release(self, owner: str) -> None:
        with self._conn() as db:
            db.execute("DELETE FROM sockets WHERE owner = %s", (owner,))


def _safe(url: str) -> str:
    """``url`` without a password (for messages)."""
    head, sep, tail = url.partition("@")
    if not sep or "://" not in head:
        return url
    scheme, _, user = head.partition("://")
    return f"{scheme}://{user.partition(':')[0]}@{tail}"
