// The lobby: choose the seats (a person or an agent each), start, go to the board.

import { request } from "./api.js";
import { installTileDefs, tileIcon } from "./tiles.js";

const $ = (id) => document.getElementById(id);
let info = { agents: ["random", "greedy", "heuristic", "mc"], min_seats: 2, max_seats: 6 };

function seatRow(i, kind) {
  const li = document.createElement("li");
  li.className = "seat";
  const select = document.createElement("select");
  select.name = `seat-${i}`;
  select.id = `seat-${i}`;
  select.setAttribute("aria-label", `seat ${i}`);
  for (const name of ["human", ...info.agents]) select.append(new Option(name === "human" ? "a person (or a remote bot)" : name, name));
  select.value = kind;
  const params = document.createElement("input");
  params.name = `params-${i}`;
  params.id = `params-${i}`;
  params.maxLength = 48;
  params.placeholder = "parameters, e.g. playouts=64";
  params.setAttribute("aria-label", `seat ${i} agent parameters`);
  const sync = () => { params.hidden = select.value === "human"; };
  select.addEventListener("change", sync);
  sync();
  const label = document.createElement("label");
  label.htmlFor = select.id;
  label.textContent = `Seat ${i}`;
  li.append(label, select, params);
  return li;
}

function seatSpecs() {
  return [...$("seats").querySelectorAll("li")].map((li) => {
    const kind = li.querySelector("select").value;
    const params = li.querySelector("input").value.trim().replace(/^:+/, "");
    return kind === "human" || !params ? kind : `${kind}:${params}`;
  });
}

function setCount(n) {
  const old = [...$("seats").querySelectorAll("select")].map((x) => x.value);
  $("seats").replaceChildren(...Array.from({ length: n }, (_, i) => seatRow(i, old[i] ?? (i === 0 ? "human" : "greedy"))));
}

function link(gameId, seat) {
  const url = new URL(`/game/${encodeURIComponent(gameId)}`, location.href);
  // the token goes in the fragment, which the browser never sends to the server (no log holds it)
  if (seat.token) url.hash = new URLSearchParams({ token: seat.token }).toString();
  return url.href;
}

async function start(e) {
  e.preventDefault();
  $("error").textContent = "";
  const body = { seats: seatSpecs() };
  const seed = $("seed").value.trim();
  if (seed) body.seed = Number(seed);
  const clock = $("clock").value; // "move_s=30" or "base_s=300,increment_s=5"
  if (clock) body.clock = Object.fromEntries(clock.split(",").map((kv) => [kv.split("=")[0], Number(kv.split("=")[1])]));
  $("start").disabled = true;
  try {
    const game = await request("POST", "/api/games", { body });
    const humans = game.seats.filter((s) => s.token);
    if (humans.length === 1) {
      location.assign(link(game.id, humans[0]));
      return;
    }
    const items = humans.map((s) => {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = link(game.id, s);
      a.textContent = `Seat ${s.seat}`;
      const code = document.createElement("code");
      code.textContent = a.href;
      li.append(a, " ", code);
      return li;
    });
    const watch = document.createElement("li");
    const a = document.createElement("a");
    a.href = link(game.id, {});
    a.textContent = "Watch (no hand shown)";
    watch.append(a);
    $("links").replaceChildren(...items, watch);
    $("new-game").hidden = true;
    $("created").hidden = false;
  } catch (err) {
    $("error").textContent = err.message;
  } finally {
    $("start").disabled = false;
  }
}

async function init() {
  installTileDefs();
  $("banner").append(...["R1", "O2", "Y3", "G4", "B5", "P6"].map(tileIcon));
  try {
    info = await request("GET", "/api/agents");
  } catch (e) {
    $("error").textContent = e.message;
  }
  const count = $("count");
  for (let n = info.min_seats; n <= info.max_seats; n++) count.append(new Option(String(n), String(n)));
  count.value = "2";
  count.addEventListener("change", () => setCount(Number(count.value)));
  setCount(2);
  $("new-game").addEventListener("submit", start);
}

init();
