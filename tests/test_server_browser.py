"""The web board in a real Chromium (Debian's package, driven by Playwright): start a
game against greedy in the lobby and play it to the end by clicking tiles and cells
(some turns with the keyboard only), with a hint, an exchange and an undo on the way;
the final scores on the page must be the record's."""

import os
import random
import re
import shutil
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

import qwirkle_core as qc
from server_support import CHROMIUM, CHROMIUM_ARGS, LiveServer, bearer

pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None, reason="no Chromium: install Debian's package (apt-get install chromium); .ci/run does"
    ),
    pytest.mark.slow,  # a browser: pytest -m slow
]

READY = "() => (+document.body.dataset.version > {v}) && (document.body.classList.contains('my-turn') || document.getElementById('end').open)"


@pytest.fixture
def page(tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(30_000)
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
        yield page
        browser.close()


def cursor(page):
    return page.eval_on_selector(
        ".layer-cursor",
        "g => g.firstElementChild ? [g.firstElementChild.getAttribute('x'), g.firstElementChild.getAttribute('y')] : null",
    )


def play_by_mouse(page, move, points):
    for p in qc.Move.parse(move).placements:
        r, c, t = p
        page.click(f".hand-tile[data-code='{qc.tile_code(t)}']:not(.staged)")
        page.click(f"rect.target[data-cell='{r},{c}']")
    assert page.inner_text("#confirm") == f"Play for {points} point{'s' * (points != 1)}"
    page.click("#confirm")


def play_by_keyboard(page):
    """Place tiles with digits, arrows and Enter until a whole move is staged, then
    play it with Enter. Returns whether the arrows moved the cursor."""
    moved = False
    page.focus("body")
    while page.is_disabled("#confirm"):
        hand = page.query_selector_all(".hand-tile")
        for i, tile in enumerate(hand):
            if "staged" in tile.get_attribute("class"):
                continue
            page.keyboard.press(str(i + 1))
            if page.query_selector_all("rect.target"):
                start = cursor(page)
                for key in ("ArrowRight", "ArrowDown", "ArrowLeft", "ArrowUp"):
                    page.keyboard.press(key)
                    moved |= cursor(page) != start
                page.keyboard.press("Enter")
                break
            page.keyboard.press(str(i + 1))  # no cell for it: put it down again
        else:
            raise AssertionError("no tile of the hand fits")
    page.keyboard.press("Enter")
    return moved


def test_play_a_game_in_the_browser(tmp_path, page):
    rng = random.Random(4)
    with LiveServer(tmp_path / "games.sqlite") as live:
        page.goto(live.url + "/")
        page.select_option("#count", "2")
        page.select_option("#seat-0", "human")
        page.select_option("#seat-1", "greedy")
        page.click("summary")
        page.fill("#seed", "2024")
        page.click("#start")
        page.wait_for_url(re.compile(r"/game/"))
        url = urlsplit(page.url)
        game_id, token = url.path.rsplit("/", 1)[1], parse_qs(url.fragment)["token"][0]
        api = httpx.Client(base_url=live.url, headers=bearer(token), timeout=30)
        page.wait_for_function(READY.format(v=0))
        turn, keyboard_moved, undone, exchanged = 0, False, False, False
        while not page.evaluate("document.getElementById('end').open"):
            view = api.get(f"/api/games/{game_id}").json()
            assert int(page.evaluate("document.body.dataset.version")) == view["version"]
            assert [int(x) for x in page.locator("#scores .score").all_inner_texts()] == view["scores"]
            assert page.inner_text("#bag") == str(view["observation"]["bag_size"])
            hand = page.eval_on_selector_all(".hand-tile", "b => b.map(x => x.dataset.code)")
            assert hand == view["observation"]["hand"]
            moves = view["legal_moves"]
            if turn == 2:
                page.click("#hint")
                page.wait_for_selector("#hint-list li")
                assert len(page.query_selector_all("#hint-list li")) == 3
            if turn == 8:
                page.click(".hand-tile:not(.staged)")
                shot = tmp_path / "board-midgame.png"
                page.screenshot(path=str(shot))
                if os.environ.get("QWIRKLE_SCREENSHOT_DIR"):
                    os.makedirs(os.environ["QWIRKLE_SCREENSHOT_DIR"], exist_ok=True)
                    shutil.copy(shot, os.environ["QWIRKLE_SCREENSHOT_DIR"])
                page.keyboard.press("Escape")
            if moves and turn % 4 == 1:
                keyboard_moved |= play_by_keyboard(page)
            elif view["can_exchange"] and (not moves or (turn == 6 and not exchanged)):
                page.click("#exchange")
                for code in rng.sample(view["observation"]["hand"], min(2, view["can_exchange"])):
                    page.click(f".hand-tile[data-code='{code}']:not(.marked)")
                page.click("#confirm")
                exchanged = True
            elif moves:
                best = max(moves, key=lambda m: (m["points"], rng.random()))
                play_by_mouse(page, best["move"], best["points"])
            else:
                page.click("#pass")
            page.wait_for_function(READY.format(v=view["version"]))
            if turn == 3 and not undone:
                after = api.get(f"/api/games/{game_id}").json()
                assert len(after["history"]) == len(view["history"]) + 2
                page.click("#undo")
                page.wait_for_function(READY.format(v=after["version"]))
                back = api.get(f"/api/games/{game_id}").json()
                assert back["history"] == view["history"] and back["observation"] == view["observation"]
                undone = True
                continue
            turn += 1
        assert keyboard_moved and exchanged and undone
        record = qc.GameRecord.from_json(api.get(f"/api/games/{game_id}/record").text)
        shown = [int(x) for x in page.locator("#end-scores .final-score").all_inner_texts()]
        assert shown == list(record.final_scores) == list(qc.replay(record).scores)
        title = page.inner_text("#end-title")
        assert title == (
            "A tie" if record.winner == -1 else "You win!" if record.winner == 0 else "greedy (seat 1) wins"
        )
        assert page.get_attribute("#download", "href") == f"/api/games/{game_id}/record"
        page.screenshot(path=str(tmp_path / "board-end.png"))
        assert page.errors == []
        assert sum(a.player == 0 for a in record.actions) >= 10


def test_the_board_shows_the_clocks_and_the_timeouts(tmp_path, page):
    """A timed game from the lobby shows a clock per human seat, counting down for the
    seat to move; a turn that runs out (played by the server's sweep, pushed over the
    WebSocket, whose token goes as a subprotocol) is marked in the history."""
    with LiveServer(str(tmp_path / "games.sqlite")) as live:
        page.goto(live.url + "/")
        page.select_option("#count", "2")
        page.select_option("#seat-0", "human")
        page.select_option("#seat-1", "greedy")
        page.click("summary")
        page.select_option("#clock", "move_s=30")
        page.click("#start")
        page.wait_for_url(re.compile(r"/game/"))
        assert "token=" not in urlsplit(page.url).query and "token=" in urlsplit(page.url).fragment
        page.wait_for_function("() => document.querySelector('#scores td.clock[data-seat=\"0\"]')?.textContent")
        assert page.is_visible("#clock-head")
        first = page.inner_text("#scores td.clock[data-seat='0']")
        assert re.fullmatch(r"0:(30|[12]\d)", first) and page.inner_text("#scores td.clock[data-seat='1']") == ""
        page.wait_for_function(
            f"() => document.querySelector('#scores td.clock[data-seat=\"0\"]').textContent !== '{first}'"
        )
        # a game of two people with a second per move: the turns run out while the page watches
        r = httpx.post(f"{live.url}/api/games", json={"seats": ["human", "human"], "clock": {"move_s": 1}}, timeout=30)
        game_id, token = r.json()["id"], r.json()["seats"][0]["token"]
        page.goto(f"{live.url}/game/{game_id}#token={token}")
        page.wait_for_function("() => document.getElementById('connection').classList.contains('open')")
        page.wait_for_selector("#history li:has-text('out of time: greedy played')", timeout=15_000)
        view = httpx.get(f"{live.url}/api/games/{game_id}", headers=bearer(token), timeout=30).json()
        assert view["clock"]["timeouts"] and page.errors == []
