"""The server's SQLite store: one row per game, one per seat.

A game's stored state is its record (JSON text, the library's record format), written
in the same transaction that accepts each action, so a server killed at any moment
restarts with every accepted action. Seat tokens are kept only as SHA-256 digests:
a restarted server recognises the same tokens, and a copy of the database does not
hand them out. The database runs in WAL mode with ``synchronous=NORMAL``: a commit is
in the write-ahead log before the server answers, so it survives the server process
being killed at any moment; an operating-system crash or power cut may lose the last
commits (never the file's consistency). ``synchronous=FULL`` would fsync every commit,
about 5 ms each on the project's machine, which caps a server near 90 actions a second.

All methods are safe to call from several threads (one connection, one lock).
"""

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

_T = TypeVar("_T")

__all__ = ["GameRow", "Store", "token_digest"]

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id       TEXT PRIMARY KEY,
    created  REAL NOT NULL,           -- seconds since the epoch
    updated  REAL NOT NULL,
    version  INTEGER NOT NULL,        -- +1 on every stored change (actions, undos)
    over     INTEGER NOT NULL,        -- 1 once the game has ended
    record   TEXT NOT NULL            -- the game record (JSON): seed, hands, every action
);
CREATE TABLE IF NOT EXISTS seats (
    game_id  TEXT NOT NULL REFERENCES games(id),
    seat     INTEGER NOT NULL,
    agent    TEXT NOT NULL,           -- 'human' or an agent spec
    token    TEXT,                    -- SHA-256 hex digest of the seat's token; NULL for agents
    PRIMARY KEY (game_id, seat)
);
"""


def token_digest(token: str) -> str:
    """The stored form of a seat token: its SHA-256 digest in hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class GameRow:
    """One stored game: ``agents`` (one label per seat), ``digests`` (the token digest
    of each human seat, None for agents), ``record`` (JSON text), ``version``."""

    id: str
    agents: tuple[str, ...]
    digests: tuple[str | None, ...]
    record: str
    version: int
    over: bool


class Store:
    """A SQLite database of games at ``path`` (created if missing).

    Raises ``sqlite3.Error`` for a file that is not such a database.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise sqlite3.DatabaseError(
                    f"{path}: database schema version {version}; this server reads {SCHEMA_VERSION}"
                )
            self._db.executescript(_SCHEMA)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
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
        self, game_id: str, agents: Sequence[str], digests: Sequence[str | None], record: str, over: bool
    ) -> int:
        """Store a new game (its record JSON text and seats); returns its version (1)."""
        now = time.time()

        def insert(db: sqlite3.Connection) -> int:
            db.execute(
                "INSERT INTO games (id, created, updated, version, over, record) VALUES (?, ?, ?, 1, ?, ?)",
                (game_id, now, now, int(over), record),
            )
            db.executemany(
                "INSERT INTO seats (game_id, seat, agent, token) VALUES (?, ?, ?, ?)",
                [(game_id, i, a, d) for i, (a, d) in enumerate(zip(agents, digests))],
            )
            return 1

        return self._transaction(insert)

    def save(self, game_id: str, record: str, over: bool) -> int:
        """Replace a game's record (after an action or an undo); returns its new version."""

        def update(db: sqlite3.Connection) -> int:
            db.execute(
                "UPDATE games SET record = ?, over = ?, updated = ?, version = version + 1 WHERE id = ?",
                (record, int(over), time.time(), game_id),
            )
            return int(db.execute("SELECT version FROM games WHERE id = ?", (game_id,)).fetchone()[0])

        return self._transaction(update)

    def load(self, game_id: str) -> GameRow | None:
        """The stored :class:`GameRow` of ``game_id``, or None."""
        with self._lock:
            row = self._db.execute("SELECT record, version, over FROM games WHERE id = ?", (game_id,)).fetchone()
            if row is None:
                return None
            seats = self._db.execute(
                "SELECT agent, token FROM seats WHERE game_id = ? ORDER BY seat", (game_id,)
            ).fetchall()
        return GameRow(game_id, tuple(a for a, _ in seats), tuple(d for _, d in seats), row[0], row[1], bool(row[2]))

    def count(self) -> int:
        """The number of stored games."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
