"""Per-game rows of a batch: :class:`GameRows`, and writing and reading them as files.

Every column is documented in docs/results.md. A Parquet file also carries the batch's
description (agents, rules, seed, game-index range, library version, date) in its
schema metadata under the key ``qwirkle-core``. Files are written to a temporary name
in the destination folder and renamed when complete, so an output file is either
whole or absent, and the folder is known to be writable before the first game.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "COLUMNS",
    "GameRows",
    "RowWriter",
    "check_output_path",
    "current_umask",
    "read_metadata",
    "read_rows",
    "write_rows",
]

METADATA_KEY = b"qwirkle-core"
COLUMNS = {
    "game": "index of the game in its batch (0-based; game i plays from a hash of (seed, i))",
    "seed": "the game's own 64-bit seed: Game(players, seed=...) / play_game replays it",
    "score_P": "final score of seat P (going-out bonus included)",
    "winner": "the winning seat; -1 for a tie (or a game stopped at the turn limit)",
    "starter": "the seat that opened",
    "turns": "actions taken: placements, exchanges and passes",
    "tiles_placed": "tiles on the board at the end",
    "qwirkles_P": "lines of 6 completed by seat P",
    "truncated": "true when the game was stopped at the 5,000-turn limit (never seen in practice)",
}
"""The columns of a result file and what they hold (``P`` is a seat number)."""


@dataclass(frozen=True)
class GameRows:
    """Per-game results, one row per game (numpy arrays of equal length).

    game          int64[n]             index of the game in its batch
    seeds         uint64[n]            each game's own seed
    scores        int32[n, players]    final scores (going-out bonus included)
    winner        int8[n]              winning seat, -1 for a tie
    starter       int8[n]              the seat that opened
    turns         int32[n]             actions taken (placements, exchanges, passes)
    tiles_placed  int16[n]             tiles on the board at the end
    qwirkles      int16[n, players]    lines of 6 completed by each seat
    truncated     bool[n]              stopped at the turn limit
    """

    game: np.ndarray
    seeds: np.ndarray
    scores: np.ndarray
    winner: np.ndarray
    starter: np.ndarray
    turns: np.ndarray
    tiles_placed: np.ndarray
    qwirkles: np.ndarray
    truncated: np.ndarray

    def __len__(self) -> int:
        return len(self.game)

    @property
    def players(self) -> int:
        """The number of seats."""
        return int(self.scores.shape[1])

    def columns(self) -> dict[str, np.ndarray]:
        """The rows as a dict of 1-D columns (see :data:`COLUMNS`), in file order."""
        cols = {"game": self.game, "seed": self.seeds}
        for p in range(self.players):
            cols[f"score_{p}"] = self.scores[:, p]
        cols.update(winner=self.winner, starter=self.starter, turns=self.turns, tiles_placed=self.tiles_placed)
        for p in range(self.players):
            cols[f"qwirkles_{p}"] = self.qwirkles[:, p]
        cols["truncated"] = self.truncated
        return cols

    @classmethod
    def from_columns(cls, cols: dict[str, Any]) -> GameRows:
        """The rows of a dict of columns as :meth:`columns` writes them."""
        players = sum(1 for k in cols if k.startswith("score_"))
        return cls(
            game=np.asarray(cols["game"], np.int64),
            seeds=np.asarray(cols["seed"], np.uint64),
            scores=np.stack([np.asarray(cols[f"score_{p}"], np.int32) for p in range(players)], axis=1),
            winner=np.asarray(cols["winner"], np.int8),
            starter=np.asarray(cols["starter"], np.int8),
            turns=np.asarray(cols["turns"], np.int32),
            tiles_placed=np.asarray(cols["tiles_placed"], np.int16),
            qwirkles=np.stack([np.asarray(cols[f"qwirkles_{p}"], np.int16) for p in range(players)], axis=1),
            truncated=np.asarray(cols["truncated"], bool),
        )

    def __getitem__(self, index: Any) -> GameRows:
        return GameRows(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    @classmethod
    def concat(cls, parts: list[GameRows]) -> GameRows:
        """The rows of ``parts`` one after another."""
        return cls(**{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)})


def check_output_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a result file to write (``.parquet`` or ``.csv``), checked by
    creating and removing a file in its folder, so a typo fails before the first game.
    Raises ValueError (bad extension) or OSError naming the problem."""
    p = Path(path)
    if p.suffix.lower() not in (".parquet", ".csv"):
        raise ValueError(f"{str(path)!r}: the output must end in .parquet or .csv")
    if p.is_dir():
        raise IsADirectoryError(f"{str(path)!r} is a folder; give a file name ending in .parquet or .csv")
    folder = p.resolve().parent
    if not folder.is_dir():
        raise FileNotFoundError(f"{str(path)!r}: folder {folder} does not exist")
    fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{p.name}.", suffix=".probe")
    os.close(fd)
    os.unlink(probe)
    return p


class RowWriter:
    """Writes rows chunk by chunk to a temporary file beside ``path``; :meth:`close`
    renames it to ``path``. ``metadata`` (JSON-ready) goes into a Parquet file's schema
    metadata. The temporary file is created at once, so an unwritable place fails
    before any work is done."""

    def __init__(self, path: str | os.PathLike[str], players: int, metadata: dict[str, Any]) -> None:
        self.path = check_output_path(path)
        self.parquet = self.path.suffix.lower() == ".parquet"
        fd, tmp = tempfile.mkstemp(dir=self.path.resolve().parent, prefix=f".{self.path.name}.", suffix=".part")
        os.close(fd)
        self.tmp = Path(tmp)
        self.rows = 0
        self.players = players
        self.metadata = metadata
        self._writer: Any = None

    def write(self, rows: GameRows) -> None:
        """Append ``rows`` to the file."""
        import pyarrow as pa

        table = pa.table(rows.columns())
        if self._writer is None:
            schema = table.schema.with_metadata({METADATA_KEY: json.dumps(self.metadata).encode()})
            if self.parquet:
                import pyarrow.parquet as pq

                self._writer = pq.ParquetWriter(self.tmp, schema)
            else:
                import pyarrow.csv as pcsv

                self._writer = pcsv.CSVWriter(self.tmp, schema)
        self._writer.write_table(table)
        self.rows += len(rows)

    def close(self) -> Path:
        """Finish the file and move it to its name; returns the path. With no rows
        written, the temporary file is removed and an existing file is left untouched
        (and the path is returned all the same)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self.rows == 0:
            self.abort()
            return self.path
        os.chmod(self.tmp, 0o666 & ~current_umask())  # mkstemp made it 0600: the usual mode
        os.replace(self.tmp, self.path)
        return self.path

    def abort(self) -> None:
        """Drop the temporary file."""
        if self._writer is not None:
            try:
                self._writer.close()
            finally:
                self._writer = None
        self.tmp.unlink(missing_ok=True)


def current_umask() -> int:
    """The process's umask (read by setting it and putting it back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_rows(path: str | os.PathLike[str], rows: GameRows, metadata: dict[str, Any]) -> Path:
    """Write ``rows`` to a ``.parquet`` or ``.csv`` file at once; returns its path."""
    writer = RowWriter(path, rows.players, metadata)
    try:
        writer.write(rows)
        return writer.close()
    except BaseException:
        writer.abort()
        raise


def read_rows(path: str | os.PathLike[str]) -> GameRows:
    """The rows of a result file (``.parquet`` / ``.csv``) or of a folder of Parquet
    parts (a distributed run), sorted by game index."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        import pyarrow as pa
        import pyarrow.csv as pcsv

        # seeds use all 64 bits: inferred as int64 they would not fit, as double they lose digits
        table = pcsv.read_csv(p, convert_options=pcsv.ConvertOptions(column_types={"seed": pa.uint64()}))
    else:
        import pyarrow.dataset as ds

        table = ds.dataset(p, format="parquet").to_table()
    rows = GameRows.from_columns({name: table.column(name).to_numpy() for name in table.column_names})
    order = np.argsort(rows.game, kind="stable")
    return rows if np.all(order == np.arange(len(order))) else rows[order]


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The batch description stored in a Parquet result file."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    return json.loads(meta[METADATA_KEY]) if METADATA_KEY in meta else {}
