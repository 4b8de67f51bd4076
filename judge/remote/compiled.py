"""A target compiled in the runner, its captured graphs run here: what `Ref.compile(...)` returns.

Calling a `RemoteCompiled` with the test's own inputs sends the runner only example inputs (same shapes and
dtypes, other values), receives the graphs Dynamo captured, rebuilds them from the allowlist and runs the one
the call ran here, sealed, on the test's inputs (`judge.checks.sealed`). The numbers a test compares are
therefore computed by the verifier; the runner's answers can only make a check fail or explain why.

With `reuse` (`Ref.compile(reuse=True)`), the compile session in the runner is shared with the other tests of the
grading that compile the same target with the same options (judge/remote/transport.py: `shared_compile`), so that
Dynamo compiles once per guard set, not once per test. What the verifier does is the same: each `RemoteCompiled`
rebuilds the session's graphs for itself (a rewrite, a local backend, module state and counts stay its own) and
runs them sealed on copies; a call that fails on a state earlier tests left is made again from a fresh one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.fx
import torch.utils._pytree as pytree

from judge.checks.failures import CheckFailure, GraphBreak, WrongAnswer
from judge.checks.sealed import run_sealed
from judge.compiler import guard_origin
from judge.costs import measure as cost_measure
from judge.remote.context import current
from judge.remote.failures import YOUR_FUNCTION, Protocol, first_lines, raise_learner_error
from judge.remote.graphs import Graph, rebuild
from judge.remote.values import decode_result, encode_arg, example_like, signature
from judge.reports.i18n import T, in_code
from judge.shared import ir, phases, wire
from judge.shared.protocol import Request
from judge.verifier_side.compiler_view import describe_inputs

if TYPE_CHECKING:
    from judge.remote.refs import Ref


@dataclass
class Call:
    """One call of a compiled target: the graph it ran (its index), its output here, what it printed there."""

    graph: int | None
    output: object
    printed: str = ""


@dataclass
class LastRun:
    """The last graph run here, kept until the next (judge/remote/stages.py runs it again on a mismatch): the
    session, the graph's index, its inputs as bound for the call (those it may update in place as they were before
    it, where a compiler stage ran it) and its outputs here."""

    compiled: RemoteCompiled
    index: int
    values: list
    flat: tuple


class RemoteCompiled:
    """`torch.compile(target, ...)` in the runner; calls run the captured graph here on real inputs.

    Made by `Ref.compile(...)`, which documents and checks the options."""

    def __init__(self, target: Ref, options: dict, *, what=YOUR_FUNCTION, local_backend=None, mutates_args=(),
                 rewrite_graph: Callable[[torch.fx.GraphModule], None] | None = None, reuse: bool = False):
        self.context = current()
        self.reuse = reuse and self.context.reuse_compiled
        self.session = "" if self.reuse else self.context.new_session()
        self._generation: int | None = None  # reuse: the runner's generation of shared sessions attached to
        self._offset = 0  # reuse: graphs taken from earlier generations (the runner numbers each session's from 0)
        self.target, self.options, self.what = target, dict(options), what
        self.graphs: list[Graph] = []
        self.recompile_reasons: list[str] = []
        self.calls: list[Call] = []
        self.state: dict[str, dict[str, torch.Tensor]] = {}
        self.local_backend = local_backend
        self.mutates_args = frozenset(mutates_args)
        self.rewrite_graph = rewrite_graph
        self.last_output_spec = None
        self._local: dict[int, object] = {}
        self._rewritten: set[int] = set()
        self._ran_local: set[int] = set()  # graphs run once with `local_backend` (the first run compiles)
        self._last_flat: tuple = ()

    @property
    def frame_count(self) -> int:
        """How many graphs Dynamo captured over the session."""
        return len(self.graphs)

    @property
    def graph_modules(self) -> list[torch.fx.GraphModule]:
        """The captured graphs as rebuilt here, in capture order."""
        return [g.gm for g in self.graphs]

    def __call__(self, *args, examples=None, mark_dynamic=(), keep=False, **kwargs):
        """Run once: the runner compiles/calls on `examples` (default: `example_like(args)`), we run the graph
        on `args`. With `keep`, the runner's example arguments themselves are the real ones (for values the
        runner must see, such as a module's state)."""
        sent_args = args if keep else (examples if examples is not None else example_like(args))
        fields = dict(session=self.session, target=self.target.spec, options=self.options,
                      args=encode_arg(tuple(sent_args)), kwargs=encode_arg(example_like(kwargs)),
                      mark_dynamic=[list(m) for m in mark_dynamic])
        if self.reuse and not keep and examples is None:
            answer = self._shared_call(fields)
            if self.context.runner.carried and not _clean(answer):  # perhaps the earlier tests' state: once more,
                self.context.runner.drop_shared()  # from a fresh one, and that answer is the call's
                answer = self._shared_call(fields)
        else:
            if self.reuse:  # values the runner sees as they are: this object's own session from now on
                self.reuse, self.session, self._offset = False, self.context.new_session(), len(self.graphs)
            answer = self.context.runner.request(Request.COMPILE,
                                                 replay_key=self._replay_key(fields, keep or examples is not None),
                                                 **fields)
            self.take_graphs(answer.get("graphs", []))
        reasons = answer.get("recompiles", [])
        new_reasons = [str(r)[:500] for r in reasons[:20]] if isinstance(reasons, list) else []
        self.recompile_reasons += new_reasons
        view = self.context.view
        if view is not None:
            view.add_recompiles(new_reasons)
            _record_call(view, args, kwargs, answer, new_reasons)
            if isinstance(answer.get("guards"), str):
                view.add_guards(answer["guards"])
        if answer.get("error"):
            raise_learner_error(answer["error"], self.what)
        ran = answer.get("ran")
        if not isinstance(ran, list) or not all(isinstance(i, int) and 0 <= i + self._offset < len(self.graphs)
                                                for i in ran):
            raise Protocol(T("{what}: your code's process named a graph it never sent", what=self.what))
        ran = [i + self._offset for i in ran]
        if len(ran) != 1:
            count = len(ran)
            raise GraphBreak(T("{what}: one call ran {count} graphs; the judge checks calls that run exactly one "
                               "captured graph (no graph break)", what=self.what, count=count), [])
        output = self.run_graph(ran[0], args, kwargs, answer.get("output"))
        self.last_output_spec = answer.get("output")  # how graph ran[0]'s outputs form a result (for run_graph)
        self._follow_state(answer.get("state_out"))
        self.calls.append(Call(ran[0], output, str(answer.get("printed", ""))[:20000]))
        return output

    def _shared_call(self, fields: dict) -> dict:
        """The call in the runner's shared session of this target and options: the session's graphs that this
        object has not rebuilt yet (captured for other tests, or before a reset) taken first, then the answer's."""
        key = hashlib.sha256(json.dumps([fields["target"], self.options], sort_keys=True, default=str).encode())
        signature_ = json.dumps([signature([fields["args"], fields["kwargs"]]), fields["mark_dynamic"]])
        sent = {k: v for k, v in fields.items() if k != "session"}
        generation, session, answer = self.context.runner.shared_compile(key.hexdigest()[:16], signature_, **sent)
        if generation != self._generation:  # a new generation numbers its graphs from 0 again
            self._generation, self._offset = generation, len(self.graphs)
        self.take_graphs(session.graphs[len(self.graphs) - self._offset:])
        graphs = answer.get("graphs", [])
        self.take_graphs(graphs)
        session.graphs += graphs  # accepted: each was rebuilt here
        return answer

    def _replay_key(self, fields: dict, values_matter: bool) -> tuple | None:
        """What the answer to this compile depends on, or None where values or runner-held objects may matter
        (arguments the runner sees as they are, a kept object, a graph sent to it)."""
        text = json.dumps([fields["target"], fields["args"], fields["kwargs"]])
        if values_matter or '"handle"' in text or '"graph"' in text:
            return None
        return (Request.COMPILE.value, self.context.runner.session_order(self.session),
                json.dumps(fields["target"], sort_keys=True), json.dumps(self.options, sort_keys=True, default=str),
                json.dumps(signature([fields["args"], fields["kwargs"]])), json.dumps(fields["mark_dynamic"]))

    def _follow_state(self, moved) -> None:
        """State the runner's module holds, after the call, as a graph output (a rebound buffer): our copy takes
        that output as computed here. A wrong mapping can only make later results wrong."""
        if not isinstance(moved, list):
            return
        for item in moved[:256]:
            if not isinstance(item, dict) or not isinstance(item.get("out"), int):
                raise Protocol(T("malformed state update"))
            store = self.state.get(str(item.get("owner")))
            if store is None or str(item.get("name")) not in store:
                continue  # state this side does not hold: the graph never reads it here
            if not 0 <= item["out"] < len(self._last_flat):
                raise Protocol(T("a state update refers to a graph output that does not exist"))
            store[str(item["name"])] = self._last_flat[item["out"]]

    def take_graphs(self, graphs) -> None:
        """Rebuild the graphs of a compile answer (in order, each with its inputs' sources) and keep them."""
        if not isinstance(graphs, list):
            raise Protocol(T("malformed graph list"))
        for item in graphs:
            if not isinstance(item, dict) or item.get("index") != len(self.graphs) - self._offset:
                raise Protocol(T("graphs arrived out of order"))
            inputs = item.get("inputs")
            if not isinstance(inputs, list):
                raise Protocol(T("a graph came without its inputs"))
            gm = rebuild(item.get("ir"))
            if len(inputs) != len(ir.placeholders(gm)):
                raise Protocol(T("a graph's inputs do not match its placeholders"))
            self.graphs.append(Graph(gm, inputs))
            if self.context.view is not None:
                self.context.view.add_graph(item.get("ir"), gm)

    def inputs_for(self, index: int, *args, **kwargs) -> list:
        """The values graph `index` takes for a call with `args` (to compile it here, e.g. with Inductor)."""
        return self.bind(index, args, kwargs)

    def bind(self, index: int, args, kwargs) -> list:
        """The values for graph `index`'s inputs, taken from this side's arguments and state."""
        graph = self.graphs[index]
        values, symbols = [], {}
        for _node, spec in zip(ir.placeholders(graph.gm), graph.inputs):
            kind = spec.get("kind") if isinstance(spec, dict) else None
            if kind in ("arg", "kwarg"):
                values.append(_at_path(args if kind == "arg" else kwargs, spec.get("path"), self.what))
            elif kind == "state":
                owner, name = str(spec.get("owner")), str(spec.get("name"))
                values.append(self._state_tensor(owner, name))
            elif kind == "const":
                try:
                    value = spec.get("value")  # a tensor travels as encode_tensor's object, anything else as wire
                    values.append(wire.decode_tensor(value) if isinstance(value, dict) and "data" in value
                                  else wire.decode(value))
                except (wire.WireError, TypeError):
                    raise Protocol(T("a graph constant is malformed")) from None
            elif kind == "scalar":
                values.append(_number_argument(spec, args, kwargs, self.what))
            elif kind == "sym":
                values.append(None)
            else:
                raise Protocol(T("unknown graph input kind `{kind}`", kind=in_code(repr(kind)[:80])))
        # Symbolic sizes: bind each symbol from a tensor input whose recorded shape names it.
        for node, value in zip(ir.placeholders(graph.gm), values):
            shape = node.meta.get("ir", {}).get("value", {}).get("shape")
            if isinstance(value, torch.Tensor) and isinstance(shape, list):
                if len(shape) != value.dim():
                    raise WrongAnswer(T("{what}: the captured graph expects a {want}-d input, the call passed "
                                        "{got}-d", what=self.what, want=len(shape), got=value.dim()))
                for want, got in zip(shape, value.shape):
                    if isinstance(want, int) and want != got:
                        raise WrongAnswer(T("{what}: the captured graph was specialised to size {want} and cannot "
                                            "take an input of size {got}", what=self.what, want=want, got=got))
                    if isinstance(want, str):
                        symbols.setdefault(want, got)
        for i, (_node, spec) in enumerate(zip(ir.placeholders(graph.gm), graph.inputs)):
            if spec.get("kind") == "sym":
                symbol = str(spec.get("symbol"))
                if symbol not in symbols:
                    raise Protocol(T("the graph's symbolic size `{symbol}` is not the size of any input",
                                   symbol=in_code(symbol[:80])))
                values[i] = symbols[symbol]
        return values

    def _state_tensor(self, owner: str, name: str) -> torch.Tensor:
        store = self.state.get(owner)
        if store is None or name not in store:
            raise Protocol(T("the graph reads state `{name}` that the verifier does not hold",
                           name=in_code(f"{owner}.{name}"[:160])))
        return store[name]

    def input_names(self, index: int) -> tuple[list[str], set[int]]:
        """(a name for each input of graph `index`, the positions it may update in place: state, and the
        arguments in `mutates_args`)."""
        graph, names, mutable = self.graphs[index], [], set()
        for i, (node, spec) in enumerate(zip(ir.placeholders(graph.gm), graph.inputs)):
            kind, path = spec.get("kind"), spec.get("path")
            first = path[0] if isinstance(path, list) and path else None
            if kind == "state":
                names.append(f"{spec.get('owner')}.{spec.get('name')}"[:80])
                mutable.add(i)
            elif kind in ("arg", "kwarg"):
                names.append(_shown_source(node, first))
                if first in self.mutates_args:
                    mutable.add(i)
            else:
                names.append(node.name)
                mutable.add(i)  # a constant or a size: made afresh for every call
        return names, mutable

    def run_graph(self, index: int, args, kwargs, output_spec):
        """Graph `index` run here, sealed, on this call's arguments (compiled with `local_backend` first, once)."""
        values = self.bind(index, args, kwargs)
        run = self.graphs[index].gm
        if self.rewrite_graph is not None and index not in self._rewritten:
            self.rewrite_graph(run)
            run.recompile()
            self._rewritten.add(index)
        if self.local_backend is not None:
            if index not in self._local:
                backend = self.local_backend
                # the same compile, its figures kept for the cost section (judge.costs.measure, reached through
                # its module: it imports judge.checks, which imports this module, so it may be half-imported here)
                if backend == "inductor":
                    backend = cost_measure.recording_inductor(run, values)
                self._local[index] = torch.compile(run, backend=backend)
            run = self._local[index]

        def plain(*copies):
            try:
                return run(*copies)
            except CheckFailure:
                raise
            except Exception as exc:  # noqa: BLE001 - the graph from the runner fails on our inputs
                raise WrongAnswer(T("{what}: the captured graph fails on the judge's inputs: `{error}: {detail}`",
                                    what=self.what, error=type(exc).__name__,
                                    detail=in_code(first_lines(str(exc), 2)))) from None

        names, mutable = self.input_names(index)
        first = self.local_backend is not None and index not in self._ran_local
        self._ran_local.add(index)
        # a compiler stage's result may be questioned (judge/remote/stages.py): what it may update, as it was
        before = values if self.local_backend is None else _as_before(values, mutable)
        with phases.span(f"verifier.{self.local_backend or 'graph'}_{'compile_and_run' if first else 'run'}"):
            flat = run_sealed(plain, values, what=self.what, mutable=mutable, names=names)
        self._last_flat = flat if isinstance(flat, (list, tuple)) else (flat,)
        self.context.last_run = LastRun(self, index, before, tuple(self._last_flat))
        return _assemble(output_spec, flat, args, self.what, self.target)


def _clean(answer: dict) -> bool:
    """A compile answer with no error that ran exactly one graph (what a failed check would not come from)."""
    return not answer.get("error") and isinstance(answer.get("ran"), list) and len(answer["ran"]) == 1


def _as_before(values: list, mutable) -> list:
    """`values` with a clone of each tensor the graph may update in place (the others are left as they are)."""
    return [v.detach().clone() if i in mutable and isinstance(v, torch.Tensor) else v for i, v in enumerate(values)]


def _record_call(view, args, kwargs, answer: dict, reasons: list[str]) -> None:
    """The call in the compiler's view's timeline, with where its failed guards came from (shown only)."""
    graphs = answer.get("graphs")
    view.add_call(describe_inputs(args, kwargs), len(graphs) if isinstance(graphs, list) else 0,
                  guard_origin.from_runner(answer.get("guard_origins")), reasons)


SCALAR_DTYPES = {"float64": torch.float64, "float32": torch.float32}


def _number_argument(spec: dict, args, kwargs, what) -> torch.Tensor:
    """A number argument of this side's call, as the 0-d tensor the graph takes it as (judge/runner_side/
    compiling.py: a float that changed between calls): by name, else by position, else the parameter's default."""
    name, index = spec.get("name"), spec.get("index")
    if isinstance(name, str) and name in kwargs:
        value = kwargs[name]
    elif isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(args):
        value = args[index]
    elif "default" in spec:
        value = spec["default"]
    else:
        raise Protocol(T("{what}: a graph input refers to an argument that does not exist", what=what))
    dtype = SCALAR_DTYPES.get(spec.get("dtype"))
    if dtype is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Protocol(T("{what}: a graph's number input is not a number of a known kind", what=what))
    return torch.tensor(value, dtype=dtype)


def _shown_source(node: torch.fx.Node, first) -> str:
    """`x` for a graph input Dynamo recorded as L['x'] (display only), else `argument N`."""
    source = str(node.meta.get("ir", {}).get("source", ""))
    found = re.fullmatch(r"L\['(\w{1,40})'\]", source) or re.fullmatch(r"l_(\w{1,40}?)_", node.name)
    if found:
        return found.group(1)
    return f"argument {first + 1}" if isinstance(first, int) else str(first)[:40]


def _at_path(value, path, what):
    if not isinstance(path, list):
        raise Protocol(T("malformed input path"))
    for step in path:
        try:
            value = value[step]
        except (IndexError, KeyError, TypeError):
            raise Protocol(T("{what}: a graph input refers to an argument that does not exist", what=what)) from None
    return value


def _assemble(spec, flat, args, what, target):
    if not isinstance(spec, dict) or not isinstance(spec.get("leaves"), list):
        raise Protocol(T("malformed output description"))
    leaves = []
    for leaf in spec["leaves"]:
        if not isinstance(leaf, dict) or len(leaf) != 1:
            raise Protocol(T("malformed output leaf"))
        if "out" in leaf:
            i = leaf["out"]
            if not isinstance(i, int) or not 0 <= i < len(flat):
                raise Protocol(T("an output refers to a graph output that does not exist"))
            leaves.append(flat[i])
        elif "arg" in leaf:
            leaves.append(_at_path(args, leaf["arg"], what))
        else:
            leaves.append(decode_result(leaf["value"], target))
    if spec.get("spec") is None:
        return leaves[0] if len(leaves) == 1 else tuple(leaves)
    try:
        treespec = pytree.treespec_loads(spec["spec"])
        return pytree.tree_unflatten(leaves, treespec)
    except Exception:  # noqa: BLE001
        raise Protocol(T("malformed output structure")) from None
