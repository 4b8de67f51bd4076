// The instructor's and the learner's account pages: copy buttons, and the reports of a learner's submissions
// (drawn by report.js from <script type="application/json"> blocks, as on the exercise page).
(function () {
  "use strict";
  document.querySelectorAll("button.copy").forEach((button) => {
    button.addEventListener("click", async () => {
      const input = document.getElementById(button.dataset.copy);
      input.select();
      try {
        await navigator.clipboard.writeText(input.value);
        button.textContent = "✓";
      } catch (e) { /* no clipboard permission: the text stays selected for Ctrl+C */ }
    });
  });

  const boot = document.getElementById("boot"), strings = document.getElementById("strings");
  if (!boot || !strings || !window.PracticeReport) return;
  const {reports, raw_output_chars: rawChars} = JSON.parse(boot.textContent);
  const R = window.PracticeReport.make(JSON.parse(strings.textContent), rawChars, "solution.py");
  document.querySelectorAll(".report[data-id]").forEach((box) => {
    const report = reports[box.dataset.id];
    if (!report) return;
    const status = R.el("p", {class: "status " + (report.verdict === "ACCEPTED" ? "ok" : "bad")}, R.verdictText(report.verdict));
    box.replaceChildren(status, ...R.render(report).parts);
  });
})();
