"""Verifier side of a playground run (judge/parent/playground.py): compile the user's function on the user's inputs and
describe what Dynamo did. No hidden test, no reference, nothing compared: the findings are shown, never judged.

The trusted side writes a one-test module that calls `run(config)`; it asks the runner for the example calls
(the user's `calls` function, run there), asks Dynamo there for every graph break (`explain`), then compiles the
function once and calls it on each example in turn, as the graded checks do: each graph that comes back is
rebuilt from the allowlist here (the compiler's view shows it), each recompile comes with the guard that failed
and the user's line that added it, and with `inductor` each graph is compiled here by Inductor (sealed) so that
the view shows the code it generates; that compile also gives the first call's cost section (judge.costs.measure: eager
ATen ops and bytes, Inductor's kernels and byte estimate), measured here, never reported by the runner. What is
found goes to the result channel as one `doctor` message.
"""

from __future__ import annotations

import torch

from judge import remote
from judge.checks.failures import CheckFailure
from judge.compiler import break_registry, guard_origin
from judge.reports.i18n import T
from judge.reports.report import ErrorDiagnostic, GraphBreakDiagnostic
from judge.shared.protocol import Request
from judge.verifier_side.compiler_view import describe_inputs

MAX_CALLS = 16
MAX_INDUCTOR_GRAPHS = 4


def _calls(config: dict) -> list[tuple]:
    """The user's example calls, each a tuple of arguments (data only: tensors, numbers, lists of them)."""
    value = remote.call(remote.learner(config["calls"]), what=T("your `{name}`", name=config["calls"]))
    if isinstance(value, tuple) and value and not isinstance(value[0], (tuple, list)):
        value = [value]  # one call given as its arguments
    if not isinstance(value, (list, tuple)) or not value:
        raise CheckFailure(T("`{name}()` must return a list of calls, each a tuple of arguments, e.g. "
                             "`[(torch.randn(8), 2)]`", name=config["calls"]))
    calls = []
    for item in list(value)[:MAX_CALLS]:
        if not isinstance(item, (tuple, list)):
            item = (item,)
        for arg in item:
            if isinstance(arg, remote.Ref):
                raise CheckFailure(T("`{name}()` returned an argument that is not data (tensors, numbers, strings "
                                     "and lists, tuples or dicts of them)", name=config["calls"]))
        calls.append(tuple(item))
    return calls


def _breaks(entry: remote.Ref, args: tuple, dynamic) -> list[GraphBreakDiagnostic]:
    answer = remote.current().runner.request(Request.EXPLAIN, target=entry.spec, args=remote.encode_arg(args),
                                             options={"dynamic": dynamic})
    if answer.get("error"):
        remote.raise_learner_error(answer["error"], remote.YOUR_FUNCTION)
    found = []
    for item in answer.get("breaks", [])[:50] if isinstance(answer.get("breaks"), list) else []:
        try:
            found.append(GraphBreakDiagnostic.model_validate(item))
        except ValueError:
            raise remote.Protocol(T("malformed graph-break description")) from None
    return break_registry.enrich(found)


def _compile_each(entry: remote.Ref, calls: list[tuple], config: dict, findings: dict) -> None:
    grading = remote.current()
    client, view = grading.runner, grading.view
    session = entry.compile(dynamic=config.get("dynamic"))  # holds the rebuilt graphs
    client.reset()
    todo: list[tuple[int, tuple]] = []  # (graph, the call that made it): compiled here by Inductor at the end
    for args in calls:
        answer = client.request(Request.COMPILE, session=session.session, target=entry.spec,
                                options=session.options, args=remote.encode_arg(args),
                                kwargs={"dict": {}}, mark_dynamic=[])
        before = len(session.graphs)
        session.take_graphs(answer.get("graphs", []))
        reasons = answer.get("recompiles", [])
        reasons = [str(r)[:500] for r in reasons[:20]] if isinstance(reasons, list) else []
        origins = guard_origin.from_runner(answer.get("guard_origins"))
        if view is not None:
            view.add_recompiles(reasons)
            if isinstance(answer.get("guards"), str):
                view.add_guards(answer["guards"])
            view.add_call(describe_inputs(args), len(session.graphs) - before, origins, reasons)
        findings["origins"] += [o.model_dump(mode="json") for o in origins]
        if answer.get("error"):
            remote.raise_learner_error(answer["error"], remote.YOUR_FUNCTION)
        for index in range(before, min(len(session.graphs), MAX_INDUCTOR_GRAPHS)):
            todo.append((index, args))
    if not config.get("inductor", True) or not todo:
        return
    reads_state = any(isinstance(spec, dict) and spec.get("kind") == "state" and spec.get("owner") == "target"
                      for index, _ in todo for spec in session.graphs[index].inputs)
    if reads_state:  # a module's parameters and buffers, copied here once
        try:
            session.state["target"] = remote.state(session.target, graph_inputs=True)
        except CheckFailure:
            pass
    # Nothing more is asked of the runner: let it end, so that Inductor's compiles here do not use its time.
    client.release_runner()
    first_call = todo[0][1]
    measured = []
    for index, args in todo:
        figures = _inductor(session, index, args, findings)
        if args is first_call:
            measured.append(figures)
    if measured and all(f is not None for f in measured):
        findings["cost"] = _cost_section(first_call, measured).model_dump(mode="json")


def _inductor(session: remote.RemoteCompiled, index: int, args: tuple, findings: dict):
    """Compile graph `index` here with Inductor on the call's own arguments (its code goes to the view), sealed
    as every run of a returned graph; that compile also gives the graph's cost figures (judge.costs.measure), returned
    as
    (eager, compiled), or None where there are none."""
    from judge.checks.sealed import run_sealed
    from judge.costs.measure import cost_of, recording_inductor
    from judge.remote.compiled import LastRun
    from judge.remote.stages import rerun

    try:
        values = session.bind(index, args, {})
    except CheckFailure:
        return None  # a graph that reads a module's state or a later graph's inputs: shown without generated code
    gm = session.graphs[index].gm
    compiled: list = []

    def compile_and_measure(*copies):
        output = torch.compile(gm, backend=recording_inductor(gm, list(copies)))(*copies)
        compiled.append(tuple(output) if isinstance(output, (list, tuple)) else (output,))
        return cost_of(gm, list(copies))  # recorded by that compile: nothing is compiled twice

    try:
        eager = rerun(LastRun(session, index, values, ()), "eager")  # before Inductor's run updates any input
        figures = run_sealed(compile_and_measure, list(values), what=remote.YOUR_FUNCTION,
                             mutable=range(len(values)))
        _compare_with_eager(LastRun(session, index, values, compiled[0]), eager, findings)
        return figures
    except CheckFailure as exc:  # the graph changed the verifier's state: said, never judged
        message = exc.message if isinstance(exc.message, T) else T.same(str(exc.message))
        findings["notes"].append(message.render("en")[:300])
    except Exception as exc:  # noqa: BLE001 - shown, never judged
        findings["notes"].append(f"Inductor could not compile graph {index + 1}: {type(exc).__name__}")
    return None


def _compare_with_eager(run, eager: tuple, findings: dict) -> None:
    """Where Inductor's result of a graph differs from the same graph run op by op (the dtype's default
    tolerances), the compiler stage that changes it (judge/verifier_side/stages.py), into `findings["stages"]`."""
    from judge.checks.numerics import Compared
    from judge.remote.stages import locate

    same = Compared(actual=run.flat, expected=eager, rtol=None, atol=None, equal_nan=True)
    if same.agrees(run.flat):
        return
    found = locate(run, same.agrees, "inductor")
    if found is not None and found.stage != "eager":  # eager against itself differs: a graph that draws randomness
        findings.setdefault("stages", []).append({"graph": run.index, **found.model_dump(mode="json")})


def _cost_section(args: tuple, measured: list):
    """The playground's cost section: the first example call's graphs, eager against compiled, summed (after a
    graph break the code between the graphs ran in the user's process and is not counted). No reference."""
    from judge.reports.report import CompileCost, CompiledCost, CostFigures, CostSection, EagerCost
    from judge.shared.installed import torch_version

    eager = EagerCost(ops=sum(e.ops for e, _ in measured), views=sum(e.views for e, _ in measured),
                      bytes_read=sum(e.bytes_read for e, _ in measured),
                      bytes_written=sum(e.bytes_written for e, _ in measured))
    compiled = CompiledCost(graphs=sum(c.graphs for _, c in measured),
                            kernels=[k for _, c in measured for k in c.kernels],
                            extern_calls=[k for _, c in measured for k in c.extern_calls],
                            bytes_estimate=sum(c.bytes_estimate for _, c in measured),
                            compile=CompileCost(inductor_s=round(sum(c.compile.inductor_s for _, c in measured
                                                                     if c.compile), 3)))
    device = next((a.device.type for a in args if isinstance(a, torch.Tensor)), "cpu")
    return CostSection(inputs=describe_inputs(args), device=device, torch_version=torch_version(),
                       figures=[CostFigures(who="learner", eager=eager, compiled=compiled)])


def run(config: dict) -> None:
    """The playground's one check: what Dynamo does with the user's function on the user's inputs."""
    findings: dict = {"calls": 0, "breaks": [], "origins": [], "notes": [], "error": None}
    grading = remote.current()
    grading.playground_findings = findings
    if grading.view is not None:
        grading.view.start_test("")  # the timeline's calls are the user's, not a test's
    entry = remote.entry_ref()
    try:
        calls = _calls(config)
        findings["calls"] = len(calls)
        findings["breaks"] = [b.model_dump(mode="json") for b in _breaks(entry, calls[0], config.get("dynamic"))]
        _compile_each(entry, calls, config, findings)
    except CheckFailure as exc:  # the user's code failed: described, as a grading would, not judged
        diagnostics = break_registry.enrich(list(exc.diagnostics))
        message = exc.message if isinstance(exc.message, T) else T.same(str(exc.message))
        error = next((d for d in diagnostics if isinstance(d, ErrorDiagnostic)), None)
        findings["error"] = {"message": message.render("en"), "message_zh": message.render("zh"),
                             "diagnostic": error.model_dump(mode="json") if error else None}
        findings["breaks"] += [d.model_dump(mode="json") for d in diagnostics if isinstance(d, GraphBreakDiagnostic)]
