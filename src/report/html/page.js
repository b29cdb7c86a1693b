// The --html page of attn (src/report/html_sink.hpp): builds the page from the run's data, the
// JSON object in <script id="attn-data">. No network, no libraries: it opens from disk.
//
// Parts: the header; the model view (a layer x head grid of thumbnails, for a model run); the head
// view (tokens in two columns joined by lines, one colour per head); then every stage in order,
// each attention tensor a heatmap with its tokens on the axes and its values on hover.
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("attn-data").textContent);
  const page = document.getElementById("attn-page");
  const tip = document.getElementById("attn-tooltip");
  const precision = data.precision || 4;

  // ---- small helpers ----------------------------------------------------------------------

  // An element with attributes (class, data-*, aria-*, on* handlers) and children (nodes or text).
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    setAttrs(node, attrs);
    return node;
  }
  function setAttrs(node, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
      else if (k === "text") node.textContent = v;
      else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : String(v));
    }
  }
  function shapeText(shape) {
    return "(" + shape.join(", ") + (shape.length === 1 ? ",)" : ")");
  }
  function product(a) {
    return a.reduce((x, y) => x * y, 1);
  }
  // A value as the tooltips show it: fixed point at --precision decimals, scientific when that
  // would print it as zero or it is huge.
  function fmt(v) {
    if (Number.isNaN(v)) return "nan";
    if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
    const a = Math.abs(v);
    if (a !== 0 && (a < 0.5 * Math.pow(10, -precision) || a >= 1e8)) return v.toExponential(precision);
    return v.toFixed(precision);
  }
  function shortNum(v) {
    if (!Number.isFinite(v)) return String(v);
    if (v === 0) return "0";
    const a = Math.abs(v);
    return a >= 0.01 && a < 1e4 ? String(Number(v.toPrecision(3))) : v.toExponential(1);
  }

  // ---- colours ------------------------------------------------------------------------------

  const ramp = data.palette.map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));
  // Viridis at t in [0, 1], as colormap.hpp samples it; null for NaN.
  function viridis(t) {
    if (Number.isNaN(t)) return null;
    const x = Math.min(1, Math.max(0, t)) * (ramp.length - 1);
    const i = Math.min(ramp.length - 2, Math.floor(x));
    const f = x - i;
    return ramp[i].map((c, k) => Math.round(c + (ramp[i + 1][k] - c) * f));
  }
  function cssColour(rgb) {
    return rgb ? "rgb(" + rgb.join(",") + ")" : "#c8c8c8";
  }
  // Head colours: hues a golden angle apart, so that neighbouring heads differ.
  function headColour(h) {
    return "hsl(" + Math.round((h * 137.508 + 210) % 360) + ", 68%, 44%)";
  }

  // ---- heatmap data ------------------------------------------------------------------------

  // A heatmap's values as one Float32Array (lead..., rows, cols), decoded once.
  function values(hm) {
    if (hm._values) return hm._values;
    const bytes = atob(hm.f32);
    const raw = new Uint8Array(bytes.length);
    for (let i = 0; i < bytes.length; i++) raw[i] = bytes.charCodeAt(i);
    const packed = new Float32Array(raw.buffer);
    const r = hm.rows, c = hm.cols, n = product(hm.lead);
    if (!hm.tril) {
      hm._values = packed;
    } else {  // only the lower triangle was kept: the rest is the causal mask's exact 0
      const full = new Float32Array(n * r * c);
      let k = 0;
      for (let p = 0; p < n; p++)
        for (let i = 0; i < r; i++)
          for (let j = 0; j <= i; j++) full[(p * r + i) * c + j] = packed[k++];
      hm._values = full;
    }
    return hm._values;
  }
  function panelOf(hm, index) {
    let p = 0;
    for (let a = 0; a < hm.lead.length; a++) p = p * hm.lead[a] + (index[a] || 0);
    return p;
  }
  function valueAt(hm, index, i, j) {
    return values(hm)[(panelOf(hm, index) * hm.rows + i) * hm.cols + j];
  }
  function scaled(hm, v) {
    return (v - hm.lo) / (hm.hi - hm.lo);
  }
  function label(hm, axis, i) {
    const labels = axis === "row" ? hm.row_labels : hm.col_labels;
    const quoted = axis === "row" ? hm.row_labelled : hm.col_labelled;
    return quoted ? JSON.stringify(labels[i]) : String(labels[i]);
  }
  // 'query "bank" -> key "river": 0.6123'
  function cellText(hm, index, i, j) {
    return hm.row_one + " " + label(hm, "row", i) + " -> " + hm.col_one + " " + label(hm, "col", j) + ": " +
      fmt(valueAt(hm, index, i, j));
  }

  // ---- the tooltip -------------------------------------------------------------------------

  function showTip(text, value, x, y) {
    tip.textContent = text;
    tip.dataset.value = String(value);
    tip.hidden = false;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    const left = x + 14 + w > window.innerWidth ? x - 14 - w : x + 14;
    const top = y + 16 + h > window.innerHeight ? y - 12 - h : y + 16;
    tip.style.left = Math.max(0, left) + "px";
    tip.style.top = Math.max(0, top) + "px";
  }
  function hideTip() {
    tip.hidden = true;
  }

  // ---- selectors -----------------------------------------------------------------------------

  // A row of buttons, one per index of an axis; onPick(i) when one is pressed.
  function picker(name, count, current, onPick, prefix) {
    const box = el("div", { class: "selector", "data-axis": name }, el("span", { class: "label", text: name }));
    const buttons = [];
    for (let i = 0; i < count; i++) {
      const b = el("button", {
        class: "pick", type: "button", "data-i": i, "aria-pressed": i === current ? "true" : "false",
        text: (prefix || "") + i,
        onclick: () => {
          buttons.forEach((o, k) => o.setAttribute("aria-pressed", k === i ? "true" : "false"));
          onPick(i);
        },
      });
      buttons.push(b);
      box.append(b);
    }
    return box;
  }

  // ---- a heatmap -----------------------------------------------------------------------------

  // One panel of `hm` at a time, with a button row per leading axis (batch, head, ...) unless
  // `fixed` gives the index. Returns the element; its show(index) redraws.
  function heatmap(hm, opts) {
    opts = opts || {};
    const index = (opts.index || hm.lead.map(() => 0)).slice();
    const root = el("div", { class: "heatmap", "data-index": index.join(",") });
    if (opts.stage) root.dataset.stage = opts.stage;
    if (opts.name) root.dataset.tensor = opts.name;
    const r = hm.rows, c = hm.cols;
    const cell = Math.max(4, Math.min(34, Math.floor(Math.min((opts.size || 440) / c, (opts.size || 440) / r))));

    if (!opts.fixed) {
      const sel = el("div", { class: "selectors" });
      hm.lead.forEach((n, a) => {
        if (n > 1) sel.append(picker(hm.lead_names[a], n, index[a], (i) => { index[a] = i; draw(); }));
      });
      if (sel.childElementCount) root.append(sel);
    }

    // Labels: every one when cells are tall enough to read, else every k-th.
    const every = Math.max(1, Math.ceil(11 / cell));
    const fontPx = Math.min(12, Math.max(8, cell - 2));
    const cols = el("div", { class: "hm-cols" });
    for (let j = 0; j < c; j++)
      cols.append(el("span", { style: "width:" + cell + "px;font-size:" + fontPx + "px", text: j % every ? "" : hm.col_labels[j], title: hm.col_labels[j] }));
    const rows = el("div", { class: "hm-rows" });
    for (let i = 0; i < r; i++)
      rows.append(el("span", { style: "height:" + cell + "px;font-size:" + fontPx + "px", text: i % every ? "" : hm.row_labels[i], title: hm.row_labels[i] }));
    const canvas = el("canvas", { width: c * cell, height: r * cell, "aria-label": "heatmap of " + (opts.name || "weights") });
    const mark = el("div", { class: "hm-mark" });
    const body = el("div", { class: "hm-body" }, canvas, mark);
    const barH = Math.max(120, r * cell);
    const bar = el("canvas", { width: 12, height: barH });
    const ticks = el("div", { class: "ticks", style: "height:" + barH + "px" },
      el("span", { text: shortNum(hm.hi) }), el("span", { text: shortNum((hm.lo + hm.hi) / 2) }), el("span", { text: shortNum(hm.lo) }));
    const grid = el("div", { class: "hm-grid" },
      el("div", { class: "hm-axis-top", style: "grid-row:1", text: hm.col_axis + " \u2192" }),
      el("div", { class: "hm-left-title", style: "grid-row:2;align-self:end;text-align:right", text: hm.row_axis + " \u2193" }),
      Object.assign(cols, { style: "grid-row:2" }),
      Object.assign(rows, { style: "grid-row:3" }),
      Object.assign(body, { style: "grid-row:3" }),
      el("div", { class: "hm-bar", style: "grid-row:3" }, bar, ticks));
    root.append(grid);
    const caption = [hm.value_name + ", colour scale " + shortNum(hm.lo) + " to " + shortNum(hm.hi) + " over the whole tensor"];
    if (hm.training) caption.push(hm.training);
    root.append(el("div", { class: "hm-caption", text: caption.join("; ") + "." }));
    if (hm.cut) root.append(el("div", { class: "small-note", text: hm.cut }));

    const bctx = bar.getContext("2d");
    for (let y = 0; y < barH; y++) {
      bctx.fillStyle = cssColour(viridis(1 - y / (barH - 1)));
      bctx.fillRect(0, y, 12, 1);
    }

    function draw() {
      root.dataset.index = index.join(",");
      const ctx = canvas.getContext("2d");
      ctx.font = Math.min(12, cell / 2.6) + "px sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      for (let i = 0; i < r; i++)
        for (let j = 0; j < c; j++) {
          const v = valueAt(hm, index, i, j);
          const rgb = viridis(scaled(hm, v));
          ctx.fillStyle = cssColour(rgb);
          ctx.fillRect(j * cell, i * cell, cell, cell);
          if (cell >= 30) {  // room for the value itself, as the articles' figures print it
            const light = rgb ? (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255 : 1;
            ctx.fillStyle = light > 0.55 ? "#111" : "#fff";
            ctx.fillText(Number.isFinite(v) ? v.toFixed(2) : String(v), j * cell + cell / 2, i * cell + cell / 2);
          }
        }
    }
    let hot = null;
    function setHot(i, j) {
      if (hot) { rows.children[hot[0]].classList.remove("hot"); cols.children[hot[1]].classList.remove("hot"); }
      hot = i === null ? null : [i, j];
      if (hot) { rows.children[i].classList.add("hot"); cols.children[j].classList.add("hot"); }
    }
    canvas.addEventListener("mousemove", (e) => {
      const box = canvas.getBoundingClientRect();
      const x = e.clientX - box.left - canvas.clientLeft, y = e.clientY - box.top - canvas.clientTop;
      const j = Math.floor(x / cell), i = Math.floor(y / cell);
      if (i < 0 || j < 0 || i >= r || j >= c) { hideTip(); setHot(null); mark.style.display = "none"; return; }
      showTip(cellText(hm, index, i, j), valueAt(hm, index, i, j), e.clientX, e.clientY);
      tip.dataset.row = i;
      tip.dataset.col = j;
      setHot(i, j);
      Object.assign(mark.style, {
        display: "block", left: canvas.offsetLeft + canvas.clientLeft + j * cell - 2 + "px",
        top: canvas.offsetTop + canvas.clientTop + i * cell - 2 + "px", width: cell + 4 + "px", height: cell + 4 + "px",
      });
    });
    canvas.addEventListener("mouseleave", () => { hideTip(); setHot(null); mark.style.display = "none"; });
    root.show = (newIndex) => { newIndex.forEach((v, a) => { index[a] = v; }); draw(); };
    root.cellSize = cell;
    draw();
    return root;
  }

  // ---- the head view ----------------------------------------------------------------------

  // Sources: every attention tensor of the page, and each layer of the model view. Tokens in two
  // columns (rows of the matrix on the left, columns on the right); pointing at a token draws its
  // lines only; each selected head in its colour, opacity = weight.
  function headView(sources) {
    const root = el("section", { class: "card headview", id: "head-view" }, el("h2", { text: "Head view" }));
    root.append(el("p", { class: "small-note",
      text: "Each line joins a token on the left (a row of the matrix: who attends) to a token on the right (who is attended to); " +
            "its opacity is the weight, its colour the head. Point at a token to see only its lines." }));
    const controls = el("div", { class: "selectors" });
    const chooser = el("select", { "aria-label": "attention tensor", class: "hv-source" });
    sources.forEach((s, k) => chooser.append(el("option", { value: k, text: s.title })));
    if (sources.length > 1) controls.append(el("label", { class: "selector" }, el("span", { class: "label", text: "weights" }), chooser));
    const axes = el("div", { class: "selectors hv-axes" });
    const heads = el("div", { class: "selector hv-heads" });
    const area = el("div", { class: "hv-area" });
    root.append(controls, axes, heads, area);

    const state = { source: null, index: [], heads: new Set(), focus: null };

    function choose(k, index, headSet) {
      const s = sources[k];
      chooser.value = String(k);
      state.source = s;
      state.index = index ? index.slice() : s.hm.lead.map((n, a) => (a === s.defaultAxis ? s.defaultIndex : 0));
      const hAxis = s.hm.head_axis;
      const nHeads = hAxis >= 0 ? s.hm.lead[hAxis] : 1;
      state.heads = headSet ? new Set(headSet) : new Set([...Array(nHeads).keys()]);
      state.focus = null;
      axes.replaceChildren();
      s.hm.lead.forEach((n, a) => {
        if (a === hAxis || n <= 1) return;
        axes.append(picker(s.hm.lead_names[a], n, state.index[a], (i) => { state.index[a] = i; drawLines(); }));
      });
      heads.replaceChildren();
      if (hAxis >= 0) {
        heads.append(el("span", { class: "label", text: "heads" }));
        const buttons = [];
        for (let h = 0; h < nHeads; h++) {
          const b = el("button", {
            class: "head", type: "button", "data-head": h, "aria-pressed": state.heads.has(h) ? "true" : "false",
            style: "border-color:" + headColour(h) + ";background:" + headColour(h), text: String(h),
            title: "head " + h + ": click to show or hide, double-click for this head alone",
            onclick: () => { if (state.heads.has(h)) state.heads.delete(h); else state.heads.add(h); sync(); },
            ondblclick: () => { state.heads = new Set([h]); sync(); },
          });
          buttons.push(b);
          heads.append(b);
        }
        const all = el("button", { class: "pick", type: "button", "data-all": "", text: "all",
          onclick: () => { state.heads = new Set([...Array(nHeads).keys()]); sync(); } });
        const none = el("button", { class: "pick", type: "button", "data-none": "", text: "none",
          onclick: () => { state.heads = new Set(); sync(); } });
        heads.append(all, none);
        function sync() {
          buttons.forEach((b, h) => b.setAttribute("aria-pressed", state.heads.has(h) ? "true" : "false"));
          drawLines();
        }
      }
      build();
    }

    let lineLayer = null, leftTexts = [], rightTexts = [], geometry = null;
    function build() {
      const hm = state.source.hm;
      const r = hm.rows, c = hm.cols, step = 20, width = 660, pad = 12;
      const height = Math.max(r, c) * step + 2 * pad + 18;
      const box = svg("svg", { class: "hv-svg", width: width, height: height, viewBox: "0 0 " + width + " " + height });
      const xl = 210, xr = width - 210;
      box.append(Object.assign(svg("text", { x: xl, y: 12, "text-anchor": "end", class: "muted" }), { textContent: hm.row_axis }));
      box.append(Object.assign(svg("text", { x: xr, y: 12, "text-anchor": "start" }), { textContent: hm.col_axis }));
      lineLayer = svg("g", { class: "hv-lines" });
      box.append(lineLayer);
      leftTexts = [];
      rightTexts = [];
      const clip = (s) => (s.length > 22 ? s.slice(0, 21) + "\u2026" : s);
      for (let i = 0; i < r; i++) {
        const y = pad + 18 + i * step;
        const g = svg("g", { class: "hv-tok", "data-side": "q", "data-i": i });
        const bg = svg("rect", { class: "tok-bg", x: 0, y: y - step / 2, width: xl + 4, height: step });
        const t = svg("text", { x: xl, y: y + 4, "text-anchor": "end" });
        t.textContent = clip(hm.row_labels[i]);
        g.append(bg, t);
        g.addEventListener("mouseenter", () => focus({ side: "q", i: i }));
        g.addEventListener("mouseleave", () => focus(null));
        box.append(g);
        leftTexts.push(g);
      }
      for (let j = 0; j < c; j++) {
        const y = pad + 18 + j * step;
        const g = svg("g", { class: "hv-tok", "data-side": "k", "data-i": j });
        const bg = svg("rect", { class: "tok-bg", x: xr - 4, y: y - step / 2, width: width - xr + 4, height: step });
        const t = svg("text", { x: xr, y: y + 4, "text-anchor": "start" });
        t.textContent = clip(hm.col_labels[j]);
        g.append(bg, t);
        g.addEventListener("mouseenter", () => focus({ side: "k", i: j }));
        g.addEventListener("mouseleave", () => focus(null));
        box.append(g);
        rightTexts.push(g);
      }
      geometry = { y0: pad + 18, step: step, x1: xl + 6, x2: xr - 6 };
      area.replaceChildren(box);
      if (hm.cut) area.append(el("div", { class: "small-note", text: hm.cut }));
      drawLines();
    }
    function focus(f) {
      state.focus = f;
      leftTexts.forEach((g, i) => g.querySelectorAll("rect,text").forEach((n) => n.classList.toggle("hot", !!f && f.side === "q" && f.i === i)));
      rightTexts.forEach((g, j) => g.querySelectorAll("rect,text").forEach((n) => n.classList.toggle("hot", !!f && f.side === "k" && f.i === j)));
      drawLines();
    }
    // Without a token pointed at, every line is drawn when there are few enough to read.
    const kAllLines = 6000;
    function drawLines() {
      const hm = state.source.hm, r = hm.rows, c = hm.cols, hAxis = hm.head_axis;
      const index = state.index.slice();
      const heads = hAxis >= 0 ? [...state.heads].sort((a, b) => a - b) : [0];
      lineLayer.replaceChildren();
      const f = state.focus;
      if (!f && heads.length * r * c > kAllLines) return;
      for (const h of heads) {
        if (hAxis >= 0) index[hAxis] = h;
        const colour = hAxis >= 0 ? headColour(h) : "#2f5fb3";
        for (let i = 0; i < r; i++) {
          if (f && f.side === "q" && f.i !== i) continue;
          for (let j = 0; j < c; j++) {
            if (f && f.side === "k" && f.i !== j) continue;
            const w = valueAt(hm, index, i, j);
            if (!(w > 0.001)) continue;
            const y1 = geometry.y0 + i * geometry.step, y2 = geometry.y0 + j * geometry.step;
            lineLayer.append(svg("line", {
              x1: geometry.x1, y1: y1, x2: geometry.x2, y2: y2, stroke: colour, "stroke-width": 2,
              "stroke-opacity": Math.min(1, w * (f ? 1 : 0.8)), "data-head": h, "data-q": i, "data-k": j, "data-w": w,
            }));
          }
        }
      }
    }
    chooser.addEventListener("change", () => choose(Number(chooser.value)));
    root.choose = (k, index, headSet) => choose(k, index, headSet);
    const first = sources.findIndex((s) => s.preferred);
    choose(first >= 0 ? first : 0);
    return root;
  }

  // ---- the model view -----------------------------------------------------------------------

  function modelView(model, onOpen) {
    const hm = model.heatmap;
    const [L, B, H] = hm.lead;
    const T = hm.rows;
    const root = el("section", { class: "card modelview", id: "model-view" }, el("h2", { text: "Model view: every layer and head" }));
    root.append(el("p", { class: "small-note",
      text: L + " layers \u00d7 " + H + " heads of " + model.name + " " + shapeText(model.shape) +
            " (outputs.attentions stacked), each thumbnail a " + T + " \u00d7 " + hm.cols + " matrix on one colour scale " +
            shortNum(hm.lo) + " to " + shortNum(hm.hi) + ". Click one to open it large below." +
            (B > 1 ? " Batch entry 0 is shown." : "") }));
    if (hm.cut) root.append(el("div", { class: "page-note", text: hm.cut }));
    const px = Math.max(28, Math.min(64, Math.floor(720 / H)));
    const table = el("table", { class: "mv" });
    const head = el("tr", {}, el("th", {}));
    for (let h = 0; h < H; h++) head.append(el("th", { text: "h" + h }));
    table.append(head);
    const thumbs = [];
    for (let l = 0; l < L; l++) {
      const tr = el("tr", {}, el("th", { text: "L" + l }));
      for (let h = 0; h < H; h++) {
        const canvas = el("canvas", { width: hm.cols, height: T, style: "width:" + px + "px;height:" + Math.round(px * T / hm.cols) + "px" });
        const ctx = canvas.getContext("2d");
        const img = ctx.createImageData(hm.cols, T);
        for (let i = 0; i < T; i++)
          for (let j = 0; j < hm.cols; j++) {
            const rgb = viridis(scaled(hm, valueAt(hm, [l, 0, h], i, j))) || [200, 200, 200];
            const o = (i * hm.cols + j) * 4;
            img.data[o] = rgb[0]; img.data[o + 1] = rgb[1]; img.data[o + 2] = rgb[2]; img.data[o + 3] = 255;
          }
        ctx.putImageData(img, 0, 0);
        const b = el("button", { class: "thumb", type: "button", "data-layer": l, "data-head": h, "aria-pressed": "false",
          title: "layer " + l + ", head " + h, "aria-label": "layer " + l + ", head " + h, onclick: () => open(l, h) }, canvas);
        thumbs.push(b);
        tr.append(el("td", {}, b));
      }
      table.append(tr);
    }
    root.append(el("div", { class: "mv-wrap" }, table));
    const detail = el("div", { class: "mv-detail" });
    root.append(detail);
    function open(l, h, quiet) {
      thumbs.forEach((b) => b.setAttribute("aria-pressed", Number(b.dataset.layer) === l && Number(b.dataset.head) === h ? "true" : "false"));
      detail.replaceChildren(el("h3", { text: "Layer " + l + ", head " + h + " (layer " + (l + 1) + ", head " + (h + 1) + " counted from 1)" }),
        heatmap(hm, { fixed: true, index: [l, 0, h], name: model.name, stage: model.stage }));
      detail.dataset.layer = l;
      detail.dataset.head = h;
      if (!quiet && onOpen) onOpen(l, h);
    }
    open(L - 1, 0, true);
    return root;
  }

  // ---- a curve ------------------------------------------------------------------------------

  function curve(item) {
    const ys = item.curve.map(Number);
    const w = 520, h = 170, left = 54, bottom = 26, top = 10;
    const finite = ys.filter(Number.isFinite);
    const box = svg("svg", { width: w, height: h, class: "curve" });
    if (!finite.length) return box;
    const log = finite.every((v) => v > 0) && Math.max(...finite) / Math.min(...finite) > 20;
    const f = (v) => (log ? Math.log10(v) : v);
    let lo = Math.min(...finite.map(f)), hi = Math.max(...finite.map(f));
    if (hi === lo) { hi += 1; lo -= 1; }
    const X = (i) => left + (ys.length > 1 ? (i / (ys.length - 1)) * (w - left - 10) : 0);
    const Y = (v) => top + (1 - (f(v) - lo) / (hi - lo)) * (h - top - bottom);
    box.append(svg("rect", { x: left, y: top, width: w - left - 10, height: h - top - bottom, fill: "#fafbfd", stroke: "#d9dde6" }));
    let d = "";
    ys.forEach((v, i) => { if (Number.isFinite(v)) d += (d && Number.isFinite(ys[i - 1]) ? "L" : "M") + X(i).toFixed(1) + " " + Y(v).toFixed(1); });
    box.append(svg("path", { d: d, fill: "none", stroke: "#2f5fb3", "stroke-width": 1.6 }));
    const label = (x, y, t, anchor) => { const n = svg("text", { x: x, y: y, "text-anchor": anchor, "font-size": 11, fill: "#5b6477" }); n.textContent = t; box.append(n); };
    const top_ = log ? Math.pow(10, hi) : hi, bot_ = log ? Math.pow(10, lo) : lo;
    label(left - 4, top + 8, shortNum(top_), "end");
    label(left - 4, h - bottom, shortNum(bot_), "end");
    label(left, h - 8, "1", "start");
    label(w - 10, h - 8, item.curve_x + " " + ys.length, "end");
    if (log) label(left + 4, top + 12, "log scale", "start");
    return box;
  }

  // ---- the stages -----------------------------------------------------------------------------

  function shapesLine(name, list) {
    if (!list.length) return null;
    const line = el("div", { class: "shapes" }, name + ": ");
    list.forEach((s, k) => { if (k) line.append(", "); line.append(el("b", { class: "mono", text: s.name }), " " + shapeText(s.shape)); });
    return line;
  }

  function tensorItem(stage, item) {
    const box = el("div", { class: "tensor", "data-name": item.name },
      el("div", {}, el("span", { class: "tensor-name", text: item.name }), el("span", { class: "tensor-shape", text: shapeText(item.shape) })));
    if (item.heatmap) box.append(heatmap(item.heatmap, { name: item.name, stage: stage.index }));
    if (item.curve) box.append(curve(item));
    if (item.curve_note) box.append(el("div", { class: "small-note", text: item.curve_note }));
    if (item.text !== undefined) {
      const pre = el("pre", { class: "values", text: item.text });
      if (item.heatmap || item.text.split("\n").length > 24)
        box.append(el("details", { open: !item.heatmap && null }, el("summary", { text: "values as PyTorch prints them" }), pre));
      else box.append(pre);
    }
    if (item.summarised) box.append(el("div", { class: "small-note", text: item.summarised }));
    if (item.no_values) box.append(el("div", { class: "small-note", text: item.no_values }));
    return box;
  }

  function tableItem(item) {
    const numeric = (s) => /^[-+0-9.eE%x ]+$/.test(s) && /[0-9]/.test(s);
    const t = el("table", { class: "data" });
    const head = el("tr");
    item.header.forEach((h) => head.append(el("th", { text: h })));
    t.append(head);
    item.rows.forEach((row, k) => {
      if (item.gap_after !== undefined && k === item.gap_after)
        t.append(el("tr", { class: "gap" }, el("td", { colspan: item.header.length, text: "\u2026 " + item.note })));
      const tr = el("tr");
      row.forEach((cell) => tr.append(el("td", { class: numeric(cell) ? "num" : null, text: cell })));
      t.append(tr);
    });
    return el("div", { class: "table-wrap", style: "overflow-x:auto" }, t);
  }

  function stageSection(s) {
    const total = data.header.total;
    const sec = el("section", { class: "card stage", id: "stage-" + s.index, "data-index": s.index },
      el("h2", {}, el("span", { class: "stage-num", text: "[" + s.index + "/" + total + "]" }), s.title));
    if (s.equation) sec.append(el("pre", { class: "eq", text: s.equation }));
    sec.append(...[shapesLine("in", s.inputs), shapesLine("out", s.outputs)].filter(Boolean));
    for (const item of s.items) {
      if (item.kind === "tensor") sec.append(tensorItem(s, item));
      else if (item.kind === "note") sec.append(el("p", { class: "note", text: item.text }));
      else if (item.kind === "table") sec.append(tableItem(item));
      else if (item.kind === "check")
        sec.append(el("div", { class: "check " + (item.question ? "question" : item.passed ? "passed" : "failed"),
          "data-passed": item.passed ? "true" : "false", text: item.line }));
    }
    return sec;
  }

  // ---- the header ---------------------------------------------------------------------------

  function kib(n) {
    return n >= 1048576 ? (n / 1048576).toFixed(2) + " MiB" : (n / 1024).toFixed(1) + " KiB";
  }

  function headerCard() {
    const h = data.header;
    const card = el("header", { class: "card header" }, el("h1", { text: h.invocation + ": " + h.title }));
    if (h.follows) card.append(el("p", { class: "follows", text: "follows: " + h.follows }));
    if (h.setting.length) {
      const chips = el("ul", { class: "chips", "aria-label": "setting" });
      h.setting.forEach((s) => chips.append(el("li", { text: s })));
      card.append(chips);
    }
    if (h.command) card.append(el("div", { class: "small-note" }, "command: ", el("code", { text: h.command })));
    if (h.reproduce.length) card.append(el("h3", { text: "reproduce in PyTorch" }), el("pre", { class: "reproduce", text: h.reproduce.join("\n") }));
    card.append(el("p", { class: "muted", text: h.stages_line }));
    const p = data.page;
    card.append(el("div", { class: "budget", id: "page-budget" },
      "This page: " + kib(Number(p.bytes)) + " of its " + p.budget_text + " budget, in one file that fetches nothing. " +
      "Heatmaps hold " + p.heatmap_values.toLocaleString("en") + " of at most " + p.heatmap_budget.toLocaleString("en") +
      " values (" + p.max_side + " tokens a side), printed values at most " + kib(p.text_budget) + "."));
    p.notes.forEach((n) => card.append(el("div", { class: "page-note", text: n })));
    const toc = el("ol", { class: "toc" });
    if (data.model) toc.append(el("li", { style: "list-style:none" }, el("a", { href: "#model-view", text: "Model view" })));
    data.stages.forEach((s) => toc.append(el("li", { value: s.index }, el("a", { href: "#stage-" + s.index, text: s.title }))));
    card.append(el("details", { open: data.stages.length <= 20 || null }, el("summary", { text: "stages" }), toc));
    return card;
  }

  // ---- the page -----------------------------------------------------------------------------

  page.append(headerCard());
  const sources = [];
  if (data.model) {
    const hm = data.model.heatmap;
    sources.push({ title: "every layer (model view): " + data.model.name, hm: hm, preferred: true, defaultAxis: 0, defaultIndex: hm.lead[0] - 1 });
  }
  data.stages.forEach((s) => s.items.forEach((item) => {
    // A head view joins tokens to tokens: a (layers, heads) map of scores is not one.
    if (item.heatmap && item.heatmap.rows > 0 && item.heatmap.row_axis !== "layers")
      sources.push({ title: "[" + s.index + "] " + item.name + " " + shapeText(item.shape), hm: item.heatmap, preferred: item.heatmap.head_axis >= 0 && !data.model });
  }));
  let hv = null;
  if (sources.length) hv = headView(sources);
  if (data.model) page.append(modelView(data.model, (l, h) => { if (hv) { hv.choose(0, [l, 0, h], [h]); } }));
  if (hv) page.append(hv);
  data.stages.forEach((s) => page.append(stageSection(s)));
  document.documentElement.dataset.attnReady = "true";
})();
