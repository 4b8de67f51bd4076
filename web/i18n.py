"""The page's words in Chinese (the book's language and the default) and English, through gettext catalogs.

Messages are written in English where they are used: `{{ _("Submit") }}` in templates (Jinja2's i18n
extension), `_ = gettext_for(lang)` in Python. Babel extracts them (`web/babel.cfg`) into
`web/locale/messages.pot`; `web/locale/zh/LC_MESSAGES/messages.po` translates them. English is the source
language, so it needs no catalog. The compiled `messages.mo` is committed, so a fresh clone serves Chinese
without a build step; `scripts/i18n.sh` re-extracts, updates and compiles, and `tests/web/test_i18n.py` fails
when a message has no translation or a `.mo` does not match its `.po`.

The report's check titles and messages come from the grading core in both languages (judge/reports/i18n.py); the
API and the pages pick the page's language (judge.reports.report.localized).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

from babel.support import NullTranslations, Translations
from jinja2 import Environment, pass_context

from judge.reports.i18n import text
from judge.reports.report import VERDICT_NAME, Verdict

LANGS = ("zh", "en")
DEFAULT_LANG = "zh"
SOURCE_LANG = "en"
LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "messages"


def N_(message: str) -> str:
    """Marks a message for extraction; translated later, where the language is known."""
    return message


# The strings the page scripts (static/app.js, static/report.js, static/teach.js) read by key.
SCRIPT_STRINGS: dict[str, str] = {
    "your_code": N_("Your code"),
    "questions_compiling": N_("The judge is compiling your file to work out the answers (up to a minute)…"),
    "questions_failed": N_("No questions this time: the judge could not compile your file for them."),
    "question_check": N_("Check"),
    "question_number": N_("Your answer (a whole number)"),
    "question_right": N_("Right."),
    "question_wrong": N_("Not quite: look at your graph again and try another answer."),
    "question_wrong_count": N_("Wrong answers so far: {n}"),
    "reset_confirm": N_("Replace your code with the starter? Your draft will be lost."),
    "no_more_hints": N_("No more hints"),
    "queued": N_("Queued…"),
    "running": N_("Running…"),
    "checks_done": N_("checks finished"),
    "cpu_tier_passed": N_("Passed the CPU tier; the GPU checks are to come"),
    "gpu_queue": N_("place {n} in the GPU queue, about {s} s to wait"),
    "gpu_waiting": N_("waiting for a GPU grader"),
    "tier_line": N_("CPU tier: {verdict}, {n} checks in {s} s"),
    "raw_output": N_("Raw output"),
    "self_checked": N_("Self-checked exercise: part of this verdict rests on what your code's own process "
                       "reported, so it cannot rule out forgery."),
    "learner_process": N_("Rests on your code's own process:"),
    "truncated": N_("(truncated)"),
    "line": N_("line {n}"),
    "graph_break_at": N_("Graph break"),
    "dynamo_reason": N_("Dynamo's reason"),
    "case": N_("Input case"),
    "max_abs_error": N_("max abs error"),
    "max_rel_error": N_("max rel error"),
    "mismatched": N_("mismatched elements"),
    "index": N_("index"),
    "expected": N_("expected"),
    "actual": N_("actual"),
    "compiles": N_("compiles"),
    "traceback": N_("Traceback"),
    "error": N_("Something went wrong"),
    "too_many": N_("Too many submissions; try again in {s} s."),
    "gpu_budget": N_("Your GPU time for this hour is used up; your next GPU submission is possible in {s} s."),
    "load_code": N_("Load this code"),
    "load_confirm": N_("Replace the editor's code with this submission?"),
    "search_seed": N_("search seed {seed}, {examples} examples"),
    "search_seed_only": N_("search seed {seed}"),
    "compiler_view": N_("What the compiler made of your code"),
    "graph_n": N_("Graph {n}"),
    "from_lines": N_("from your lines {lines}"),
    "recompile_reasons": N_("Why it compiled again"),
    "guards": N_("Guards (as Dynamo printed them)"),
    "inductor_code_n": N_("Code Inductor generated ({n})"),
    "empty_output": N_("(nothing printed)"),
    "cost_title": N_("What compiling bought: kernels and bytes moved"),
    "cost_learner": N_("yours"),
    "cost_reference": N_("reference"),
    "cost_starter": N_("original"),
    "cost_function": N_("function"),
    "cost_eager_ops": N_("eager ops"),
    "cost_eager_bytes": N_("eager bytes"),
    "cost_kernels": N_("kernels + extern"),
    "cost_compiled_bytes": N_("compiled bytes"),
    "cost_saved": N_("saved"),
    "cost_gpu_time": N_("GPU µs per call (eager → compiled)"),
    "cost_cpu_step": N_("CPU µs per step"),
    "cost_bar_eager": N_("yours, eager"),
    "cost_bar_learner": N_("yours, compiled"),
    "cost_bar_reference": N_("reference, compiled"),
    "cost_bar_starter": N_("original, compiled"),
    "cost_chart": N_("Bytes moved, eager and compiled"),
    "cost_kernel_names": N_("Kernels and extern calls"),
    "cost_note": N_("Compiled bytes are Inductor's estimate (torch._inductor.metrics), not a hardware counter; eager "
                    "bytes count each ATen operator's inputs and outputs (views move nothing). Measured by the judge "
                    "on torch {torch}, inputs {inputs}."),
    "cost_compiling": N_("compiling: frames · graphs · guards · s"),
    "cost_compile_note": N_("Compiling: frames Dynamo traced · graphs · guards · seconds, counted by the judge; your "
                            "function was traced in your own process, so its frames and guards are not counted here "
                            "(the compiler view shows its guards). Seconds are shown, never graded."),
    "cost_offer": N_("What would Inductor make of my graph?"),
    "cost_measuring": N_("Compiling your graph with Inductor…"),
    "cost_waiting": N_("Waiting for a free grader ({ahead} runs ahead)…"),
    "cost_checks_done": N_("Compiling your graph with Inductor: {n} checks done…"),
    "cost_none": N_("No cost figures could be made for this submission."),
    "passed": N_("passed"),
    "failed": N_("failed"),
    "state_not_started": N_("not started"),
    "state_attempted": N_("attempted"),
    "state_solved": N_("solved"),
    "pytorch_says": N_("PyTorch says:"),
    "registry_page": N_("PyTorch's page for"),
    "guard_added_at": N_("The guard that failed:"),
    "timeline": N_("The compiles, call by call"),
    "call": N_("call"),
    "inputs": N_("inputs"),
    "compiled_n": N_("graphs compiled"),
    "guard_failed": N_("guard that failed"),
    "line_col": N_("your line"),
    "playground_breaks": N_("Graph breaks"),
    "playground_no_breaks": N_("No graph break: each call ran as whole graphs."),
    "playground_recompiles": N_("Recompiles"),
    "playground_no_recompiles": N_("No recompile: every call after the first reused a compiled graph."),
    "playground_stopped": N_("The run stopped early"),
    "playground_running": N_("Compiling your function on its example calls…"),
    "playground_notes": N_("Notes"),
    "playground_stages": N_("Inductor's result differs from the graph run op by op"),
    "playground_cost": N_("Cost"),
    "same_failure_as": N_("(the same failure as {check})"),
    "times_n": N_("×{n}"),
    "also_after_breaks": N_("the same guard, checked again after a graph break: line {lines}"),
}

def pick_lang(value: str | None) -> str:
    return value if value in LANGS else DEFAULT_LANG


@cache
def translations(lang: str) -> NullTranslations:
    """The compiled catalog of `lang` (English, the source language, needs none)."""
    if lang == SOURCE_LANG:
        return NullTranslations()
    path = LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"
    if not path.is_file():
        raise RuntimeError(f"{path} is missing: run scripts/i18n.sh to compile the catalogs")
    return Translations.load(LOCALE_DIR, [lang], DOMAIN)


def gettext_for(lang: str) -> Callable[[str], str]:
    """`_` for Python code: `_ = gettext_for(lang); _("Wrong password")`."""
    return translations(pick_lang(lang)).gettext


def strings(lang: str) -> dict[str, object]:
    """The page scripts' strings in `lang`, by key (also `verdict_<VERDICT>` and the `state_*` badges), and
    `byte_units`: how cost.js shows a byte count (judge.costs.view.BYTE_UNITS, the report's own rule)."""
    from judge.costs.view import BYTE_UNITS

    _ = gettext_for(lang)
    table: dict[str, object] = {key: _(message) for key, message in SCRIPT_STRINGS.items()}
    table.update({f"verdict_{v.value}": text(name, pick_lang(lang)) for v, name in VERDICT_NAME.items()})
    table["byte_units"] = [list(unit) for unit in BYTE_UNITS]
    return table


def verdict_name(lang: str, verdict: str | None) -> str:
    """A verdict (or a submission's status while it grades: queued, running) in `lang`."""
    if verdict in Verdict.__members__:  # the verdicts' names are the grading core's (judge.reports.report)
        return text(VERDICT_NAME[Verdict(verdict)], pick_lang(lang))
    message = SCRIPT_STRINGS.get(verdict or "")
    return gettext_for(lang)(message) if message else (verdict or "")


ORIGIN_NAMES = {"browser": N_("browser"), "cli": N_("command line"), "notebook": N_("notebook")}


def origin_name(lang: str, origin: str | None) -> str:
    """Where a submission was sent from (web.tables.ORIGINS), in `lang`."""
    message = ORIGIN_NAMES.get(origin or "")
    return gettext_for(lang)(message) if message else (origin or "")


def install(env: Environment) -> None:
    """Jinja2's i18n extension, translating into the template context's `lang` (one environment, any language)."""

    @pass_context
    def gettext(context, message: str) -> str:
        return translations(pick_lang(context.get("lang"))).gettext(message)

    @pass_context
    def ngettext(context, singular: str, plural: str, n: int) -> str:
        return translations(pick_lang(context.get("lang"))).ngettext(singular, plural, n)

    env.add_extension("jinja2.ext.i18n")
    env.install_gettext_callables(gettext, ngettext, newstyle=True)  # type: ignore[attr-defined]
