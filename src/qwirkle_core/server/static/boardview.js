// The board: an SVG you can pan (drag) and zoom (wheel, buttons) that fits itself to
// the tiles as the game grows, until you move it yourself ("fit" brings that back).
// A cell is 100 units; cell (row, col) spans x = 100 col .. 100 col + 100,
// y = 100 row .. 100 row + 100 (rows grow downward, as in the notation).
// The row numbers run down the left edge and the column numbers along the top edge of
// the view, redrawn as it pans and zooms, so a move's cells (R1@-2,3) can be found.

import { svg, tileUse, tileName } from "./tiles.js";

const CELL = 100;
const MIN_PX = 14; // pixels per cell, zoomed out
const MAX_PX = 120;
// pixels: the strips, the text, the least room per column label and per row label
const RULER = { top: 18, left: 28, font: 11, colGap: 26, rowGap: 14 };

export class BoardView {
  // onCell(kind, row, col): kind "target" (a cell where the selected tile may go) or
  // "staged" (a tile placed this turn, not yet confirmed).
  constructor(el, onCell) {
    this.el = el;
    this.onCell = onCell;
    this.content = { board: [], staged: [], targets: [], last: [], cursor: null };
    this.view = { cx: 50, cy: 50, px: 64 }; // centre in units, pixels per cell
    this.autoFit = true;
    this.layers = {};
    for (const name of ["grid", "tiles", "last", "staged", "targets", "cursor", "coords"]) {
      this.layers[name] = svg("g", { class: `layer-${name}` });
      el.append(this.layers[name]);
    }
    this.drag = null;
    el.addEventListener("pointerdown", (e) => this.pointerDown(e));
    el.addEventListener("pointermove", (e) => this.pointerMove(e));
    el.addEventListener("pointerup", (e) => this.pointerUp(e));
    el.addEventListener("pointercancel", () => { this.drag = null; });
    el.addEventListener("wheel", (e) => this.wheel(e), { passive: false });
    new ResizeObserver(() => (this.autoFit ? this.fit(false) : this.layout())).observe(el); // a phone: the panels grow
  }

  set(content) {
    Object.assign(this.content, content);
    this.draw();
    if (this.autoFit) this.fit(false); else this.layout();
  }

  bounds() {
    const cells = [...this.content.board, ...this.content.staged, ...this.content.targets];
    if (!cells.length) return { r0: -2, r1: 2, c0: -2, c1: 4 };
    const rs = cells.map((p) => p.r), cs = cells.map((p) => p.c);
    return { r0: Math.min(...rs) - 1, r1: Math.max(...rs) + 1, c0: Math.min(...cs) - 1, c1: Math.max(...cs) + 1 };
  }

  fit(manual = true) {
    if (manual) this.autoFit = true;
    const b = this.bounds();
    const w = this.el.clientWidth || 800, h = this.el.clientHeight || 600;
    const px = Math.min(w / (b.c1 - b.c0 + 1), h / (b.r1 - b.r0 + 1), 90);
    this.view = { cx: ((b.c0 + b.c1 + 1) * CELL) / 2, cy: ((b.r0 + b.r1 + 1) * CELL) / 2, px: Math.max(MIN_PX, px) };
    this.layout();
  }

  zoom(factor, at = null) {
    const v = this.view;
    const px = Math.min(MAX_PX, Math.max(MIN_PX, v.px * factor));
    if (at) { // keep the unit point under the pointer where it is
      v.cx = at.x - ((at.x - v.cx) * v.px) / px;
      v.cy = at.y - ((at.y - v.cy) * v.px) / px;
    }
    v.px = px;
    this.autoFit = false;
    this.layout();
  }

  layout() {
    const w = this.el.clientWidth || 800, h = this.el.clientHeight || 600;
    const upp = CELL / this.view.px; // units per pixel
    const x = this.view.cx - (w * upp) / 2, y = this.view.cy - (h * upp) / 2;
    this.el.setAttribute("viewBox", `${x} ${y} ${w * upp} ${h * upp}`);
    this.drawCoords(x, y, w * upp, h * upp, upp);
  }

  // The rulers: column numbers in a strip along the top, row numbers down the left, for
  // the cells in view (every k-th one when zoomed out so far that they would touch).
  drawCoords(x, y, w, h, upp) {
    const g = this.layers.coords;
    g.replaceChildren();
    const top = RULER.top * upp, left = RULER.left * upp, font = RULER.font * upp;
    g.append(svg("rect", { x, y, width: w, height: top, class: "ruler" }));
    g.append(svg("rect", { x, y, width: left, height: h, class: "ruler" }));
    const every = (n, gap) => {
      const step = Math.max(1, Math.ceil(gap / this.view.px));
      return ((n % step) + step) % step === 0;
    };
    for (let c = Math.floor((x + left) / CELL); c * CELL < x + w; c++) {
      if (!every(c, RULER.colGap) || (c + 0.5) * CELL < x + left) continue;
      g.append(svg("text", { x: (c + 0.5) * CELL, y: y + top - 5 * upp, "font-size": font, "text-anchor": "middle", class: "coord", "data-col": c }, [document.createTextNode(c)]));
    }
    for (let r = Math.floor((y + top) / CELL); r * CELL < y + h; r++) {
      if (!every(r, RULER.rowGap) || (r + 0.5) * CELL < y + top) continue;
      g.append(svg("text", { x: x + left - 5 * upp, y: (r + 0.5) * CELL + 0.35 * font, "font-size": font, "text-anchor": "end", class: "coord", "data-row": r }, [document.createTextNode(r)]));
    }
  }

  toUnits(e) {
    const m = this.el.getScreenCTM().inverse();
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(m);
    return { x: p.x, y: p.y };
  }

  pointerDown(e) {
    if (e.button !== 0) return;
    this.drag = { x: e.clientX, y: e.clientY, cx: this.view.cx, cy: this.view.cy, moved: false, id: e.pointerId };
  }

  pointerMove(e) {
    const d = this.drag;
    if (!d) return;
    const dx = e.clientX - d.x, dy = e.clientY - d.y;
    if (!d.moved && Math.hypot(dx, dy) < 4) return;
    if (!d.moved) this.el.setPointerCapture(d.id);
    d.moved = true;
    this.autoFit = false;
    this.view.cx = d.cx - (dx * CELL) / this.view.px;
    this.view.cy = d.cy - (dy * CELL) / this.view.px;
    this.el.classList.add("panning");
    this.layout();
  }

  pointerUp(e) {
    const d = this.drag;
    this.drag = null;
    this.el.classList.remove("panning");
    if (!d || d.moved) return;
    const hit = e.target.closest("[data-cell]");
    if (hit) {
      const [r, c] = hit.dataset.cell.split(",").map(Number);
      this.onCell(hit.dataset.kind, r, c);
    }
  }

  wheel(e) {
    e.preventDefault();
    this.zoom(Math.exp(-e.deltaY / 400), this.toUnits(e));
  }

  draw() {
    const { board, staged, targets, last, cursor } = this.content;
    const L = this.layers;
    for (const g of Object.values(L)) g.replaceChildren();
    const b = this.bounds();
    L.grid.append(svg("rect", {
      x: (b.c0 - 40) * CELL, y: (b.r0 - 40) * CELL, width: (b.c1 - b.c0 + 81) * CELL, height: (b.r1 - b.r0 + 81) * CELL,
      class: "grid-bg",
    }));
    for (const p of board) {
      const t = tileUse(p.code, p.c * CELL, p.r * CELL, CELL);
      t.setAttribute("class", "board-tile");
      t.dataset.tile = p.code;
      t.dataset.at = `${p.r},${p.c}`;
      L.tiles.append(t);
    }
    for (const p of last) {
      L.last.append(svg("rect", { x: p.c * CELL + 2, y: p.r * CELL + 2, width: CELL - 4, height: CELL - 4, rx: 12, class: "last-move" }));
    }
    for (const p of staged) {
      const g = svg("g", { class: "staged", "data-cell": `${p.r},${p.c}`, "data-kind": "staged" }, [
        tileUse(p.code, p.c * CELL, p.r * CELL, CELL),
        svg("rect", { x: p.c * CELL + 2, y: p.r * CELL + 2, width: CELL - 4, height: CELL - 4, rx: 12, class: "staged-ring" }),
      ]);
      g.append(svg("title", {}, [document.createTextNode(`${tileName(p.code)} (placed this turn; click to take back)`)]));
      L.staged.append(g);
    }
    for (const p of targets) {
      const cell = svg("rect", {
        x: p.c * CELL + 6, y: p.r * CELL + 6, width: CELL - 12, height: CELL - 12, rx: 14,
        class: "target", "data-cell": `${p.r},${p.c}`, "data-kind": "target",
      });
      cell.append(svg("title", {}, [document.createTextNode(`row ${p.r}, column ${p.c}`)]));
      L.targets.append(cell);
    }
    if (cursor) {
      L.cursor.append(svg("rect", { x: cursor.c * CELL - 2, y: cursor.r * CELL - 2, width: CELL + 4, height: CELL + 4, rx: 16, class: "cursor" }));
    }
  }
}
