// Report rendering: turns the judge's Report JSON into DOM nodes for the exercise page.
// Everything from a submission is written with textContent (via el()), never parsed as HTML.
(function () {
  "use strict";

  // T: the UI strings; rawOutputChars: how much raw output to show; learnerFile: the file whose lines are marked.
  function make(T, rawOutputChars, learnerFile) {

    function el(tag, attrs, ...children) {
      const node = document.createElement(tag);
      for (const [k, v] of Object.entries(attrs || {})) {
        if (v === null || v === undefined || v === false) continue;
        if (k === "class") node.className = v; else node.setAttribute(k, v === true ? "" : String(v));
      }
      for (const child of children.flat()) {
        if (child === null || child === undefined || child === false) continue;
        node.append(child instanceof Node ? child : document.createTextNode(String(child)));
      }
      return node;
    }
    // A judge message: `code` spans become <code> (as text nodes: nothing is parsed as HTML).
    const prose = (text) => String(text).split("`").map((part, i) => (i % 2 ? el("code", {}, part) : part));
    const fmt = (text, vars) => text.replace(/\{(\w+)\}/g, (_, k) => (k in vars ? vars[k] : ""));
    const verdictText = (v) => T["verdict_" + v] || v;

    // The report as nodes, and the gutter marks [{line, reason}] for the learner's graph breaks.
    function render(report) {
      const marks = [];
      const first = report.checks.find((c) => !c.passed);
      // The summary usually repeats the first failure's message, which is shown below anyway.
      const repeats = first && first.message && report.summary.endsWith(first.message);
      const parts = repeats ? [] : [el("p", {class: "summary"}, prose(report.summary))];
      if (report.trust === "self-checked") parts.unshift(el("p", {class: "trust"}, T.self_checked));
      // The tiers graded before this report's (judge/shared/tiers.py): the CPU tier a GPU grading followed.
      (report.tiers || []).forEach((tier) => parts.unshift(el("p", {class: "muted small tier"},
        fmt(T.tier_line, {verdict: verdictText(tier.verdict), n: tier.checks.length,
                          s: Number(tier.duration_s).toFixed(1)}))));
      if (report.checks.length) parts.push(el("ol", {class: "checks"},
        report.checks.map((c) => checkItem(c, true, marks, first !== undefined && c !== first))));
      report.diagnostics.forEach((d) => parts.push(diagnostic(d, marks, report.summary)));
      if (report.cost && window.PracticeCost) parts.push(window.PracticeCost.panel(report.cost, T, el, fmt));
      if (report.compiler) parts.push(compilerView(report.compiler));
      parts.push(rawOutput(report));
      return {parts, marks};
    }

    // full: the first failure is shown open; later failures fold into a <details> (often the same cause).
    function checkItem(check, full, marks, folded) {
      const head = el("div", {class: "check-head"},
        el("span", {class: check.passed ? "mark ok" : "mark bad", "aria-label": check.passed ? T.passed : T.failed},
           check.passed ? "\u2713" : "\u2717"),
        el("span", {class: "check-name"}, checkTitle(check)),
        check.verdict ? el("span", {class: "verdict-tag v-" + check.verdict}, verdictText(check.verdict)) : null,
        el("span", {class: "muted small"}, check.duration_s.toFixed(2) + " s"),
        seed(check.properties));
      const item = el("li", {class: "check " + (check.passed ? "passed" : "failed")});
      // A check that rests on what the learner's own process reported says so, passed or not.
      const trust = check.learner_process ? el("p", {class: "trust small"}, el("strong", {}, T.learner_process),
                                               " ", prose(check.learner_process)) : null;
      if (!full || check.passed) { item.append(head); if (trust) item.append(trust); return item; }
      // The same finding as an earlier check (judge.reports.report.mark_repeats): shown once, there.
      if (check.same_as) {
        item.append(head, el("p", {class: "muted small same-as"}, fmt(T.same_failure_as, {check: check.same_as})));
        return item;
      }
      const body = [check.message ? el("p", {class: "message"}, prose(check.message)) : null,
                    ...check.diagnostics.map((d) => diagnostic(d, marks, check.message))].filter(Boolean);
      if (trust) body.unshift(trust);
      if (folded) item.append(el("details", {}, el("summary", {}, head), body));
      else item.append(head, ...body);
      return item;
    }

    // A search's seed and budget: with them, the same verdict comes again.
    function seed(properties) {
      if (!properties || properties.seed === undefined) return null;
      const counted = properties.examples !== undefined && properties.examples !== null;
      return el("span", {class: "muted small seed"}, counted ? fmt(T.search_seed, {seed: properties.seed,
                                                                                   examples: properties.examples})
                                                             : fmt(T.search_seed_only, {seed: properties.seed}));
    }

    // Parametrized checks share a title; their name's [case] tells them apart.
    function checkTitle(check) {
      const param = /\[[^\]]*\]$/.exec(check.name);
      return check.title ? check.title + (param ? " " + param[0] : "") : check.name;
    }

    function where(loc) {
      if (!loc) return null;
      return el("div", {class: "where"}, el("span", {class: "line-no"}, fmt(T.line, {n: loc.line})),
        loc.text ? el("code", {}, loc.text) : null);
    }

    // shown: text already on screen (the check's message), so an explanation is not repeated.
    function diagnostic(d, marks, shown) {
      if (d.kind === "graph_break") {
        if (d.location && marks && (!d.location.file || d.location.file.endsWith(learnerFile)) &&
            !marks.some((m) => m.line === d.location.line)) {
          // The tooltip in the page's language: the explanation (Dynamo's own English stays in the report's details)
          const said = d.explanation || T.graph_break_at + (d.gb_id ? " " + d.gb_id : "") + "\n\n" + d.reason;
          marks.push({line: d.location.line, reason: (d.explanation && d.gb_id ? d.gb_id + ": " : "") + said});
        }
        const explain = d.explanation && !(shown || "").includes(d.explanation) ? el("p", {}, prose(d.explanation)) : null;
        return el("div", {class: "diag graph-break"}, el("strong", {}, T.graph_break_at),
          d.gb_id ? el("span", {class: "gb-id"}, " " + d.gb_id) : null, where(d.location), explain, pytorch(d.pytorch),
          el("details", {}, el("summary", {}, T.dynamo_reason), el("p", {class: "reason"}, d.reason)));
      }
      if (d.kind === "mismatch") {
        const stats = [];
        if (d.max_abs_error !== null && d.max_abs_error !== undefined) stats.push(T.max_abs_error + " " + d.max_abs_error.toPrecision(4));
        if (d.max_rel_error !== null && d.max_rel_error !== undefined) stats.push(T.max_rel_error + " " + d.max_rel_error.toPrecision(4));
        if (d.mismatch_count !== null && d.mismatch_count !== undefined) stats.push(T.mismatched + " " + d.mismatch_count + (d.total ? "/" + d.total : ""));
        const rows = d.first_mismatches.map((m) => el("tr", {}, el("td", {}, "[" + m.index.join(", ") + "]"),
          el("td", {}, String(m.expected)), el("td", {}, String(m.actual))));
        return el("div", {class: "diag mismatch"},
          el("p", {}, el("strong", {}, T.case + ": "), prose(d.case), " (", prose(d.what), ")"),
          stats.length ? el("p", {class: "small"}, stats.join(" · ")) : null,
          d.stage ? el("p", {class: "stage"}, prose(d.stage.explanation)) : null,
          rows.length ? el("table", {class: "mismatches"}, el("thead", {}, el("tr", {},
            el("th", {}, T.index), el("th", {}, T.expected), el("th", {}, T.actual))), el("tbody", {}, rows)) : null);
      }
      if (d.kind === "recompile") {
        return el("div", {class: "diag recompile"}, el("p", {}, T.compiles + ": " + d.compiles + " / " + d.limit),
          d.origin ? origin(d.origin) : null,
          d.guard_failures.length ? el("ul", {}, d.guard_failures.map((g) => el("li", {}, el("code", {}, g)))) : null);
      }
      if (d.kind === "graph") {
        return el("details", {class: "diag graph"}, el("summary", {}, d.title), el("pre", {class: "code"}, d.code));
      }
      if (d.kind === "error") {
        // The error's own text is Python's or torch's (English): folded, unless the message above already says it.
        const said = d.message && (shown || "").includes(d.message);
        const raw = [said ? null : el("pre", {class: "code"}, d.message),
                     d.traceback ? el("pre", {class: "code"}, d.traceback) : null].filter(Boolean);
        return el("div", {class: "diag error"}, where(d.location),
          raw.length ? el("details", {}, el("summary", {}, d.exc_type + " · " + T.traceback), ...raw) : null);
      }
      return el("pre", {class: "code"}, JSON.stringify(d, null, 2));
    }

    // PyTorch's own words for a graph break (its registry id's type, explanation, hints and page).
    function pytorch(words) {
      if (!words) return null;
      const hints = words.hints ? words.hints.split("\n").filter(Boolean) : [];
      const link = /^https:\/\//.test(words.url) ? el("a", {href: words.url, rel: "noopener noreferrer",
                                                          target: "_blank"}, T.registry_page + " " + words.gb_id) : null;
      return el("div", {class: "pytorch-words"}, el("p", {}, el("strong", {}, T.pytorch_says + " "),
          el("span", {class: "gb-type"}, words.title), words.explanation ? ": " : "", prose(words.explanation)),
        hints.length ? el("ul", {class: "hints"}, hints.map((h) => el("li", {}, prose(h)))) : null,
        link ? el("p", {class: "small"}, link) : null);
    }

    // Where a failed guard came from: the learner's line, and what kind of specialisation it is.
    function origin(o) {
      return el("div", {class: "guard-origin"},
        el("p", {}, el("strong", {}, T.guard_added_at + " "), el("code", {}, o.guard),
           o.count > 1 ? el("span", {class: "muted small times"}, " " + fmt(T.times_n, {n: o.count})) : null),
        where(o.location),
        o.also && o.also.length ? el("p", {class: "muted small also"},
          fmt(T.also_after_breaks, {lines: o.also.map((l) => l.line).join(", ")})) : null,
        o.explanation ? el("p", {}, prose(o.explanation)) : null);
    }

    // The compiles over a test's calls: inputs as the compiler saw them, what it compiled and why.
    function timeline(events) {
      if (!events || !events.length) return null;
      const rows = events.map((e) => el("tr", {class: e.compiled ? "compiled" : ""},
        el("td", {}, e.test ? e.test + " #" + e.call : "#" + e.call), el("td", {}, el("code", {}, e.inputs)),
        el("td", {}, String(e.compiled)), el("td", {}, e.guard ? el("code", {}, e.guard) : ""),
        el("td", {}, e.line ? fmt(T.line, {n: e.line}) : "")));
      return el("details", {class: "timeline", open: true}, el("summary", {}, T.timeline),
        el("table", {class: "timeline-table"}, el("thead", {}, el("tr", {}, el("th", {}, T.call),
          el("th", {}, T.inputs), el("th", {}, T.compiled_n), el("th", {}, T.guard_failed), el("th", {}, T.line_col))),
          el("tbody", {}, rows)));
    }

    function clip(text) {
      const limit = rawOutputChars;
      return text.length > limit ? text.slice(0, limit) + "\n" + T.truncated : text;
    }

    // What Dynamo captured (each graph with the learner's lines), why it recompiled, its guards, Inductor's code.
    function compilerView(view) {
      const body = view.graphs.map((g, i) => el("details", {class: "graph", open: i === 0},
        el("summary", {}, fmt(T.graph_n, {n: i + 1}) +
           (g.learner_lines.length ? " · " + fmt(T.from_lines, {lines: g.learner_lines.join(", ")}) : ""),
           g.inputs ? el("code", {class: "small"}, " " + g.inputs) : null),
        el("pre", {class: "code"}, g.code)));
      if (view.recompiles.length) body.push(el("details", {class: "recompiles"},
        el("summary", {}, T.recompile_reasons + " (" + view.recompiles.length + ")"),
        el("ul", {}, view.recompiles.map((r) => el("li", {}, el("code", {}, r))))));
      if (view.guards) body.push(el("details", {class: "guards"}, el("summary", {}, T.guards),
        el("pre", {class: "code"}, view.guards)));
      view.kernels.forEach((k, i) => body.push(el("details", {class: "kernels"},
        el("summary", {}, fmt(T.inductor_code_n, {n: i + 1})), el("pre", {class: "code"}, k))));
      const steps = timeline(view.timeline);
      if (steps) body.unshift(steps);
      return el("details", {class: "compiler-view"}, el("summary", {}, T.compiler_view), body);
    }

    function rawOutput(report) {
      const body = [];
      if (report.stdout) body.push(el("h3", {}, "stdout"), el("pre", {class: "code"}, clip(report.stdout)));
      if (report.stderr) body.push(el("h3", {}, "stderr"), el("pre", {class: "code"}, clip(report.stderr)));
      if (!body.length) body.push(el("p", {class: "muted"}, T.empty_output));
      const note = report.output_truncated ? " " + T.truncated : "";
      return el("details", {class: "raw"}, el("summary", {}, T.raw_output + note), body,
        el("p", {class: "muted small"}, "torch " + report.torch_version + " · " + report.sandbox + " · " + report.duration_s.toFixed(1) + " s"));
    }

    return {el, fmt, prose, verdictText, render, checkItem, diagnostic, compilerView, origin, rawOutput};
  }

  window.PracticeReport = {make};
})();
