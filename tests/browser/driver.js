// Test code, never part of the product page: tests/browser/test_browser.cpp appends this script to
// a page attn wrote with --html, after window.ATTN_EXPECT (what the text and JSON outputs say), and
// loads it in headless chromium. It points at cells, clicks heads and thumbnails like a reader,
// and writes one verdict per line into <pre id="attn-test-verdicts">: "ok: ..." or "FAIL: ...",
// then "done". The test reads the dumped DOM. Script errors are collected from the first moment
// by a snippet put at the top of <head> (window.__attnErrors).
(function () {
  "use strict";
  const lines = [];
  const ok = (what) => lines.push("ok: " + what);
  const fail = (what) => lines.push("FAIL: " + what);
  const expect = (cond, what) => (cond ? ok(what) : fail(what));
  const near = (got, want, tol) => Math.abs(got - want) <= tol;
  const E = window.ATTN_EXPECT;

  // Points at cell (row, col) of a heatmap element like a mouse would; returns the tooltip.
  function hover(heatmap, row, col) {
    const canvas = heatmap.querySelector(".hm-body canvas");
    const cell = heatmap.cellSize;
    const box = canvas.getBoundingClientRect();
    const x = box.left + canvas.clientLeft + (col + 0.5) * cell, y = box.top + canvas.clientTop + (row + 0.5) * cell;
    canvas.dispatchEvent(new MouseEvent("mousemove", { clientX: x, clientY: y, bubbles: true }));
    return document.getElementById("attn-tooltip");
  }

  // The tooltip against the expected cell: its text up to the value exactly, the value within
  // half a unit of the last printed decimal, and the raw value within float rounding.
  function checkTooltip(tip, cell, what) {
    if (tip.hidden) return fail(what + ": no tooltip shown");
    const text = tip.textContent;
    const colon = text.lastIndexOf(": ");
    expect(text.slice(0, colon) === cell.text, what + ": tooltip names " + JSON.stringify(text.slice(0, colon)) + ", expected " + JSON.stringify(cell.text));
    const shown = parseFloat(text.slice(colon + 2));
    expect(near(shown, cell.value, 0.5e-4 + 1e-9), what + ": tooltip shows " + text.slice(colon + 2) + ", the JSON output " + cell.value);
    const raw = parseFloat(tip.dataset.value);
    expect(near(raw, cell.value, 1e-6 * Math.max(1, Math.abs(cell.value))), what + ": tooltip value " + raw + " = " + cell.value);
  }

  function run() {
    const errors = window.__attnErrors || ["the error catcher was not installed"];
    expect(errors.length === 0, "no script errors" + (errors.length ? ": " + errors.join(" | ") : ""));
    expect(document.documentElement.dataset.attnReady === "true", "the page script ran to its end");
    const stages = document.querySelectorAll("section.stage").length;
    expect(stages === E.stages, stages + " stage panels, expected " + E.stages);
    const maps = document.querySelectorAll("section.stage .heatmap").length;
    expect(maps === E.heatmaps, maps + " heatmaps in the stages, expected " + E.heatmaps);
    const checks = document.querySelectorAll("section.stage .check").length;
    expect(checks === E.checks, checks + " checks, expected " + E.checks);
    const budget = document.getElementById("page-budget");
    expect(budget && /of its 4\.00 MiB budget/.test(budget.textContent), "the page states its size budget");

    for (const c of E.cells || []) {
      const what = "stage " + c.stage + " " + c.tensor + " [" + c.index.join(", ") + "] (" + c.row + ", " + c.col + ")";
      const map = document.querySelector('section.stage .heatmap[data-stage="' + c.stage + '"][data-tensor="' + c.tensor + '"]');
      if (!map) { fail(what + ": no heatmap"); continue; }
      // Pick the panel with the heatmap's own buttons (batch, head).
      c.axes.forEach((name, a) => {
        const b = map.querySelector('.selector[data-axis="' + name + '"] button[data-i="' + c.index[a] + '"]');
        if (b) b.click();
        else if (c.index[a] !== 0) fail(what + ": no " + name + " button " + c.index[a]);
      });
      expect(map.dataset.index === c.index.join(","), what + ": panel [" + map.dataset.index + "] shown");
      checkTooltip(hover(map, c.row, c.col), c, what);
    }

    if (E.model) {
      const m = E.model;
      const thumbs = document.querySelectorAll(".modelview button.thumb").length;
      expect(thumbs === m.thumbs, thumbs + " model-view thumbnails, expected " + m.thumbs);
      const t = document.querySelector('.modelview button.thumb[data-layer="' + m.layer + '"][data-head="' + m.head + '"]');
      if (!t) fail("no thumbnail for layer " + m.layer + ", head " + m.head);
      else {
        t.click();
        const d = document.querySelector(".mv-detail");
        expect(d.dataset.layer === String(m.layer) && d.dataset.head === String(m.head), "the thumbnail opens layer " + m.layer + ", head " + m.head);
        const map = d.querySelector(".heatmap");
        expect(map && map.dataset.index === m.layer + ",0," + m.head, "the large heatmap shows [" + (map && map.dataset.index) + "]");
        if (map) checkTooltip(hover(map, m.row, m.col), m, "model view layer " + m.layer + " head " + m.head);
      }
    }

    if (E.headview) {
      const h = E.headview;
      const view = document.querySelector(".headview");
      if (!view) fail("no head view");
      else {
        const select = view.querySelector("select.hv-source");
        if (h.source && select) {
          const option = [...select.options].find((o) => o.textContent.startsWith(h.source));
          if (!option) fail("no head-view source " + h.source);
          else { select.value = option.value; select.dispatchEvent(new Event("change")); }
        }
        for (const [name, i] of h.picks || []) {
          const b = view.querySelector('.hv-axes .selector[data-axis="' + name + '"] button[data-i="' + i + '"]');
          if (b) b.click(); else fail("head view: no " + name + " button " + i);
        }
        if (h.head !== null) {
          view.querySelector(".hv-heads button[data-none]").click();
          view.querySelector('.hv-heads button.head[data-head="' + h.head + '"]').click();
        }
        const tok = view.querySelector('g.hv-tok[data-side="q"][data-i="' + h.row + '"]');
        if (!tok) fail("head view: no query token " + h.row);
        else {
          tok.dispatchEvent(new MouseEvent("mouseenter"));
          const all = [...view.querySelectorAll("line")];
          const head = h.head === null ? "0" : String(h.head);
          expect(all.length > 0 && all.every((l) => l.dataset.q === String(h.row) && l.dataset.head === head),
            "head view: " + all.length + " lines, all from query " + h.row + " in head " + head);
          const line = view.querySelector('line[data-head="' + head + '"][data-k="' + h.col + '"]');
          if (!line) fail("head view: no line from query " + h.row + " to key " + h.col);
          else {
            const w = parseFloat(line.dataset.w);
            expect(near(w, h.value, 1e-6), "head view: line " + h.row + " -> " + h.col + " weighs " + w + ", the JSON output " + h.value);
            expect(near(parseFloat(line.getAttribute("stroke-opacity")), Math.min(1, h.value), 1e-6), "head view: its opacity is its weight");
          }
          expect(tok.querySelector("text").classList.contains("hot"), "head view: the token pointed at is highlighted");
        }
      }
    }
    const out = document.createElement("pre");
    out.id = "attn-test-verdicts";
    out.textContent = lines.join("\n") + "\ndone\n";
    document.body.append(out);
  }

  window.addEventListener("load", () => {
    try {
      run();
    } catch (e) {
      const out = document.createElement("pre");
      out.id = "attn-test-verdicts";
      out.textContent = lines.join("\n") + "\nFAIL: the driver threw: " + e + "\ndone\n";
      document.body.append(out);
    }
  });
})();
