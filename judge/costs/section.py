"""The report's cost section, made by the verifier after the hidden tests (judge/verifier_side/verifier.py).

On the exercise's `[cost]` inputs (judge/costs/spec.py, made here with a fixed seed) it measures three functions:
the learner's graph (asked from the runner like any check's compile, rebuilt here; only its graph, never a number
of the runner's), the reference and the starter (the exercise's own code, run here). Each gets its eager figures
and its compiled ones (judge/costs/measure.py), and on a GPU its time. A learner's graph whose results on these inputs
differ from the reference's gets no figures: a cheaper graph that computes something else is not a saving.
The section is display only; exercises graded by cost check it in their hidden tests (judge/costs/checks.py).
"""

from __future__ import annotations

import torch
import torch.utils._pytree as pytree

from judge import remote
from judge.checks.failures import CheckFailure
from judge.checks.sealed import run_sealed
from judge.costs.measure import cost_of, measure_time
from judge.costs.spec import CostSpec
from judge.reports.i18n import T
from judge.reports.report import CostFigures, CostSection
from judge.shared.installed import torch_version

SECTION_TIME_CAP_S = 2.0  # per function and way: the section is display only, and three functions are timed


def learner_graph(spec: CostSpec, args: list):
    """The learner's entry point compiled in the runner on inputs like `args`, its one graph rebuilt here:
    (graph module, the values it takes, its output here). Raises CheckFailure as a check would."""
    compiled = remote.entry_ref().compile(fullgraph=True, what=remote.YOUR_FUNCTION)
    output = compiled(*args)
    index = compiled.calls[-1].graph
    return compiled.graphs[index].gm, compiled.inputs_for(index, *args), output


def _close(actual, expected) -> bool:
    """The learner's result on the cost inputs is the reference's (loosely: this only guards the figures)."""
    got, want = pytree.tree_leaves(actual), pytree.tree_leaves(expected)
    if len(got) != len(want):
        return False
    for a, e in zip(got, want):
        try:
            a, e = torch.as_tensor(a), torch.as_tensor(e)
            loose = e.dtype in (torch.float16, torch.bfloat16)
            if a.shape != e.shape or not torch.allclose(a.double().cpu(), e.double().cpu(), equal_nan=True,
                                                        rtol=2e-2 if loose else 1e-4, atol=2e-2 if loose else 1e-5):
                return False
        except (TypeError, RuntimeError):
            return False
    return True


def figures(who: str, fn, args: list, spec: CostSpec) -> CostFigures:
    """Eager and compiled figures of `fn(*args)` (and its time, on a GPU)."""
    eager, compiled = cost_of(fn, args, mode=spec.mode)
    result = CostFigures(who=who, eager=eager, compiled=compiled)
    if spec.device == "cuda" and torch.cuda.is_available():
        def fresh():
            return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]

        torch._dynamo.reset()
        with torch.no_grad():
            result.eager_time = measure_time(fn, fresh, cpu_per_step=True, time_cap_s=SECTION_TIME_CAP_S)
            options = {"mode": spec.mode} if spec.mode != "default" else {}
            result.compiled_time = measure_time(torch.compile(fn, **options), fresh, time_cap_s=SECTION_TIME_CAP_S,
                                                cpu_per_step=spec.mode == "reduce-overhead")
        torch._dynamo.reset()
    return result


def _unavailable(who: str, why: T) -> CostFigures:
    return CostFigures(who=who, unavailable=why)


def measure(spec: CostSpec, reference_fn, starter_fn, release_runner=lambda: None,
            known: dict | None = None) -> CostSection:
    """The cost section: the learner's figures, the reference's and the starter's, on `spec`'s inputs.
    `release_runner()` is called once the learner's graph is here (nothing more is asked of the runner).
    `known`: the reference's and starter's figures an earlier verifier measured (judge/costs/memo.py), used instead
    of measuring them again where they were made on this torch."""
    args = spec.make_inputs()
    section = CostSection(inputs=spec.describe(), device=spec.device, torch_version=torch_version())
    earlier = {}
    if known and known.get("torch_version") == section.torch_version:
        for item in known.get("figures", []):
            try:
                figures = CostFigures.model_validate(item)
            except ValueError:
                continue
            if figures.who in ("reference", "starter"):
                earlier[figures.who] = figures
    expected = reference_fn(*[a.clone() for a in args])
    remote.reset_runner()
    torch._dynamo.reset()
    try:
        try:
            gm, values, output = learner_graph(spec, args)
        finally:
            release_runner()
    except CheckFailure as exc:
        section.figures.append(_unavailable("learner", T(
            "your function did not compile to one graph on these inputs, so it has no compiled figures: {why}",
            why=exc.message if isinstance(exc.message, T) else T.same(str(exc.message)))))
    else:
        if not _close(output, expected):
            section.figures.append(_unavailable("learner", T(
                "your graph's results on these inputs differ from the reference's: a graph that computes something "
                "else is not a saving, so it has no figures")))
        else:
            section.figures.append(_measured("learner", gm, values, spec))
    section.figures.append(earlier.get("reference") or _measured("reference", reference_fn, args, spec))
    if starter_fn is not None and starter_fn is not reference_fn:
        section.figures.append(earlier.get("starter") or _measured("starter", starter_fn, args, spec))
    return section


def _measured(who: str, fn, args, spec: CostSpec) -> CostFigures:
    try:
        if who == "learner":  # the learner's graph runs sealed, as in every check: it cannot change this process
            return run_sealed(lambda *copies: figures(who, fn, list(copies), spec), list(args),
                              what=remote.YOUR_FUNCTION, mutable=range(len(args)))
        return figures(who, fn, list(args), spec)
    except CheckFailure as exc:
        return _unavailable(who, exc.message if isinstance(exc.message, T) else T.same(str(exc.message)))
    except Exception as exc:  # noqa: BLE001 - a figure that cannot be made is said, never a reason to fail
        return _unavailable(who, T("could not be measured: `{error}`", error=f"{type(exc).__name__}: {exc}"[:300]))
