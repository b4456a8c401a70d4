"""rows.py: per-game rows, written to Parquet/CSV chunk by chunk (whole or absent) with
the batch's description, and read back."""

from __future__ import annotations

import os

import pytest

import qwirkle_core as qc
from qwirkle_core.batch.rows import (
    COLUMNS,
    GameRows,
    RowWriter,
    check_output_path,
    read_metadata,
    read_rows,
    write_rows,
)
from strategies import assert_same_rows


@pytest.fixture(scope="module")
def rows():
    return qc.simulate(60, agents=("greedy", "random", "greedy"), seed=4, threads=1).rows


def test_columns_are_the_documented_ones_in_file_order(rows):
    assert list(rows.columns()) == [
        "game",
        "seed",
        "score_0",
        "score_1",
        "score_2",
        "winner",
        "starter",
        "turns",
        "tiles_placed",
        "qwirkles_0",
        "qwirkles_1",
        "qwirkles_2",
        "truncated",
    ]
    documented = {name.replace("_P", f"_{p}") for name in COLUMNS for p in range(3)}
    assert set(rows.columns()) <= documented
    assert len(rows) == 60 and rows.players == 3
    assert_same_rows(GameRows.from_columns(rows.columns()), rows)


def test_slicing_and_concatenation(rows):
    assert_same_rows(GameRows.concat([rows[:10], rows[10:]]), rows)
    assert rows[5:7].game.tolist() == [5, 6] and len(rows[::2]) == 30


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".PARQUET"])
def test_written_rows_read_back(tmp_path, rows, suffix):
    path = tmp_path / f"r{suffix}"
    meta = {"agents": ["a", "b", "c"], "seed": 4}
    assert write_rows(path, rows, meta) == path
    assert_same_rows(read_rows(path), rows)
    assert os.listdir(tmp_path) == [path.name]  # no temporary file left
    if suffix.lower() == ".parquet":
        assert read_metadata(path) == meta


def test_the_writer_appends_chunks_and_renames_when_done(tmp_path, rows):
    path = tmp_path / "r.parquet"
    w = RowWriter(path, 3, {"x": 1})
    temporary = [p for p in tmp_path.iterdir()]
    assert len(temporary) == 1 and temporary[0].name.startswith(".r.parquet.") and not path.exists()
    w.write(rows[40:])
    w.write(rows[:40])  # out of order: read_rows sorts by game index
    assert not path.exists()
    assert w.close() == path and w.rows == 60
    assert os.listdir(tmp_path) == ["r.parquet"]
    assert_same_rows(read_rows(path), rows)


def test_no_rows_leave_an_existing_file_alone(tmp_path, rows):
    path = tmp_path / "r.csv"
    path.write_text("precious\n")
    RowWriter(path, 3, {}).close()
    w = RowWriter(path, 3, {})
    w.write(rows[:5])
    w.abort()
    assert path.read_text() == "precious\n" and os.listdir(tmp_path) == ["r.csv"]


def test_output_paths_are_checked_before_any_work(tmp_path):
    assert check_output_path(tmp_path / "a.parquet") == tmp_path / "a.parquet"
    assert os.listdir(tmp_path) == []  # the probe file is gone
    with pytest.raises(ValueError, match="must end in .parquet or .csv"):
        check_output_path(tmp_path / "a.txt")
    (tmp_path / "d.parquet").mkdir()
    with pytest.raises(IsADirectoryError, match="is a folder"):
        check_output_path(tmp_path / "d.parquet")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        check_output_path(tmp_path / "no" / "a.csv")
    with pytest.raises(OSError):
        check_output_path("/proc/a.parquet")
    with pytest.raises(OSError):
        RowWriter("/sys/a.parquet", 2, {})
