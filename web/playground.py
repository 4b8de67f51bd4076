"""The playground page and its API: paste a function and its example inputs, see what torch.compile does with
them (judge/parent/playground.py). No exercise, no hidden test, no verdict.

A run uses the web app's sandbox backend with a grading's limits (the same runner and verifier, one generated
check); it is admitted, waits for one of `settings.workers` slots without holding a thread, and is dropped if its
client goes first, as `web.admission` says for every run of learner code (429 with Retry-After when refused). A
deployment whose web processes do not grade (the PostgreSQL queue, `practice worker`s) says so on the page, with
the Run button off, and its API answers 503 with that message (`ON_WORKERS`, in the page's language).
"""

from __future__ import annotations

import threading

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from judge.reports.report import localized
from web.api import learner, parse_source, read_body, source_body_bytes
from web.i18n import N_
from web.offload import in_thread

router = APIRouter()
EXAMPLE = '''import torch


def step(x, n):
    h = x * n                    # Python 的 int 是图里的常量  # en: a Python int: a constant of the graph
    if h.sum() > 0:              # 按张量的值走 Python 分支  # en: a Python branch on a tensor's value
        h = h - 1
    return torch.relu(h)


def example_calls():             # 依次编译并运行的调用：参数元组的列表  # en: the calls, in order: argument tuples
    return [(torch.randn(8), 2), (torch.randn(8), 3)]


__practice__ = {"function": "step", "calls": "example_calls", "dynamic": None, "inductor": True}
'''


class PlaygroundRuns:
    """The playground's sandbox, made on the first run (who may run, and when, is `web.admission`'s)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sandbox = None


# Why a deployment whose web processes do not grade (the PostgreSQL queue) runs no playground: a run's findings come
# back over the two processes' channels while the request waits, which Procrastinate's jobs do not carry.
ON_WORKERS = N_("This server grades on separate workers (`practice worker`), and the playground runs only where the "
                "web process grades. Run `practice playground FILE` on your own machine: it shows the same findings.")


def runs_here(request: Request) -> bool:
    """Whether this web process runs playground runs (it has a sandbox: not the PostgreSQL queue's web side)."""
    return request.app.state.sandbox_name != "workers"


def runs_of(request: Request) -> PlaygroundRuns:
    state = request.app.state
    if getattr(state, "playground", None) is None:
        state.playground = PlaygroundRuns()
    return state.playground


def _sandbox(runs: PlaygroundRuns, name: str):
    with runs.lock:
        if runs.sandbox is None:
            from judge.parent.grading import make_sandbox

            runs.sandbox = make_sandbox(name)
        return runs.sandbox


def starter_form(exercise, lang: str = "zh") -> str:
    """An exercise's starter (its comments in `lang`) with a `__practice__` block to fill in (example inputs from
    its contract)."""
    calls, note = "()", "  # each call: a tuple of the arguments, e.g. (torch.randn(4, 8),)"
    if exercise.contract:
        note = ""
        sizes = {name: max(lo, min(hi, 4)) for name, (lo, hi) in exercise.contract.dims.items()}
        args = []
        for spec in exercise.contract.inputs:
            shape = ", ".join(str(sizes.get(d, d)) for d in spec.shape)
            dtype = {"int64": "torch.long", "int32": "torch.int32", "bool": "torch.bool"}.get(spec.dtype or "")
            args.append(f"torch.randint(0, 4, ({shape},), dtype={dtype})" if dtype and dtype != "torch.bool"
                        else f"torch.rand({shape}) > 0.5" if dtype else f"torch.randn({shape})")
        calls = "(" + "".join(a + ", " for a in args) + ")"
    return (exercise.code(exercise.starter, lang).rstrip("\n") + "\n\n\ndef example_calls():\n    return [" + calls
            + "]" + note + "\n\n\n__practice__ = {\"function\": " + repr(exercise.entry_point)
            + ", \"calls\": \"example_calls\", \"inductor\": True}\n")


@router.get("/playground", response_class=HTMLResponse, include_in_schema=False)
def playground_page(request: Request, exercise: str | None = None) -> HTMLResponse:
    from web.pages import lang_of, page

    found = request.app.state.course.get(exercise) if exercise else None
    from judge.parent.comments import in_language

    source = starter_form(found, lang_of(request)) if found is not None else in_language(EXAMPLE, lang_of(request))
    return page(request, "playground.html", {"exercise": found, "runs_here": runs_here(request),
                                             "on_workers": ON_WORKERS, "boot": {
        "source": source, "draft_key": f"playground:{found.id}" if found else "playground",
        "style_nonce": request.state.csp_nonce, "raw_output_chars": request.app.state.settings.raw_output_chars}})


@router.post("/api/playground", tags=["playground"], responses={
    413: {"description": "Source larger than the limit."}, 422: {"description": "Body is not {\"source\": ...}."},
    429: {"description": "Too many runs, or one is still running; see Retry-After."},
    503: {"description": "This deployment grades on separate workers; the playground runs only where the web "
                         "process grades."}})
async def run_playground(request: Request, lang: str | None = Query(None, pattern="^(zh|en)$")) -> dict:
    """Compile the posted file's function on its example calls (its `__practice__` block) and return what was
    found (judge.parent.playground.PlaygroundReport): graph breaks, recompiles with the line behind each guard, the
    compiler's
    view. No verdict."""
    from judge.parent.playground import run_playground

    state = request.app.state
    source = parse_source(await read_body(request, source_body_bytes()))
    if not runs_here(request):
        from web.i18n import gettext_for
        from web.pages import lang_of

        raise HTTPException(503, gettext_for(lang or lang_of(request))(ON_WORKERS))
    runs, who = runs_of(request), await in_thread(learner, request)
    report = await state.admission.run(request, "playground", who,
                                       lambda: run_playground(source, sandbox=_sandbox(runs, state.sandbox_name)))
    return (localized(report, lang) if lang else report).model_dump(mode="json")


def close(app) -> None:
    """Stop the playground's sandbox (its warm workers), if one was made."""
    runs = getattr(app.state, "playground", None)
    if runs is not None and runs.sandbox is not None:
        runs.sandbox.close()
