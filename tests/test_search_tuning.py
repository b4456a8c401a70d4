"""benchmarks/search_tuning.py: the paired comparisons the search was tuned with.

Cheap agents on a few deals: the numbers the script prints must be those of the games
it plays, saved margins must pair with the same games played again, and a file of
other deals must be refused."""

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import qwirkle_core as qc
from qwirkle_core.batch.tournament import play_deals

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "search_tuning.py"


@pytest.fixture(scope="module")
def st():
    spec = importlib.util.spec_from_file_location("search_tuning", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


def test_margins_are_the_agents_margins_from_each_seat(st):
    m = st.margins("heuristic", "greedy", 1000, [2, 7], 3, 1)
    assert m.shape == (6, 2)
    for block, first in ((m[:3], 2), (m[3:], 7)):
        ab, ba = play_deals(qc.parse_agent("heuristic"), qc.parse_agent("greedy"), 1000, first, first + 3, 1)
        np.testing.assert_array_equal(block[:, 0], ab[:, 0] - ab[:, 1])
        np.testing.assert_array_equal(block[:, 1], ba[:, 1] - ba[:, 0])


def test_a_deal_plays_the_same_in_any_range(st):
    # so margins saved in pieces (--first 0 --deals 600, then --first 600 ...) join
    # into exactly the margins of one run over all the deals
    whole = st.margins("heuristic", "greedy", 1000, [0], 4, 1)
    np.testing.assert_array_equal(whole, st.margins("heuristic", "greedy", 1000, [2, 0], 2, 1)[[2, 3, 0, 1]])


def test_a_deal_played_by_the_same_agent_from_both_seats_mirrors(st):
    m = st.margins("greedy", "greedy", 1000, [0], 4, 1)
    np.testing.assert_array_equal(m[:, 0], -m[:, 1])
    assert np.any(m != 0)


def test_wins_and_firsts(st):
    np.testing.assert_array_equal(st._wins(np.array([[3, 0], [-1, 12]])), [[1, 0.5], [0, 1]])
    assert st._firsts("0,300") == [0, 300]
    with pytest.raises(argparse.ArgumentTypeError, match="deal numbers separated by commas"):
        st._firsts("0;300")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Heuristic's margins on deals 0-1 and 5-6 of seed 1000, saved by ``margins``."""
    out = tmp_path_factory.mktemp("margins") / "h.npz"
    done = run("margins", "heuristic", "--seed", "1000", "--first", "0,5", "--deals", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_saved_margins_pair_with_the_same_games_played_again(saved):
    with np.load(saved) as f:
        meta = json.loads(str(f["meta"]))
        assert f["margins"].shape == (4, 2)
    assert meta["agent"] == "heuristic" and meta["first"] == [0, 5] and meta["deals"] == 2 and meta["seed"] == 1000
    paired = run("paired", str(saved), "heuristic", "--seed", "1000", "--first", "0,5", "--deals", "2")
    assert paired.returncode == 0, paired.stderr
    assert "games with different margins: 0, with different results: 0" in paired.stdout
    assert "paired difference of the mean margins: +0.00" in paired.stdout


def test_a_file_of_other_deals_or_no_margins_is_refused(saved, tmp_path):
    other = run("paired", str(saved), "heuristic", "--seed", "1000", "--first", "0", "--deals", "2")
    assert other.returncode != 0 and "holds other deals" in other.stderr and "Traceback" not in other.stderr
    bogus = tmp_path / "bogus.npz"
    bogus.write_text("not numpy")
    bad = run("paired", str(bogus), "heuristic", "--deals", "2")
    assert bad.returncode != 0 and "not a file written by margins" in bad.stderr and "Traceback" not in bad.stderr
