// The exercise page: editor, drafts, hints, submission with live progress (reports are drawn by report.js).
// Everything that comes from a submission is written with textContent, never parsed as HTML.
(function () {
  "use strict";
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const T = JSON.parse(document.getElementById("strings").textContent);
  const $ = (id) => document.getElementById(id);
  const draftKey = "torch-practice:draft:" + boot.exercise_id;
  const hintKey = "torch-practice:hints:" + boot.exercise_id;

  const R = window.PracticeReport.make(T, boot.raw_output_chars, "solution.py");
  const {el, fmt, verdictText, checkItem} = R;

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
        const refusal = response.headers.get("X-Practice-Refusal") === "gpu-budget" ? T.gpu_budget : T.too_many;
        const text = response.status === 429 && retry ? fmt(refusal, {s: retry}) : (body.detail || T.error);
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
    const source = new EventSource("/api/submissions/" + encodeURIComponent(id) + "/events?lang=" + boot.lang);
    const on = (type, handler) => source.addEventListener(type, (ev) => handler(JSON.parse(ev.data)));
    on("queued", () => setStatus(T.queued, "busy"));
    on("running", (event) => { total = event.total_checks || total; setStatus(T.running, "busy"); });
    on("check", (event) => {
      finished += 1;
      total = event.total_checks || total;
      setStatus(T.running + " " + finished + (total ? "/" + total : "") + " " + T.checks_done, "busy");
      progress.append(checkItem(event.check, false));
    });
    // A GPU exercise's CPU tier passed (judge/shared/tiers.py): its checks, and where the file waits for a GPU.
    on("tier", (event) => {
      const wait = event.position ? fmt(T.gpu_queue, {n: event.position, s: Math.round(event.wait_s)})
                                  : T.gpu_waiting;
      setStatus(T.cpu_tier_passed + " · " + wait, "busy");
      progress.replaceChildren();  // the GPU grading's checks come here, below the CPU tier's
      finished = 0;
      reportBox.replaceChildren(el("p", {class: "tier-wait"}, T.cpu_tier_passed + " · " + wait),
                                ...R.render(event.report).parts, progress);
    });
    on("done", (event) => { source.close(); done(id, event.report); });
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) poll(id);
    };
  }

  async function poll(id) {
    const response = await fetch("/api/submissions/" + encodeURIComponent(id) + "?lang=" + boot.lang);
    const body = await response.json();
    if (body.status === "done") done(id, body.report);
    else setTimeout(() => poll(id), 2000);
  }

  function done(id, report) {
    finish();
    showReport(report, id);
    updateHistory(id, report.verdict);
    if (report.verdict === "ACCEPTED") {
      revealReference();
      document.dispatchEvent(new CustomEvent("practice:accepted", {detail: {id}}));  // questions.js
    }
    refreshTimeline();
  }

  // The timeline section is rendered (and escaped) by the server: fetched again after each grading, parsed
  // inertly (DOMParser runs no script) and put in place of the old one.
  async function refreshTimeline() {
    const box = $("timeline-box");
    if (!box) return;
    const response = await fetch("/exercises/" + encodeURIComponent(boot.exercise_id) + "/timeline?lang=" + boot.lang);
    if (!response.ok) return;
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    box.replaceChildren(...doc.body.childNodes);
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
  function showReport(report, id) {
    setStatus(verdictText(report.verdict), report.verdict === "ACCEPTED" ? "ok" : "bad");
    const {parts, marks} = R.render(report);
    reportBox.replaceChildren(...parts);
    if (!report.cost && id && boot.cost_on_demand && window.PracticeCost)  // cost.js: measured when asked
      reportBox.append(window.PracticeCost.offer(id, T, el, R.fmt, boot.lang));
    editor.setMarks(marks);
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
    const response = await fetch("/api/submissions/" + encodeURIComponent(button.dataset.id) + "?lang=" + boot.lang);
    if (!response.ok) return;
    const body = await response.json();
    if (body.status !== "done") { if (!grading) follow(body.id); return; }
    showReport(body.report, body.id);
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
    const response = await fetch("/api/submissions/" + encodeURIComponent(id) + "?lang=" + boot.lang);
    if (!response.ok || grading) return;
    const body = await response.json();
    if (body.status !== "done") return;
    showReport(body.report, id);
    if (body.source !== editor.getValue()) editor.setMarks([]);
  }
})();
