// The playground page: the editor, Run, and what was found (judge/parent/playground.py's PlaygroundReport) drawn with report.js.
// Everything that comes from a run is written with textContent, never parsed as HTML.
(function () {
  "use strict";
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const T = JSON.parse(document.getElementById("strings").textContent);
  const $ = (id) => document.getElementById(id);
  const lang = document.documentElement.lang === "en" ? "en" : "zh";
  const draftKey = "torch-practice:draft:" + boot.draft_key;
  const R = window.PracticeReport.make(T, boot.raw_output_chars, "playground.py");
  const {el, fmt, prose} = R;

  function readDraft() {
    try { return localStorage.getItem(draftKey); } catch (e) { return null; }
  }
  function saveDraft(text) {
    try { localStorage.setItem(draftKey, text); } catch (e) { /* storage full or disabled */ }
  }

  const draft = readDraft();
  const editor = window.PracticeEditor.create($("editor"), {
    doc: draft !== null ? draft : boot.source, label: T.your_code, nonce: boot.style_nonce,
    onChange: (text) => saveDraft(text), onSubmit: () => run(),
  });
  $("editor").querySelector(".cm-content").setAttribute("aria-labelledby", "editor-label");
  $("reset").addEventListener("click", () => {
    if (!window.confirm(T.reset_confirm)) return;
    editor.setValue(boot.source);
    saveDraft(boot.source);
    editor.setMarks([]);
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && !ev.defaultPrevented) { ev.preventDefault(); run(); }
  });

  const status = $("status"), box = $("report"), button = $("run");
  function say(text, cls) {
    status.textContent = text;
    status.className = "status" + (cls ? " " + cls : "");
    status.hidden = !text;
  }

  function section(title, items, empty) {
    return el("section", {class: "pg-section"}, el("h3", {}, title),
      items.length ? items : el("p", {class: "muted"}, empty));
  }

  function draw(report) {
    const marks = [];
    const parts = [el("p", {class: "summary"}, prose(report.summary))];
    // The problem's own words, unless the summary says all there is (a file not of the form)
    const said = report.problem && report.problem.message && report.summary.includes(report.problem.message) &&
      !report.problem.location && !report.problem.traceback;
    if (report.problem && !said) parts.push(el("div", {class: "pg-problem"}, el("h3", {}, T.playground_stopped),
                                      R.diagnostic(report.problem, marks, report.summary)));
    // A run that stopped early measured only what it found before it stopped: no all-clear after an error.
    if (report.breaks.length || report.complete) {
      parts.push(section(T.playground_breaks, report.breaks.map((d) => R.diagnostic(d, marks, "")),
                         T.playground_no_breaks));
    }
    if (report.recompiles.length || report.complete) {
      parts.push(section(T.playground_recompiles, report.recompiles.map((o) => R.origin(o)),
                         T.playground_no_recompiles));
    }
    if (report.stages && report.stages.length) {  // your code or the compiler: the stage that changes the numbers
      parts.push(section(T.playground_stages, report.stages.map((f) => el("p", {class: "stage"}, prose(f.explanation))), ""));
    }
    if (report.notes.length) parts.push(section(T.playground_notes, [el("ul", {}, report.notes.map((n) => el("li", {}, n)))], ""));
    if (report.compiler && (report.complete || report.compiler.graphs.length)) {
      const view = R.compilerView(report.compiler);
      view.open = true;
      parts.push(view);
    }
    // the first call's figures, measured by the verifier: the exercise page's cost panel (static/cost.js)
    if (report.cost && window.PracticeCost) parts.push(window.PracticeCost.panel(report.cost, T, el, fmt));
    parts.push(R.rawOutput(report));
    box.replaceChildren(...parts);
    editor.setMarks(marks);
  }

  let running = false;
  async function run() {
    if (running) return;
    running = true;
    button.disabled = true;
    say(T.playground_running, "busy");
    box.replaceChildren();
    try {
      const response = await fetch("/api/playground?lang=" + lang, {
        method: "POST", headers: {"Content-Type": "application/json"}, credentials: "same-origin",
        body: JSON.stringify({source: editor.getValue()}),
      });
      const body = await response.json().catch(() => ({}));
      if (!response.ok) {
        const retry = response.headers.get("Retry-After");
        say(response.status === 429 && retry ? fmt(T.too_many, {s: retry}) : (body.detail || T.error), "error");
        return;
      }
      say("", "");
      draw(body);
    } catch (e) {
      say(T.error, "error");
    } finally {
      running = false;
      button.disabled = false;
    }
  }
  button.addEventListener("click", run);
})();
