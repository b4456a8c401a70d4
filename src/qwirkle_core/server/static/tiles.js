// The 36 Qwirkle tiles as SVG symbols, and the notation of tiles and cells.
// A tile code is a colour letter (R O Y G B P) and a shape digit (1 circle, 2 square,
// 3 diamond, 4 clover, 5 four-point star, 6 eight-point star), as in docs/notation.md.

export const SVGNS = "http://www.w3.org/2000/svg";
export const COLORS = { R: "#e5332a", O: "#f58a1f", Y: "#f8d81c", G: "#34b84a", B: "#2d7fe0", P: "#9b4fd6" };
export const COLOR_NAMES = { R: "red", O: "orange", Y: "yellow", G: "green", B: "blue", P: "purple" };
export const SHAPE_NAMES = { 1: "circle", 2: "square", 3: "diamond", 4: "clover", 5: "cross", 6: "star" };

export function svg(tag, attrs = {}, children = []) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) el.append(c);
  return el;
}

function star(points, outer, inner) {
  const out = [];
  for (let i = 0; i < 2 * points; i++) {
    const a = -Math.PI / 2 + (i * Math.PI) / points;
    const r = i % 2 ? inner : outer;
    out.push(`${(50 + r * Math.cos(a)).toFixed(2)},${(50 + r * Math.sin(a)).toFixed(2)}`);
  }
  return out.join(" ");
}

// Each shape drawn in a 100 x 100 box, centred on (50, 50).
function shape(digit, fill) {
  switch (digit) {
    case "1": return [svg("circle", { cx: 50, cy: 50, r: 29, fill })];
    case "2": return [svg("rect", { x: 24, y: 24, width: 52, height: 52, fill })];
    case "3": return [svg("polygon", { points: "50,13 87,50 50,87 13,50", fill })];
    case "4": return [[50, 31], [69, 50], [50, 69], [31, 50], [50, 50]].map(([cx, cy], i) =>
      svg("circle", { cx, cy, r: i < 4 ? 16 : 14, fill }));
    case "5": return [svg("polygon", { points: star(4, 39, 11), fill })];
    case "6": return [svg("polygon", { points: star(8, 38, 19), fill })];
  }
  throw new Error(`unknown shape ${digit}`);
}

export function tileName(code) {
  return `${COLOR_NAMES[code[0]]} ${SHAPE_NAMES[code[1]]}`;
}

// Put the 36 tile symbols (ids "tile-R1" .. "tile-P6") into the page once.
export function installTileDefs() {
  if (document.getElementById("tile-defs")) return;
  const defs = svg("defs");
  const gloss = svg("linearGradient", { id: "tile-gloss", x1: 0, y1: 0, x2: 0, y2: 1 }, [
    svg("stop", { offset: "0", "stop-color": "#3a3a40" }),
    svg("stop", { offset: "1", "stop-color": "#141417" }),
  ]);
  defs.append(gloss);
  for (const c of Object.keys(COLORS)) {
    for (const s of Object.keys(SHAPE_NAMES)) {
      defs.append(svg("symbol", { id: `tile-${c}${s}`, viewBox: "0 0 100 100" }, [
        svg("rect", { x: 3, y: 3, width: 94, height: 94, rx: 11, fill: "url(#tile-gloss)", stroke: "#050506", "stroke-width": 2 }),
        svg("rect", { x: 8, y: 8, width: 84, height: 84, rx: 8, fill: "#18181b" }),
        ...shape(s, COLORS[c]),
      ]));
    }
  }
  document.body.prepend(svg("svg", { id: "tile-defs", width: 0, height: 0, "aria-hidden": "true", class: "defs" }, [defs]));
}

// A <use> of a tile symbol at (x, y), size units wide.
export function tileUse(code, x, y, size) {
  return svg("use", { href: `#tile-${code}`, x, y, width: size, height: size });
}

// A standalone tile picture (for the hand, the history, the score table).
export function tileIcon(code) {
  return svg("svg", { viewBox: "0 0 100 100", class: "tile-icon", role: "img", "aria-label": tileName(code) }, [
    svg("use", { href: `#tile-${code}` }),
  ]);
}

// "R1@0,0 R2@0,1" -> [{code: "R1", r: 0, c: 0}, {code: "R2", r: 0, c: 1}]
export function parseCells(text) {
  return text.trim().split(/\s+/).filter(Boolean).map((w) => {
    const m = /^([ROYGBP][1-6])@(-?\d+),(-?\d+)$/i.exec(w);
    if (!m) throw new Error(`not a placed tile: ${w}`);
    return { code: m[1].toUpperCase(), r: Number(m[2]), c: Number(m[3]) };
  });
}

export function formatCells(cells) {
  return cells.map((p) => `${p.code}@${p.r},${p.c}`).join(" ");
}
