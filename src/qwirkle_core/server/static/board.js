// The game page: /game/{id}#token=SEAT_TOKEN (a spectator without a token; the older
// form ?token= is moved into the fragment, which no request carries).
// Pick a hand tile, see the cells where it can go (from the legal moves the server
// sends), place tiles, see the move's points, then play it. Everything shown comes
// from the seat's view (docs/server.md); updates arrive over a WebSocket.

import { postAction, request, watch } from "./api.js";
import { BoardView } from "./boardview.js";
import { formatCells, installTileDefs, parseCells, tileIcon, tileName } from "./tiles.js";

const $ = (id) => document.getElementById(id);
const gameId = decodeURIComponent(location.pathname.split("/").pop());
const token = seatToken();

function seatToken() {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  const query = new URLSearchParams(location.search);
  const fromQuery = query.get("token");
  if (fromQuery) {
    query.delete("token");
    const rest = query.toString();
    history.replaceState(null, "", `${location.pathname}${rest ? `?${rest}` : ""}#token=${encodeURIComponent(fromQuery)}`);
  }
  return fromHash || fromQuery;
}

const state = {
  view: null,
  moves: [], // legal moves: {text, points, cells: [{code, r, c}]}
  staged: [], // tiles placed this turn: {code, r, c, index}
  selected: null, // hand index of the picked tile
  cursor: null, // {r, c}: the keyboard's target cell
  mode: "place", // or "exchange"
  marked: new Set(), // hand indexes marked for an exchange
  busy: false,
  endShown: false,
  clockOffset: 0, // the server's clock minus this one's, in seconds (from the last view)
};

installTileDefs();
const board = new BoardView($("board"), onCell);

// -- what the legal moves allow ----------------------------------------------------------

const same = (a, b) => a.code === b.code && a.r === b.r && a.c === b.c;
const consistent = () => state.moves.filter((m) => state.staged.every((s) => m.cells.some((p) => same(p, s))));
const exactMove = () => consistent().find((m) => m.cells.length === state.staged.length) || null;

function targets() {
  if (state.selected === null) return [];
  const code = state.view.observation.hand[state.selected];
  const seen = new Map();
  for (const m of consistent()) {
    for (const p of m.cells) {
      if (p.code === code && !state.staged.some((s) => s.r === p.r && s.c === p.c)) seen.set(`${p.r},${p.c}`, { r: p.r, c: p.c });
    }
  }
  return [...seen.values()].sort((a, b) => a.r - b.r || a.c - b.c);
}

const myTurn = () => state.view && state.view.seat !== null && state.view.to_move === state.view.seat;

// -- rendering ----------------------------------------------------------------------------

function seatName(seat) {
  const v = state.view;
  const agent = v.seats[seat].agent;
  if (seat === v.seat) return "you";
  return agent === "human" ? `player ${seat}` : agent;
}

function render() {
  const v = state.view;
  if (!v) return;
  const obs = v.observation;
  const tgts = targets();
  if (state.cursor && !tgts.some((t) => t.r === state.cursor.r && t.c === state.cursor.c)) state.cursor = null;
  if (!state.cursor && tgts.length) state.cursor = tgts[0];
  const last = v.history.length ? v.history[v.history.length - 1] : null;
  board.set({
    board: obs.board.map((s) => parseCells(s)[0]),
    staged: state.staged,
    targets: tgts,
    last: last && last.kind === "place" ? parseCells(last.move) : [],
    cursor: tgts.length ? state.cursor : null,
  });
  document.body.dataset.version = v.version;
  renderStatus();
  renderScores();
  renderHand();
  renderActions();
  renderHistory();
  $("bag").textContent = obs.bag_size;
  if (v.over && !state.endShown) showEnd();
}

function renderStatus() {
  const v = state.view;
  let text;
  if (v.over) text = v.winner === -1 ? "Game over: a tie" : `Game over: ${seatName(v.winner) === "you" ? "you win" : `${seatName(v.winner)} (seat ${v.winner}) wins`}`;
  else if (myTurn()) text = state.mode === "exchange" ? "Your turn: choose the tiles to exchange" : "Your turn";
  else if (v.seat === null) text = `Watching: seat ${v.to_move} to move`;
  else text = `Waiting for ${seatName(v.to_move)} (seat ${v.to_move})`;
  $("status").textContent = text;
  document.body.classList.toggle("my-turn", myTurn());
}

function renderScores() {
  const v = state.view;
  const rows = v.seats.map(({ seat }) => {
    const tr = document.createElement("tr");
    tr.dataset.seat = seat;
    if (seat === v.to_move) tr.classList.add("to-move");
    if (seat === v.seat) tr.classList.add("me");
    const cells = [seat, seatName(seat), v.scores[seat], v.observation.hand_sizes[seat]];
    cells.forEach((x, i) => {
      const td = document.createElement("td");
      td.textContent = x;
      if (i >= 2) td.className = "num";
      if (i === 2) td.classList.add("score");
      tr.append(td);
    });
    if (v.clock) {
      const td = document.createElement("td");
      td.className = "num clock";
      td.dataset.seat = seat;
      tr.append(td);
    }
    return tr;
  });
  $("clock-head").hidden = !v.clock;
  $("scores").tBodies[0].replaceChildren(...rows);
  tickClocks();
}

// -- the clocks (docs/server.md, time controls): counted down here between views -----------

const formatSeconds = (s) => {
  const t = Math.max(0, Math.ceil(s));
  return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, "0")}`;
};

function tickClocks() {
  const v = state.view;
  if (!v || !v.clock) return;
  const c = v.clock;
  const now = Date.now() / 1000 + state.clockOffset; // the server's time
  for (const td of document.querySelectorAll("#scores td.clock")) {
    const seat = Number(td.dataset.seat);
    let text = "", left = null;
    if (v.seats[seat].agent !== "human") text = "";
    else if (seat === v.to_move && c.deadline !== null) left = c.deadline - now;
    else if (c.remaining) left = c.remaining[seat];
    else text = `${c.move_s}s/move`;
    if (left !== null) text = formatSeconds(left);
    td.textContent = text;
    td.classList.toggle("running", seat === v.to_move && c.deadline !== null);
    td.classList.toggle("low", left !== null && left < 10);
  }
}

setInterval(tickClocks, 250);

function renderHand() {
  const v = state.view;
  $("rack").hidden = v.seat === null;
  const buttons = v.observation.hand.map((code, i) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "hand-tile";
    b.dataset.code = code;
    b.dataset.index = i;
    b.title = `${tileName(code)} (${i + 1})`;
    b.setAttribute("aria-label", `${tileName(code)}, key ${i + 1}`);
    const staged = state.staged.some((s) => s.index === i);
    b.classList.toggle("staged", staged);
    b.classList.toggle("selected", state.selected === i);
    b.classList.toggle("marked", state.marked.has(i));
    b.setAttribute("aria-pressed", state.selected === i || state.marked.has(i));
    b.disabled = !myTurn() || state.busy;
    b.append(tileIcon(code));
    b.addEventListener("click", () => pickTile(i));
    return b;
  });
  $("hand").replaceChildren(...buttons);
}

function renderActions() {
  const v = state.view;
  const mine = myTurn() && !state.busy;
  const exact = exactMove();
  const confirm = $("confirm");
  const preview = $("preview");
  if (state.mode === "exchange") {
    confirm.textContent = `Exchange ${state.marked.size} tile${state.marked.size === 1 ? "" : "s"}`;
    confirm.disabled = !mine || state.marked.size === 0 || state.marked.size > v.can_exchange;
    preview.textContent = `Pick up to ${v.can_exchange} tiles to put back into the bag.`;
  } else {
    confirm.textContent = exact ? `Play for ${exact.points} point${exact.points === 1 ? "" : "s"}` : "Play";
    confirm.disabled = !mine || !exact;
    confirm.dataset.points = exact ? exact.points : "";
    if (!mine) preview.textContent = "";
    else if (exact) preview.textContent = `${exact.text}: ${exact.points} point${exact.points === 1 ? "" : "s"}`;
    else if (state.staged.length) preview.textContent = "Not a whole move yet: place another tile in the line.";
    else if (state.selected !== null && !targets().length) preview.textContent = `The ${tileName(v.observation.hand[state.selected])} fits nowhere now.`;
    else if (!state.moves.length) preview.textContent = v.can_pass ? "No tile fits and the bag is empty: pass." : "No tile fits: exchange.";
    else preview.textContent = "Pick a tile, then a highlighted cell.";
  }
  $("clear").disabled = !mine || (!state.staged.length && !state.marked.size);
  $("exchange").disabled = !mine || v.can_exchange === 0;
  $("exchange").classList.toggle("active", state.mode === "exchange");
  $("pass").disabled = !mine || !v.can_pass;
  $("undo").disabled = state.busy || !v.can_undo;
  $("hint").disabled = !mine;
}

function renderHistory() {
  const v = state.view;
  const items = v.history.map((a, i) => {
    const li = document.createElement("li");
    li.dataset.player = a.player;
    const move = a.kind === "exchange" && a.move === null ? `exchanges ${a.tiles} tile${a.tiles === 1 ? "" : "s"}` : a.move;
    const timeout = a.timeout ? ` [out of time: ${state.view.clock.fallback} played]` : "";
    li.textContent = `${seatName(a.player)}: ${move}${a.kind === "place" ? ` (${a.points})` : ""}${timeout}`;
    if (i === v.history.length - 1) li.classList.add("last");
    return li;
  });
  const list = $("history");
  list.replaceChildren(...items);
  list.scrollTop = list.scrollHeight;
}

function showEnd() {
  const v = state.view;
  state.endShown = true;
  const best = Math.max(...v.scores);
  $("end-title").textContent = v.winner === -1 ? "A tie" : v.winner === v.seat ? "You win!" : `${seatName(v.winner)} (seat ${v.winner}) wins`;
  const rows = v.seats.map(({ seat }) => {
    const tr = document.createElement("tr");
    tr.dataset.seat = seat;
    if (v.scores[seat] === best) tr.classList.add("winner");
    for (const [i, x] of [seat, seatName(seat), v.scores[seat]].entries()) {
      const td = document.createElement("td");
      td.textContent = x;
      if (i === 2) td.className = "num final-score";
      tr.append(td);
    }
    return tr;
  });
  $("end-scores").tBodies[0].replaceChildren(...rows);
  $("download").href = `/api/games/${encodeURIComponent(gameId)}/record`;
  $("download").download = `qwirkle-${gameId}.json`;
  $("end").showModal();
}

// -- actions ------------------------------------------------------------------------------

function toast(text) {
  const t = $("toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 5000);
}

function resetTurn(keepHints = false) {
  state.staged = [];
  state.selected = null;
  state.cursor = null;
  state.mode = "place";
  state.marked.clear();
  if (!keepHints) $("hints").hidden = true;
}

function applyView(v) {
  if (state.view && v.version < state.view.version) return; // an older push
  const changed = !state.view || v.version !== state.view.version || v.seat !== state.view.seat;
  state.view = v;
  if (v.clock) state.clockOffset = v.clock.now - Date.now() / 1000;
  if (changed) {
    state.moves = v.legal_moves.map((m) => ({ text: m.move, points: m.points, cells: parseCells(m.move) }));
    resetTurn();
  }
  render();
}

async function refresh() {
  applyView(await request("GET", `/api/games/${encodeURIComponent(gameId)}`, { token }));
}

async function send(path, body) {
  state.busy = true;
  render();
  try {
    if (path === "actions") await postAction(gameId, token, body.move, state.view.version);
    else await request("POST", `/api/games/${encodeURIComponent(gameId)}/${path}`, { token, body });
    await refresh();
  } catch (e) {
    if (e.view) applyView(e.view); // the move was made on an old view: show the current one
    toast(e.message);
  } finally {
    state.busy = false;
    render();
  }
}

function pickTile(i) {
  if (!myTurn() || state.busy) return;
  if (state.mode === "exchange") {
    if (state.marked.has(i)) state.marked.delete(i); else if (state.marked.size < state.view.can_exchange) state.marked.add(i);
  } else if (state.staged.some((s) => s.index === i)) {
    state.staged = state.staged.filter((s) => s.index !== i);
  } else {
    state.selected = state.selected === i ? null : i;
    state.cursor = null;
  }
  render();
}

function placeAt(r, c) {
  if (state.selected === null) return;
  if (!targets().some((t) => t.r === r && t.c === c)) return;
  state.staged.push({ code: state.view.observation.hand[state.selected], r, c, index: state.selected });
  state.selected = null;
  state.cursor = null;
  render();
}

function onCell(kind, r, c) {
  if (!myTurn() || state.busy) return;
  if (kind === "target") placeAt(r, c);
  else if (kind === "staged") {
    state.staged = state.staged.filter((s) => !(s.r === r && s.c === c));
    render();
  }
}

function confirm() {
  if (!myTurn() || state.busy) return;
  if (state.mode === "exchange") {
    const codes = [...state.marked].map((i) => state.view.observation.hand[i]);
    if (codes.length) send("actions", { move: `x ${codes.join(" ")}` });
    return;
  }
  const exact = exactMove();
  if (exact) send("actions", { move: formatCells(state.staged) });
}

function takeBack() {
  if (state.mode === "exchange") state.marked.clear();
  else if (state.selected !== null) state.selected = null;
  else state.staged.pop();
  render();
}

function toggleExchange() {
  if (!myTurn() || state.view.can_exchange === 0) return;
  const to = state.mode === "exchange" ? "place" : "exchange";
  resetTurn();
  state.mode = to;
  render();
}

async function hint() {
  if (!myTurn()) return;
  try {
    const { hints } = await request("GET", `/api/games/${encodeURIComponent(gameId)}/hint`, { token });
    const items = hints.map((h) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "hint-move";
      b.textContent = `${h.move}: ${h.points} pts, margin ${h.margin >= 0 ? "+" : ""}${h.margin.toFixed(1)}, wins ${(100 * h.win_rate).toFixed(0)}%`;
      b.addEventListener("click", () => useHint(h.move));
      li.append(b);
      return li;
    });
    $("hint-list").replaceChildren(...items);
    $("hints").hidden = false;
  } catch (e) {
    toast(e.message);
  }
}

function useHint(text) {
  const hand = state.view.observation.hand;
  const taken = new Set();
  const indexOf = (code) => {
    const i = hand.findIndex((c, j) => c === code && !taken.has(j));
    taken.add(i);
    return i;
  };
  resetTurn(true);
  if (text.startsWith("x ")) {
    state.mode = "exchange";
    for (const code of text.slice(2).split(" ")) state.marked.add(indexOf(code));
  } else {
    state.staged = parseCells(text).map((p) => ({ ...p, index: indexOf(p.code) }));
  }
  render();
}

// -- the keyboard ---------------------------------------------------------------------------

function moveCursor(dr, dc) {
  const tgts = targets();
  if (!tgts.length) return;
  const from = state.cursor || tgts[0];
  let best = null, bestScore = Infinity;
  for (const t of tgts) {
    const along = (t.r - from.r) * dr + (t.c - from.c) * dc;
    if (along <= 0) continue;
    const across = Math.abs((t.r - from.r) * dc) + Math.abs((t.c - from.c) * dr);
    const score = along + 2 * across;
    if (score < bestScore) { best = t; bestScore = score; }
  }
  if (best) { state.cursor = best; render(); }
}

function onKey(e) {
  if (e.target.closest("dialog") || e.ctrlKey || e.metaKey || e.altKey) return;
  const k = e.key;
  const arrows = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  if (/^[1-6]$/.test(k)) {
    const i = Number(k) - 1;
    if (state.view && i < state.view.observation.hand.length) pickTile(i);
  } else if (k in arrows && state.selected !== null) {
    moveCursor(...arrows[k]);
  } else if (k === "Enter") {
    if (e.target.tagName === "BUTTON" && !e.target.classList.contains("hand-tile")) return; // the button's own click
    if (state.selected !== null && state.cursor) placeAt(state.cursor.r, state.cursor.c);
    else confirm();
  } else if (k === "Backspace" || k === "Escape") takeBack();
  else if (k === "x") toggleExchange();
  else if (k === "p" && state.view?.can_pass) send("actions", { move: "pass" });
  else if (k === "u" && state.view?.can_undo) send("undo");
  else if (k === "h") hint();
  else if (k === "f") board.fit();
  else if (k === "+" || k === "=") board.zoom(1.25);
  else if (k === "-") board.zoom(0.8);
  else return;
  e.preventDefault();
}

// -- start ----------------------------------------------------------------------------------

$("confirm").addEventListener("click", confirm);
$("clear").addEventListener("click", () => { state.staged = []; state.selected = null; state.marked.clear(); render(); });
$("exchange").addEventListener("click", toggleExchange);
$("pass").addEventListener("click", () => send("actions", { move: "pass" }));
$("undo").addEventListener("click", () => send("undo"));
$("hint").addEventListener("click", hint);
$("zoom-in").addEventListener("click", () => board.zoom(1.25));
$("zoom-out").addEventListener("click", () => board.zoom(0.8));
$("fit").addEventListener("click", () => board.fit());
$("close-end").addEventListener("click", () => $("end").close());
document.addEventListener("keydown", onKey);

refresh().then(() => {
  watch(gameId, token, applyView, (status, reason) => {
    $("connection").className = `connection ${status}`;
    $("connection").title = status === "open" ? "live updates" : status === "refused" ? reason : "reconnecting…";
  });
}).catch((e) => {
  $("status").textContent = e.message;
  $("rack").hidden = true;
});
