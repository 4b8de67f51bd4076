// The exercise page's questions about the learner's own accepted file (web/questions_api.py). The server made each
// question and keeps its answer; this script shows them and sends answers. Everything is written with textContent.
(function () {
  "use strict";
  const section = document.getElementById("questions");
  if (!section) return;
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const T = JSON.parse(document.getElementById("strings").textContent);
  const list = document.getElementById("question-list");
  const status = document.getElementById("questions-status");
  const ask = document.getElementById("ask-questions");
  let current = boot.questions_for;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const child of children) node.append(child);
    return node;
  }
  // `code` spans of a prompt as <code>, the rest as text.
  function withCode(text) {
    return text.split("`").map((part, i) => (i % 2 ? el("code", {}, part) : document.createTextNode(part)));
  }
  async function call(method, url, body) {
    const response = await fetch(url + (url.includes("?") ? "&" : "?") + "lang=" + boot.lang, {
      method, headers: body ? {"Content-Type": "application/json"} : {}, body: body ? JSON.stringify(body) : undefined});
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    return {ok: response.ok, status: response.status, data};
  }

  function feedback(q, li, correct) {
    const box = li.querySelector(".question-feedback");
    if (q.solved) {
      box.replaceChildren(el("strong", {}, T.question_right), " ", ...withCode(q.explanation || ""));
      box.className = "question-feedback ok";
      li.dataset.solved = "true";
      li.querySelectorAll("input, button").forEach((n) => { n.disabled = true; });
    } else if (correct === false) {
      box.replaceChildren(T.question_wrong);
      box.className = "question-feedback bad";
    }
    li.querySelector(".question-wrong").textContent = q.wrong ? T.question_wrong_count.replace("{n}", q.wrong) : "";
  }

  function render(q) {
    const li = el("li", {class: "question", "data-id": q.id, "data-kind": q.kind, "data-solved": String(q.solved)});
    li.append(el("p", {class: "question-prompt"}, ...withCode(q.prompt)));
    const form = el("form", {class: "question-form"});
    if (q.choices.length) {
      for (const c of q.choices) {
        const input = el("input", {type: "radio", name: "q-" + q.id, value: c.value});
        if (q.solved && c.value === q.answer) input.checked = true;
        form.append(el("label", {class: "choice"}, input, " ", ...withCode(c.label)));
      }
    } else {
      const input = el("input", {type: "number", name: "q-" + q.id, min: "0", step: "1", inputmode: "numeric",
                                 "aria-label": T.question_number});
      if (q.solved) input.value = q.answer;
      form.append(input);
    }
    form.append(el("button", {type: "submit", class: "secondary"}, T.question_check));
    li.append(form, el("p", {class: "question-feedback", role: "status"}), el("p", {class: "question-wrong muted small"}));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const picked = q.choices.length ? form.querySelector("input:checked") : form.querySelector("input");
      if (!picked || picked.value === "") return;
      const {ok, data} = await call("POST", "/api/questions/" + encodeURIComponent(q.id) + "/answer",
                                    {answer: picked.value});
      if (!ok) { li.querySelector(".question-feedback").textContent = (data && data.detail) || ""; return; }
      Object.assign(q, data.question);
      feedback(q, li, data.correct);
    });
    feedback(q, li, null);
    return li;
  }

  function show(data, asked) {
    list.replaceChildren(...data.questions.map(render));
    ask.hidden = data.status === "ready";
    status.textContent = asked && !data.questions.length ? T.questions_failed : "";
  }

  async function load() {
    if (!current) return;
    section.hidden = false;
    const {ok, data} = await call("GET", "/api/submissions/" + encodeURIComponent(current) + "/questions");
    if (ok) show(data);
  }

  ask.addEventListener("click", async () => {
    if (!current) return;
    ask.disabled = true;
    status.textContent = T.questions_compiling;
    const {ok, data} = await call("POST", "/api/submissions/" + encodeURIComponent(current) + "/questions");
    ask.disabled = false;
    if (ok) show(data, true);
    else status.textContent = (data && data.detail) || T.questions_failed;
  });
  document.addEventListener("practice:accepted", (ev) => {
    current = ev.detail.id;  // the newest accepted file: its own questions
    list.replaceChildren();
    ask.hidden = false;
    load();
  });
  load();
})();
