// The report's cost section: a table and a bar chart (plain HTML/CSS), and the on-demand offer where a grading
// has none. Everything from a submission is written with textContent (via el()), never parsed as HTML.
(function () {
  "use strict";

  // A byte count as text, by `units` (the page's T.byte_units, judge/costs/view.py's BYTE_UNITS: [name, size,
  // decimals]): the largest unit not above the count, rounded half up in integers, as the report's Python does.
  function bytes(n, units) {
    let count = BigInt(Math.round(n));
    const sign = count < 0n ? "-" : "";
    if (count < 0n) count = -count;
    let unit = units[0];
    units.forEach((u) => { if (count >= BigInt(u[1])) unit = u; });
    const [name, sizeNumber, decimals] = unit;
    const size = BigInt(sizeNumber), scale = 10n ** BigInt(decimals);
    const scaled = (2n * count * scale + size) / (2n * size);
    const whole = scaled / scale, part = (scaled % scale).toString().padStart(decimals, "0");
    return sign + whole.toString() + (decimals ? "." + part : "") + " " + name;
  }
  const WHO = ["learner", "reference", "starter"];
  const compiledBytes = (c) => c.bytes_estimate + c.eager_bytes_outside;
  const ok = (f) => f && !f.unavailable && f.eager && f.compiled;

  function panel(cost, T, el, fmt) {
    const size = (n) => bytes(n, T.byte_units);
    const label = (who) => T["cost_" + who];
    const figures = WHO.map((who) => cost.figures.find((f) => f.who === who)).filter(Boolean);
    const timed = figures.some((f) => f.compiled_time);
    const head = [T.cost_function, T.cost_eager_ops, T.cost_eager_bytes, T.cost_kernels, T.cost_compiled_bytes,
                  T.cost_saved, T.cost_compiling].concat(timed ? [T.cost_gpu_time, T.cost_cpu_step] : []);
    // What compiling cost (judge.costs.view.compile_text): frames · graphs · guards · seconds, "—" where not counted
    const compiling = (c) => {
      const k = c.compile;
      if (!k) return "";
      const seconds = (k.dynamo_s || 0) + k.inductor_s;
      return [k.frames == null ? "\u2014" : k.frames, c.graphs, k.guards == null ? "\u2014" : k.guards,
              seconds.toFixed(1) + " s"].join(" \u00b7 ");
    };
    const rows = figures.map((f) => {
      if (!ok(f)) return el("tr", {"data-who": f.who}, el("th", {scope: "row"}, label(f.who)),
                            el("td", {colspan: head.length - 1, class: "muted"}, f.unavailable || ""));
      const c = f.compiled, e = f.eager;
      const n = c.kernels.length + " + " + c.extern_calls.length + (c.eager_ops_outside ? " + " + c.eager_ops_outside : "");
      const saved = compiledBytes(c) ? (e.bytes_read + e.bytes_written) / compiledBytes(c) : 0;
      const cells = [e.ops, size(e.bytes_read + e.bytes_written), n, size(compiledBytes(c)), saved.toFixed(1) + "\u00d7", compiling(c)];
      if (timed) {
        const t = f.compiled_time, et = f.eager_time;
        cells.push(t ? (et ? et.median_us.toFixed(1) + " \u2192 " : "") + t.median_us.toFixed(1) + " \u00b1 " + t.spread_us.toFixed(1) : "");
        cells.push(t && t.cpu_us_per_step != null ? (et && et.cpu_us_per_step != null ? et.cpu_us_per_step.toFixed(1) + " \u2192 " : "") + t.cpu_us_per_step.toFixed(1) : "");
      }
      return el("tr", {"data-who": f.who, title: c.kernels.concat(c.extern_calls).join(", ")},
                el("th", {scope: "row"}, label(f.who)), cells.map((v) => el("td", {class: "num"}, String(v))));
    });
    const table = el("table", {class: "cost-table"},
      el("thead", {}, el("tr", {}, head.map((h) => el("th", {scope: "col"}, h)))), el("tbody", {}, rows));
    // Bytes moved: yours eager, then each function compiled; the widest bar is the full width.
    const bars = [];
    const mine = figures.find((f) => f.who === "learner");
    if (ok(mine)) bars.push([T.cost_bar_eager, mine.eager.bytes_read + mine.eager.bytes_written, "eager"]);
    figures.forEach((f) => { if (ok(f)) bars.push([T["cost_bar_" + f.who], compiledBytes(f.compiled), "compiled " + f.who]); });
    const widest = Math.max(1, ...bars.map((b) => b[1]));
    const bar = (kind, value) => {
      const node = el("span", {class: "cost-bar " + kind});
      node.style.width = (100 * value / widest).toFixed(1) + "%";  // CSSOM: the page's CSP admits no style attribute
      return node;
    };
    const chart = el("div", {class: "cost-bars", role: "img", "aria-label": T.cost_chart},
      bars.map(([name, value, kind]) => el("div", {class: "cost-bar-row"},
        el("span", {class: "cost-bar-label"}, name),
        el("span", {class: "cost-bar-track"}, bar(kind, value)),
        el("span", {class: "cost-bar-value"}, size(value)))));
    const kernels = figures.filter(ok).map((f) => el("li", {}, label(f.who) + ": ",
      el("code", {}, f.compiled.kernels.concat(f.compiled.extern_calls).join(", ") || "\u2014")));
    return el("section", {class: "cost-view", "aria-label": T.cost_title},
      el("h3", {}, T.cost_title), chart, table,
      el("details", {}, el("summary", {}, T.cost_kernel_names), el("ul", {}, kernels)),
      el("p", {class: "muted small"}, fmt(T.cost_note, {torch: cost.torch_version, inputs: cost.inputs})),
      figures.some((f) => ok(f) && f.compiled.compile) ? el("p", {class: "muted small"}, T.cost_compile_note) : null);
  }

  // "What would Inductor make of my graph?": asks the server to measure a graded submission on demand.
  function offer(id, T, el, fmt, lang) {
    const box = el("section", {class: "cost-view cost-offer"});
    const button = el("button", {type: "button", class: "secondary"}, T.cost_offer);
    const status = el("span", {class: "muted small", role: "status"});
    box.append(button, " ", status);
    const url = "/api/submissions/" + encodeURIComponent(id) + "/cost?lang=" + lang;
    async function wait() {
      const response = await fetch(url);
      const body = await response.json();
      if (body.status === "done" && body.cost) box.replaceWith(panel(body.cost, T, el, fmt));
      else if (body.status === "done" || body.status === "failed") status.textContent = body.message || T.cost_none;
      else {
        if (body.phase === "waiting") status.textContent = fmt(T.cost_waiting, {ahead: body.ahead});
        else if (body.phase === "grading" && body.checks_done) status.textContent = fmt(T.cost_checks_done, {n: body.checks_done});
        else status.textContent = T.cost_measuring;
        setTimeout(wait, 2000);
      }
    }
    button.addEventListener("click", async () => {
      button.disabled = true;
      status.textContent = T.cost_measuring;
      const response = await fetch(url, {method: "POST"});
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        status.textContent = body.detail || T.error;
        button.disabled = false;
        return;
      }
      wait();
    });
    return box;
  }

  window.PracticeCost = {panel, offer, bytes};
})();
