// The exercise page: editor, drafts, hints, submission with live progress, report rendering.
// Everything that comes from a submission is written with textContent, never parsed as HTML.
(function () {
  "use strict";
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const T = JSON.parse(document.getElementById("strings").textContent);
  const $ = (id) => document.getElementById(id);
  const draftKey = "torch-practice:draft:" + boot.exercise_id;
  const hintKey = "torch-practice:hints:" + boot.exercise_id;
  const LEARNER_FILE = "solution.py";

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
  const fmt = (text, vars) => text.replace(/\{(\w+)\}/g, (_, k) => (k in vars ? vars[k] : ""));
  const verdictText = (v) => T["verdict_" + v] || v;

  function readDraft() {
    try { return localStorage.getItem(draftKey); } catch (e) { return null; }
  }
  function saveDraft(text) {
    try { localStorage.setItem(draftKey, text); } catch (e) { /* storage full or disabled */ }
  }

  // ---- editor -------------------------------------------------------------------------------
  const draft = readDraft();
  const editor = window.PracticeEditor.create($("editor"), {
    doc: draft !== null ? draft : boot.starter,
    label: T.your_code,
    nonce: boot.style_nonce,
    onChange: (text) => saveDraft(text),
    onSubmit: () => submit(),
  });
  $("editor").querySelector(".cm-content").setAttribute("aria-labelledby", "editor-label");

  $("reset").addEventListener("click", () => {
    if (!window.confirm(T.reset_confirm)) return;
    editor.setValue(boot.starter);
    saveDraft(boot.starter);
    editor.setMarks([]);
    editor.focus();
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && !ev.defaultPrevented) {
      ev.preventDefault();
      submit();
    }
  });

  // ---- hints: one at a time, remembered --------------------------------------------------------
  const hints = Array.from(document.querySelectorAll("#hint-list .hint"));
  const hintButton = $("show-hint");
  function showHints(n) {
    hints.forEach((h, i) => { h.hidden = i >= n; });
    if (!hintButton) return;
    $("hint-count").textContent = String(n);
    if (n >= hints.length) { hintButton.disabled = true; hintButton.textContent = T.no_more_hints; }
  }
  let shown = Math.min(hints.length, parseInt(localStorage.getItem(hintKey) || "0", 10) || 0);
  showHints(shown);
  if (hintButton) hintButton.addEventListener("click", () => {
    shown = Math.min(hints.length, shown + 1);
    localStorage.setItem(hintKey, String(shown));
    showHints(shown);
    hints[shown - 1].setAttribute("tabindex", "-1");
    hints[shown - 1].focus();
  });

  // ---- submitting -------------------------------------------------------------------------------
  const status = $("status"), reportBox = $("report"), submitButton = $("submit");
  let grading = false;
  submitButton.addEventListener("click", () => submit());

  function setStatus(text, cls) {
    status.textContent = text;
    status.className = "status" + (cls ? " " + cls : "");
  }

  async function submit() {
    if (grading) return;
    grading = true;
    submitButton.disabled = true;
    editor.setMarks([]);
    reportBox.replaceChildren();
    setStatus(T.queued, "busy");
    status.scrollIntoView({block: "nearest"});
    try {
      const response = await fetch("/api/exercises/" + encodeURIComponent(boot.exercise_id) + "/submissions", {
        method: "POST", headers: {"Content-Type": "application/json"}, credentials: "same-origin",
        body: JSON.stringify({source: editor.getValue()}),
      });
      const body = await response.json().catch(() => ({}));
      if (response.status !== 202) {
        const retry = response.headers.get("Retry-After");
        const text = response.status === 429 && retry ? fmt(T.too_many, {s: retry}) : (body.detail || T.error);
        finish();
        setStatus(text, "error");
        return;
      }
      addHistory({id: body.id, status: "queued", verdict: null, created_at: new Date().toISOString()});
      follow(body.id);
    } catch (e) {
      finish();
      setStatus(T.error, "error");
    }
  }

  function finish() { grading = false; submitButton.disabled = false; }

  // Follow one submission's live events; fall back to polling when the stream fails.
  function follow(id) {
    grading = true;
    submitButton.disabled = true;
    const progress = el("ol", {class: "progress", "aria-label": T.running});
    reportBox.replaceChildren(progress);
    let finished = 0, total = null;
    const source = new EventSource("/api/submissions/" + encodeURIComponent(id) + "/events");
    const on = (type, handler) => source.addEventListener(type, (ev) => handler(JSON.parse(ev.data)));
    on("queued", () => setStatus(T.queued, "busy"));
    on("running", (event) => { total = event.total_checks || total; setStatus(T.running, "busy"); });
    on("check", (event) => {
      finished += 1;
      total = event.total_checks || total;
      setStatus(T.running + " " + finished + (total ? "/" + total : "") + " " + T.checks_done, "busy");
      progress.append(checkItem(event.check, false));
    });
    on("done", (event) => { source.close(); done(id, event.report); });
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) poll(id);
    };
  }

  async function poll(id) {
    const response = await fetch("/api/submissions/" + encodeURIComponent(id));
    const body = await response.json();
    if (body.status === "done") done(id, body.report);
    else setTimeout(() => poll(id), 2000);
  }

  function done(id, report) {
    finish();
    showReport(report);
    updateHistory(id, report.verdict);
    if (report.verdict === "ACCEPTED") revealReference();
  }

  async function revealReference() {
    const response = await fetch("/api/exercises/" + encodeURIComponent(boot.exercise_id) + "/solution");
    if (!response.ok) return;
    const body = await response.json();
    $("reference-code").querySelector("code").textContent = body.source;
    $("reference-code").hidden = false;
    $("reference-locked").hidden = true;
  }

  // ---- reports ----------------------------------------------------------------------------------
  function showReport(report) {
    const ok = report.verdict === "ACCEPTED";
    setStatus(verdictText(report.verdict), ok ? "ok" : "bad");
    const marks = [];
    const parts = [el("p", {class: "summary"}, report.summary)];
    const first = report.checks.find((c) => !c.passed);
    if (report.checks.length) parts.push(el("ol", {class: "checks"},
      report.checks.map((c) => checkItem(c, true, marks, first !== undefined && c !== first))));
    report.diagnostics.forEach((d) => parts.push(diagnostic(d, marks, report.summary)));
    parts.push(rawOutput(report));
    reportBox.replaceChildren(...parts);
    editor.setMarks(marks);
  }

  // full: the first failure is shown open; later failures fold into a <details> (often the same cause).
  function checkItem(check, full, marks, folded) {
    const head = el("div", {class: "check-head"},
      el("span", {class: check.passed ? "mark ok" : "mark bad", "aria-label": check.passed ? T.passed : T.failed},
         check.passed ? "\u2713" : "\u2717"),
      el("span", {class: "check-name"}, checkTitle(check)),
      check.verdict ? el("span", {class: "verdict-tag v-" + check.verdict}, verdictText(check.verdict)) : null,
      el("span", {class: "muted small"}, check.duration_s.toFixed(2) + " s"));
    const item = el("li", {class: "check " + (check.passed ? "passed" : "failed")});
    if (!full || check.passed) { item.append(head); return item; }
    const body = [check.message ? el("p", {class: "message"}, check.message) : null,
                  ...check.diagnostics.map((d) => diagnostic(d, marks, check.message))].filter(Boolean);
    if (folded) item.append(el("details", {}, el("summary", {}, head), body));
    else item.append(head, ...body);
    return item;
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
      if (d.location && marks && (!d.location.file || d.location.file.endsWith(LEARNER_FILE)) &&
          !marks.some((m) => m.line === d.location.line)) {
        marks.push({line: d.location.line, reason: (d.explanation ? d.explanation + "\n\n" : "") + d.reason});
      }
      const explain = d.explanation && !(shown || "").includes(d.explanation) ? el("p", {}, d.explanation) : null;
      return el("div", {class: "diag graph-break"}, el("strong", {}, T.graph_break_at), where(d.location), explain,
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
        el("p", {}, el("strong", {}, T.case + ": "), d.case, " (" + d.what + ")"),
        stats.length ? el("p", {class: "small"}, stats.join(" · ")) : null,
        rows.length ? el("table", {class: "mismatches"}, el("thead", {}, el("tr", {},
          el("th", {}, T.index), el("th", {}, T.expected), el("th", {}, T.actual))), el("tbody", {}, rows)) : null);
    }
    if (d.kind === "recompile") {
      return el("div", {class: "diag recompile"}, el("p", {}, T.compiles + ": " + d.compiles + " / " + d.limit),
        d.guard_failures.length ? el("ul", {}, d.guard_failures.map((g) => el("li", {}, el("code", {}, g)))) : null);
    }
    if (d.kind === "graph") {
      return el("details", {class: "diag graph"}, el("summary", {}, d.title), el("pre", {class: "code"}, d.code));
    }
    if (d.kind === "error") {
      return el("div", {class: "diag error"}, el("p", {}, el("strong", {}, d.exc_type + ": "), d.message),
        where(d.location),
        d.traceback ? el("details", {}, el("summary", {}, T.traceback), el("pre", {class: "code"}, d.traceback)) : null);
    }
    return el("pre", {class: "code"}, JSON.stringify(d, null, 2));
  }

  function clip(text) {
    const limit = boot.raw_output_chars;
    return text.length > limit ? text.slice(0, limit) + "\n" + T.truncated : text;
  }

  function rawOutput(report) {
    const body = [];
    if (report.stdout) body.push(el("h3", {}, "stdout"), el("pre", {class: "code"}, clip(report.stdout)));
    if (report.stderr) body.push(el("h3", {}, "stderr"), el("pre", {class: "code"}, clip(report.stderr)));
    if (!body.length) body.push(el("p", {class: "muted"}, "(empty)"));
    const note = report.output_truncated ? " " + T.truncated : "";
    return el("details", {class: "raw"}, el("summary", {}, T.raw_output + note), body,
      el("p", {class: "muted small"}, "torch " + report.torch_version + " · " + report.sandbox + " · " + report.duration_s.toFixed(1) + " s"));
  }

  // ---- history ----------------------------------------------------------------------------------
  const historyList = $("history");
  function historyButton(item) {
    const time = new Date(item.created_at);
    const label = item.verdict ? verdictText(item.verdict) : T[item.status];
    return el("button", {type: "button", class: "link view-submission", "data-id": item.id},
      el("time", {datetime: item.created_at}, time.toISOString().slice(0, 19).replace("T", " ") + " UTC"), " ",
      el("span", {class: "verdict-tag v-" + (item.verdict || item.status)}, label));
  }
  function addHistory(item) {
    $("no-history").hidden = true;
    historyList.prepend(el("li", {"data-id": item.id}, historyButton(item)));
  }
  function updateHistory(id, verdict) {
    const tag = historyList.querySelector('li[data-id="' + CSS.escape(id) + '"] .verdict-tag');
    if (tag) { tag.textContent = verdictText(verdict); tag.className = "verdict-tag v-" + verdict; }
  }
  historyList.addEventListener("click", async (ev) => {
    const button = ev.target.closest(".view-submission");
    if (!button) return;
    const response = await fetch("/api/submissions/" + encodeURIComponent(button.dataset.id));
    if (!response.ok) return;
    const body = await response.json();
    if (body.status !== "done") { if (!grading) follow(body.id); return; }
    showReport(body.report);
    const load = el("button", {type: "button", class: "secondary"}, T.load_code);
    load.addEventListener("click", () => {
      if (window.confirm(T.load_confirm)) { editor.setValue(body.source); editor.focus(); }
    });
    reportBox.prepend(el("p", {}, load));
    status.scrollIntoView({block: "nearest"});
  });

  // After a reload: a submission still grading is followed again; otherwise the latest result is shown,
  // with gutter marks only while the editor still holds the code that was graded.
  const pending = historyList.querySelector(".v-queued, .v-running");
  const latest = historyList.querySelector("li");
  if (pending) follow(pending.closest("li").dataset.id);
  else if (latest) showLatest(latest.dataset.id);

  async function showLatest(id) {
    const response = await fetch("/api/submissions/" + encodeURIComponent(id));
    if (!response.ok || grading) return;
    const body = await response.json();
    if (body.status !== "done") return;
    showReport(body.report);
    if (body.source !== editor.getValue()) editor.setMarks([]);
  }
})();
