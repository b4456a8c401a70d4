"""The web board on a phone-sized screen (390 x 844) in a real Chromium (Debian's
package, driven by Playwright), and its coordinates: start a game from the lobby, see
that nothing runs off the screen, the action buttons and the hand are on it and the
board keeps most of the height; the row and column numbers along the board's edges sit
on the rows and columns of the tiles (so the moves of the list can be found), after a
zoom too; play moves by tapping."""

import re

import pytest

from server_support import CHROMIUM, CHROMIUM_ARGS, LiveServer

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium: install Debian's package (apt-get install chromium); .ci/run does"
)

W, H = 390, 844
READY = "() => (+document.body.dataset.version > {v}) && document.body.classList.contains('my-turn')"
BUTTONS = ["#confirm", "#clear", "#exchange", "#pass", "#undo", "#hint", "#zoom-in", "#zoom-out", "#fit"]

# Where each board tile is drawn, and the number of the ruler label over its column and
# beside its row (None where no label is: zoomed out, or under the other ruler).
TILES_AND_RULERS = """() => {
  const mid = (el) => { const b = el.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2]; };
  const cols = [...document.querySelectorAll('.layer-coords text[data-col]')].map((t) => [+t.dataset.col, mid(t)[0]]);
  const rows = [...document.querySelectorAll('.layer-coords text[data-row]')].map((t) => [+t.dataset.row, mid(t)[1]]);
  const near = (list, v) => { const hit = list.find(([, p]) => Math.abs(p - v) < 3); return hit ? hit[0] : null; };
  return [...document.querySelectorAll('.board-tile')].map((u) => {
    const [x, y] = mid(u);
    return { at: u.dataset.at, x, y, col: near(cols, x), row: near(rows, y) };
  });
}"""


@pytest.fixture
def phone(tmp_path):
    from playwright.sync_api import sync_playwright

    args = [*CHROMIUM_ARGS, "--disable-quic", "--disable-sync"]
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            args=args,
            viewport={"width": W, "height": H},
            device_scale_factor=2,
            is_mobile=True,
            has_touch=True,
        )
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
        yield page
        context.close()


def box(page, selector):
    b = page.locator(selector).bounding_box()
    assert b is not None, f"{selector} is not shown"
    return b


def on_screen(page, selector):
    b = box(page, selector)
    assert b["x"] >= 0 and b["y"] >= 0 and b["x"] + b["width"] <= W + 0.5 and b["y"] + b["height"] <= H + 0.5, (
        selector,
        b,
    )
    return b


def check_rulers(page, least=3):
    """Every tile in view lies under the label of its column and beside that of its row,
    where those rows and columns have one (zoomed out: every k-th)."""
    tiles = page.evaluate(TILES_AND_RULERS)
    board = box(page, "#board")
    cols = set(page.eval_on_selector_all(".layer-coords text[data-col]", "ts => ts.map(t => +t.dataset.col)"))
    rows = set(page.eval_on_selector_all(".layer-coords text[data-row]", "ts => ts.map(t => +t.dataset.row)"))
    seen = 0
    for t in tiles:
        inside = (
            board["x"] + 30 < t["x"] < board["x"] + board["width"]
            and board["y"] + 20 < t["y"] < board["y"] + board["height"]
        )
        if not inside:
            continue
        r, c = (int(v) for v in t["at"].split(","))
        assert (t["row"], t["col"]) == (r if r in rows else None, c if c in cols else None), t
        seen += r in rows and c in cols
    assert seen >= least
    return tiles


def tap_a_move(page):
    """Stage tiles by tapping a hand tile, then a marked cell, until a whole move is
    staged; then tap Play. Returns the cells staged."""
    staged = []
    while page.is_disabled("#confirm"):
        free = page.eval_on_selector_all(".hand-tile:not(.staged)", "bs => bs.map(b => b.dataset.index)")
        for i in free:
            page.tap(f".hand-tile[data-index='{i}']")
            cells = page.eval_on_selector_all("rect.target", "rs => rs.map(r => r.dataset.cell)")
            if cells:
                on_screen(page, f"rect.target[data-cell='{cells[0]}']")
                page.tap(f"rect.target[data-cell='{cells[0]}']")
                staged.append(cells[0])
                break
            page.tap(f".hand-tile[data-index='{i}']")  # it fits nowhere: put it down again
        else:
            raise AssertionError("no tile of the hand fits")
    on_screen(page, "#confirm")
    page.tap("#confirm")
    return staged


def test_the_board_on_a_phone(phone, tmp_path):
    page = phone
    with LiveServer(tmp_path / "games.sqlite") as live:
        page.goto(live.url + "/")
        page.select_option("#count", "2")
        page.wait_for_selector("#params-1")
        assert page.evaluate("document.documentElement.scrollWidth") == W  # the lobby fits too
        page.select_option("#seat-0", "human")
        page.select_option("#seat-1", "greedy")
        page.tap("summary")
        page.fill("#seed", "2024")
        page.tap("#start")
        page.wait_for_url(re.compile(r"/game/"))
        page.wait_for_function(READY.format(v=0))
        # nothing runs off the screen; the buttons and the hand are on it; the board is usable
        assert page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]") == [W, H]
        for selector in BUTTONS:
            b = on_screen(page, selector)
            assert b["height"] >= 28 and b["width"] >= 28, (selector, b)
        hand = page.query_selector_all(".hand-tile")
        assert len(hand) == 6
        for i in range(6):
            assert on_screen(page, f".hand-tile[data-index='{i}']")["width"] >= 44
        board = box(page, "#board")
        assert board["width"] >= W - 1 and board["height"] >= 0.45 * H
        for selector in ["#scores", "#bag", "#status"]:
            on_screen(page, selector)
        check_rulers(page, least=0)  # the board may be empty: seat 0 may open
        cols = page.eval_on_selector_all(".layer-coords text[data-col]", "ts => ts.map(t => +t.dataset.col)")
        rows = page.eval_on_selector_all(".layer-coords text[data-row]", "ts => ts.map(t => +t.dataset.row)")
        assert 0 in cols and 0 in rows and cols == list(range(cols[0], cols[-1] + 1))
        # play two moves by tapping; the last move of the list is where its labels say
        for turn in range(2):
            version = int(page.evaluate("document.body.dataset.version"))
            staged = tap_a_move(page)
            page.wait_for_function(READY.format(v=version))
            tiles = {t["at"]: t for t in check_rulers(page)}
            assert set(staged) <= set(tiles)
            last = page.inner_text("#history li.last")
            for r, c in re.findall(r"@(-?\d+),(-?\d+)", last):
                assert f"{r},{c}" in tiles
        # zoomed out, the labels follow (every k-th one when the cells are small)
        for _ in range(3):
            page.tap("#zoom-out")
        check_rulers(page)
        labels = page.eval_on_selector_all(".layer-coords text[data-col]", "ts => ts.map(t => +t.dataset.col)")
        assert len(labels) >= 5 and labels == sorted(labels)
        assert page.evaluate("document.documentElement.scrollWidth") == W
        assert page.errors == []
