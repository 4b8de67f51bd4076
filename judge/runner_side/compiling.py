"""Runner side of a compile session: torch.compile a target with a recording backend and describe each call.

For every graph Dynamo hands to the backend it records where each graph input came from (an argument of
the call, a module's parameter or buffer, a symbolic size, a number argument Dynamo passes as a 0-d tensor, or a
constant it sends by value); after each
call it says which graph ran and how the call's result is made of the graph's outputs. The verifier uses
exactly this to run the same graphs on its own inputs.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import re

import torch
import torch.utils._pytree as pytree

from judge.shared import ir, wire
from judge.shared.learner_errors import describe
from judge.shared.protocol import ErrorKind


def _paths(value, prefix=()):
    """(path, tensor) for every tensor inside nested lists/tuples/dicts of call arguments."""
    if isinstance(value, torch.Tensor):
        yield prefix, value
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                yield from _paths(v, prefix + (k,))


def _module_state(obj, owner: str) -> dict[int, dict]:
    """id(tensor) -> {"kind": "state", "owner", "name"} for the parameters and buffers of a module."""
    found = {}
    if isinstance(obj, torch.nn.Module):
        for name, t in list(obj.named_parameters()) + list(obj.named_buffers()):
            found[id(t)] = {"kind": "state", "owner": owner, "name": name}
    return found


MAX_GUARD_CHARS = 12_000
ACTIVE: list = []  # [the Session whose call is running]: where `recording_backend` sends a graph


def recording_backend(gm, example_inputs):
    """A backend the learner's own `torch.compile(..., backend=...)` may be handed (an exercise's public module):
    it records into the session of the call being served, like the backend `force_backend` swaps in, while the
    learner's other options (`recompile_limit` among them, which `force_backend` bypasses) keep their effect."""
    if not ACTIVE:
        raise RuntimeError("the judge's backend compiles only while the judge serves a call")
    return ACTIVE[0]._backend(gm, example_inputs)


class Session:
    """One compiled target; each `call` runs it once and reports what Dynamo did."""

    def __init__(self, target, options: dict, handles: dict):
        self.target = target
        self.handles = handles
        self.graphs: list[tuple[torch.fx.GraphModule, list[dict]]] = []
        self.sent = 0
        self.ran: list[int] = []
        self.outputs: dict[int, tuple] = {}
        self.current = None
        self.force = bool(options.get("force_backend"))
        self.own_backend = bool(options.get("learner_backend"))  # the learner compiled with `recording_backend`
        self.tensor_lines: dict[str, dict] = {}  # tensor source -> the learner's line that first used it
        compile_options = {k: options[k] for k in ("fullgraph", "dynamic") if k in options}
        self.compiled = target if self.force or self.own_backend \
            else torch.compile(target, backend=self._backend, **compile_options)

    def _backend(self, gm, example_inputs):
        from torch._guards import TracingContext

        if TracingContext.try_get() is None:  # called by hand, not by Dynamo: a graph nothing compiled
            raise RuntimeError("the judge's backend takes only the graphs Dynamo captures while compiling")
        index = len(self.graphs)
        self.graphs.append((gm, self._describe_inputs(gm, example_inputs)))

        def run(*args):
            self.ran.append(index)
            out = gm.forward(*args)
            self.outputs[index] = out
            return out

        return run

    def _describe_inputs(self, gm, example_inputs) -> list[dict]:
        args, kwargs = self.current
        by_id = {id(t): {"kind": "arg", "path": list(p)} for p, t in _paths(args)}
        by_id.update({id(t): {"kind": "kwarg", "path": list(p)} for p, t in _paths(kwargs)})
        for name, obj in self.handles.items():
            if obj is not self.target:
                by_id.update(_module_state(obj, name))
        by_id.update(_module_state(self.target, "target"))  # the compiled module's own state is "target"
        for i, arg in enumerate(args):
            if isinstance(arg, torch.nn.Module):
                by_id.update(_module_state(arg, f"arg{i}"))
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        described = []
        for node, value in zip(placeholders, example_inputs):
            if isinstance(value, torch.Tensor) and id(value) in by_id:
                described.append(by_id[id(value)])
            elif isinstance(value, (int, torch.SymInt)) and not isinstance(value, bool):
                described.append({"kind": "sym", "symbol": str(node.meta.get("example_value", value))})
            elif isinstance(value, torch.Tensor) and (number := self._number_argument(node, value)) is not None:
                described.append(number)
            elif isinstance(value, torch.Tensor):
                described.append({"kind": "const", "value": wire.encode_tensor(value)})
            else:
                described.append({"kind": "const", "value": wire.encode(value)})
        return described

    def _number_argument(self, node, value: torch.Tensor) -> dict | None:
        """A Python number argument that Dynamo hands the graph as a 0-d tensor (a float that changed between
        calls): {"kind": "scalar", "name", "dtype", "index" (its position, if it may be passed by one), "default"
        (its default, if a number)}, for the verifier to take from each call's own arguments; None if it is not
        one of the target's parameters (then it travels by value, as before)."""
        grapharg = node.meta.get("grapharg")
        if grapharg is None or not getattr(grapharg, "pass_arg_as_tensor", False) or value.dim() != 0:
            return None
        source = grapharg.source.name  # a method before torch 2.13, a property since
        found = re.fullmatch(r"L\['(\w{1,80})'\]", str(source() if callable(source) else source))
        target = self.target.forward if isinstance(self.target, torch.nn.Module) else self.target
        try:
            parameters = list(inspect.signature(target).parameters.values())
        except (TypeError, ValueError):
            return None
        for position, parameter in enumerate(parameters):
            if found is None or parameter.name != found.group(1):
                continue
            spec = {"kind": "scalar", "name": parameter.name, "dtype": str(value.dtype).removeprefix("torch.")}
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
                spec["index"] = position
            default = parameter.default
            if isinstance(default, (int, float)) and not isinstance(default, bool):
                spec["default"] = default
            return spec
        return None

    def call(self, args, kwargs, mark_dynamic, encode) -> dict:
        from judge.compiler.logs import artifact_log, recompile_log
        for arg_index, dim in mark_dynamic:
            torch._dynamo.mark_dynamic(args[arg_index], dim)
        self.ran, self.outputs, self.current = [], {}, (args, kwargs)
        printed = io.StringIO()
        error, result = None, None
        with recompile_log() as reasons, artifact_log("guards") as guards, artifact_log("recompiles") as raw, \
                contextlib.redirect_stdout(printed):
            stance = torch.compiler.set_stance("default", force_backend=self._backend) if self.force \
                else contextlib.nullcontext()
            ACTIVE[:] = [self]
            try:
                with stance:
                    result = self.compiled(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001
                error = describe(exc)
                if error["kind"] in (ErrorKind.GRAPH_BREAK, ErrorKind.ERROR):  # eagerly, a plain error names the line
                    error = self._eager_also_fails(args, kwargs) or error
            finally:
                ACTIVE.clear()
        new = [{"index": i, "ir": ir.to_ir(gm), "inputs": inputs}
               for i, (gm, inputs) in enumerate(self.graphs) if i >= self.sent]
        self.sent = len(self.graphs)
        answer = {"graphs": new, "ran": list(self.ran), "recompiles": reasons[:20], "error": error,
                  "printed": printed.getvalue()[-20000:],
                  "guards": "\n".join(r.getMessage() for r in guards[:4])[:MAX_GUARD_CHARS]}  # shown, never relied on
        answer["guard_origins"] = self._guard_origins(raw, guards)
        if error is None:
            answer["output"] = self._output_spec(result, args, encode)
            answer["state_out"] = self._state_outputs(args)
        return answer

    def _guard_origins(self, recompiles, guards) -> list[dict]:
        """The learner's line behind each recompile's failing guard (judge/compiler/guard_origin.py); shown, never
        relied on."""
        from judge.compiler import guard_origin
        from judge.compiler.locations import LEARNER_FILES

        for source, where in guard_origin.tensor_lines([r.getMessage() for r in guards], LEARNER_FILES).items():
            self.tensor_lines.setdefault(source, where)
        return guard_origin.origins([r.getMessage() for r in recompiles], self.tensor_lines, LEARNER_FILES)

    def _state_outputs(self, args) -> list[dict]:
        """Module state that is, after the call, one of the graph's outputs: a buffer or parameter the code
        rebound (`self.step = self.step + 1`, set by Dynamo after the graph), so the verifier's copy follows."""
        last = self.outputs.get(self.ran[-1]) if len(self.ran) == 1 else None
        if not isinstance(last, (list, tuple)):
            return []
        owners = [("target", self.target)] + [(k, v) for k, v in self.handles.items() if v is not self.target] + \
            [(f"arg{i}", a) for i, a in enumerate(args)]
        found = []
        for owner, obj in owners:
            if not isinstance(obj, torch.nn.Module):
                continue
            for name, t in list(obj.named_parameters()) + list(obj.named_buffers()):
                index = next((i for i, o in enumerate(last) if o is t), None)
                if index is not None:
                    found.append({"owner": owner, "name": name, "out": index})
        return found[:256]

    def _eager_also_fails(self, args, kwargs):
        """Code that fails eagerly too is a runtime error, not a graph break."""
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                self.target(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            return describe(exc)
        return None

    def _output_spec(self, result, args, encode) -> dict:
        leaves, spec = pytree.tree_flatten(result)
        last = self.outputs.get(self.ran[-1]) if len(self.ran) == 1 else None
        arg_paths = {id(t): list(p) for p, t in _paths(args)}
        described = []
        for leaf in leaves:
            if isinstance(leaf, torch.Tensor) and last is not None and any(leaf is o for o in last):
                described.append({"out": next(i for i, o in enumerate(last) if leaf is o)})
            elif isinstance(leaf, torch.Tensor) and id(leaf) in arg_paths:
                described.append({"arg": arg_paths[id(leaf)]})
            else:
                described.append({"value": encode(leaf)})
        try:
            spec_text = pytree.treespec_dumps(spec)
        except Exception:  # noqa: BLE001 - a result type pytree cannot describe
            spec_text = None
        return {"spec": spec_text, "leaves": described}
