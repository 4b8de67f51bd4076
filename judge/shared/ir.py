"""Graphs as data: the runner serializes what Dynamo captured; the verifier rebuilds it from an allowlist.

`to_ir(gm)` (runner side) turns an FX GraphModule into JSON: nodes with their op, target name, arguments
(`judge.shared.wire` values and references to earlier nodes), a summary of each value's shape and the user line
that produced it; tensor constants and subgraphs (torch.cond branches, split pieces) travel inside it.

`from_ir(ir)` (verifier side) rebuilds a GraphModule, resolving every call target through `ALLOWED`:
ATen/prims operators and the exercise's own operator namespaces, a fixed set of higher-order operators,
torch's tensor functions (those `torch.overrides` lists, plus factories), `operator`, `math` and the
symbolic-shape helpers. Methods must be Tensor methods. Anything else (a builtin such as `eval`, a learner
function, an `os` call) raises `IRError`, and so do too many nodes, too deep nesting and bad names.
"""

from __future__ import annotations

import importlib
import keyword
import math
import operator
import re
import types

import torch
import torch.fx

from judge.reports.i18n import T, in_code
from judge.shared import wire

IR_VERSION = 1
MAX_NODES = 5000
MAX_SUBGRAPH_DEPTH = 4
MAX_SUBGRAPHS = 256
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,79}$")
OPS = ("placeholder", "call_function", "call_method", "call_module", "get_attr", "output")


def _shown(name) -> str:
    """A name from an untrusted graph, to go inside a `code` span of a message."""
    return in_code(name, 120)


class IRError(ValueError):
    """A graph from the runner is malformed or calls something outside the allowlist."""


class NotAllowed(IRError):
    """A well-formed graph calls something outside the allowlist (a learner function, a builtin, I/O).

    `called` is the name of what it calls, e.g. 'torch.ops.mylib.rmsnorm.default' (for a check's message);
    `text` is the message for a learner, in both languages."""

    def __init__(self, message: T, called: str = ""):
        super().__init__(str(message))
        self.called = called
        self.text = message if isinstance(message, T) else T("`{message}`", message=in_code(message))


# ---------------------------------------------------------------- names of call targets


def target_name(target) -> str:
    """The name a call target travels under, e.g. 'torch.ops.aten.mul.Tensor', 'operator.mul', 'torch.relu'."""
    if isinstance(target, torch._ops.OpOverload):
        return f"torch.ops.{target.namespace}.{target._opname}.{target._overloadname}"
    if isinstance(target, torch._ops.OpOverloadPacket):
        return f"torch.ops.{target._qualified_op_name.replace('::', '.')}"
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"torch.ops.higher_order.{target.__name__}"
    return torch.fx.node._get_qualified_name(target)


# ---------------------------------------------------------------- runner side


def _value_summary(value):
    if isinstance(value, torch.Tensor):
        return {"shape": [d if isinstance(d, int) else str(d) for d in value.shape],
                "dtype": str(value.dtype).removeprefix("torch.")}
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return {"sym": str(value)}
    if isinstance(value, (list, tuple)):
        return {"items": [_value_summary(v) for v in value[:64]]}
    if isinstance(value, (int, float, bool)):
        return {"const": value}
    return None


def to_ir(gm: torch.fx.GraphModule, *, sources: dict[str, str] | None = None, _depth: int = 0) -> dict:
    """The JSON form of `gm` (runner side). `sources` maps placeholder names to what they stand for."""
    if _depth > MAX_SUBGRAPH_DEPTH:
        raise IRError("subgraphs nested too deeply")
    nodes, attrs, subgraphs = [], {}, {}
    names = {}
    for node in gm.graph.nodes:
        names[node] = node.name

    def node_name(v):
        return names.get(v) if isinstance(v, torch.fx.Node) else None

    for node in gm.graph.nodes:
        meta = {}
        value = node.meta.get("example_value", node.meta.get("val"))
        summary = _value_summary(value)
        if summary is not None:
            meta["value"] = summary
        if node.meta.get("stack_trace"):
            from judge.compiler.locations import to_display_names

            meta["stack"] = to_display_names(str(node.meta["stack_trace"]))[-2000:]
        if node.op == "placeholder":
            source = (sources or {}).get(node.name)
            if source is None and node.meta.get("grapharg") is not None:
                name = node.meta["grapharg"].source.name  # a method before torch 2.13, a property since
                source = name() if callable(name) else name
            if source:
                meta["source"] = source
        if node.op in ("call_function",):
            target = target_name(node.target)
        else:
            target = str(node.target)
        if node.op == "get_attr":
            obj = _get_attr(gm, node.target)
            if isinstance(obj, torch.fx.GraphModule):
                subgraphs[node.target] = to_ir(obj, _depth=_depth + 1)
            elif isinstance(obj, torch.Tensor):
                attrs[node.target] = wire.encode_tensor(obj)
            else:
                raise IRError(f"get_attr {node.target} is a {type(obj).__name__}, not a tensor or a graph")
        if node.op == "call_module":
            sub = gm.get_submodule(node.target)
            if not isinstance(sub, torch.fx.GraphModule):
                raise IRError(f"call_module {node.target} is a {type(sub).__name__}, not a graph")
            subgraphs[node.target] = to_ir(sub, _depth=_depth + 1)
        nodes.append({"name": node.name, "op": node.op, "target": target,
                      "args": wire.encode(node.args, node_name=node_name),
                      "kwargs": wire.encode(dict(node.kwargs), node_name=node_name), "meta": meta})
    return {"version": IR_VERSION, "nodes": nodes, "attrs": attrs, "subgraphs": subgraphs}


def _get_attr(gm, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


# ---------------------------------------------------------------- the allowlist

HIGHER_ORDER = ("cond", "while_loop", "wrap", "invoke_subgraph", "scan", "map_impl")
DENIED_ATEN = {"from_file", "_print", "save", "load"}
FACTORIES = ("arange", "zeros", "ones", "full", "empty", "empty_strided", "tensor", "as_tensor", "scalar_tensor",
             "eye", "linspace", "logspace", "rand", "randn", "randint", "randperm", "finfo", "iinfo")
SYMBOLIC = ("sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sum", "_sym_sqrt", "_check",
            "_check_is_size", "sym_sqrt")
DENIED_OPERATOR = {"attrgetter", "itemgetter", "methodcaller", "call"}
DENIED_METHODS = {"numpy", "storage", "untyped_storage", "set_", "share_memory_", "apply_", "map_", "map2_",
                  "register_hook", "register_post_accumulate_grad_hook", "backward", "record_stream",
                  "pin_memory", "tolist_", "data_ptr", "cuda", "to_dense", "resize_", "resize_as_"}


def _build_allowed() -> dict[str, object]:
    allowed: dict[str, object] = {}

    def add(obj):
        try:
            allowed[target_name(obj)] = obj
        except Exception:  # noqa: BLE001 - a callable FX cannot name is simply not allowed
            pass

    overridable = torch.overrides.get_overridable_functions()
    for namespace, functions in overridable.items():
        if namespace is torch.Tensor:
            continue
        for fn in functions:
            add(fn)
    for name in dir(torch._C._nn):
        if not name.startswith("__") and callable(getattr(torch._C._nn, name)):
            add(getattr(torch._C._nn, name))
    for name in FACTORIES + SYMBOLIC:
        if hasattr(torch, name):
            add(getattr(torch, name))
    add(torch._C._set_grad_enabled)
    refs = importlib.import_module("torch._refs")

    for name in list(getattr(refs, "__all__", [])) + ["tensor"]:  # reference forms Dynamo sometimes records
        fn = getattr(refs, name, None)
        if callable(fn) and not isinstance(fn, type):
            add(fn)
    from torch.amp import autocast_mode

    for name in ("_enter_autocast", "_exit_autocast"):
        if hasattr(autocast_mode, name):
            add(getattr(autocast_mode, name))
    for name, fn in vars(operator).items():
        if not name.startswith("_") and callable(fn) and name not in DENIED_OPERATOR and not isinstance(fn, type):
            add(fn)
    for name, fn in vars(math).items():
        if not name.startswith("_") and isinstance(fn, types.BuiltinFunctionType):
            add(fn)
    return allowed


_ALLOWED: dict[str, object] = {}


def allowed_functions() -> dict[str, object]:
    if not _ALLOWED:
        _ALLOWED.update(_build_allowed())
    return _ALLOWED


def _tensor_methods() -> set[str]:
    names = {getattr(fn, "__name__", "") for fn in torch.overrides.get_overridable_functions()[torch.Tensor]}
    names |= {"size", "dim", "stride", "numel", "contiguous", "item", "tolist", "type_as", "float", "double",
              "half", "bfloat16", "int", "long", "bool", "new_zeros", "new_ones", "new_empty", "new_full"}
    return {n for n in names if n and not n.startswith("_") and n not in DENIED_METHODS}


TENSOR_METHODS: set[str] = set()


def resolve(name: str, op_namespaces: tuple[str, ...] = ()) -> object:
    """The callable a target name stands for, if the allowlist has it; else IRError."""
    if name.startswith("torch.ops."):
        parts = name.split(".")
        if parts[2] == "higher_order" and len(parts) == 4 and parts[3] in HIGHER_ORDER:
            return getattr(torch.ops.higher_order, parts[3])
        if len(parts) in (4, 5) and (parts[2] in ("aten", "prims") or parts[2] in op_namespaces) \
                and all(NAME.match(p) for p in parts[2:]) and parts[3] not in DENIED_ATEN:
            try:
                packet = getattr(getattr(torch.ops, parts[2]), parts[3])
                return getattr(packet, parts[4]) if len(parts) == 5 else packet
            except (AttributeError, RuntimeError):
                raise IRError(f"the graph calls {name}, which does not exist here") from None
        raise NotAllowed(T("the graph calls `{name}`: operators of that namespace are not allowed in this exercise",
                           name=_shown(name)), name)
    fn = allowed_functions().get(name)
    if fn is None:
        raise NotAllowed(T("the graph calls `{name}`, which is not a tensor operation the judge allows",
                           name=_shown(name)), name)
    return fn


# ---------------------------------------------------------------- verifier side


def from_ir(ir, *, op_namespaces: tuple[str, ...] = (), _depth: int = 0, _count=None) -> torch.fx.GraphModule:
    """Rebuild a GraphModule from untrusted JSON (verifier side); IRError for anything outside the rules."""
    if not TENSOR_METHODS:
        TENSOR_METHODS.update(_tensor_methods())
    count = _count if _count is not None else [0]
    if _depth > MAX_SUBGRAPH_DEPTH:
        raise IRError("subgraphs nested too deeply")
    if not isinstance(ir, dict) or ir.get("version") != IR_VERSION:
        raise IRError(f"a graph must be an object with version {IR_VERSION}")
    if set(ir) - {"version", "nodes", "attrs", "subgraphs"}:
        raise IRError(f"unknown graph fields: {sorted(set(ir) - {'version', 'nodes', 'attrs', 'subgraphs'})}")
    nodes, attrs, subgraphs = ir.get("nodes"), ir.get("attrs", {}), ir.get("subgraphs", {})
    if not isinstance(nodes, list) or not isinstance(attrs, dict) or not isinstance(subgraphs, dict):
        raise IRError("nodes must be a list; attrs and subgraphs objects")
    count[0] += len(nodes) + len(subgraphs)
    if count[0] > MAX_NODES or len(subgraphs) > MAX_SUBGRAPHS:
        raise IRError(f"the graph has more than {MAX_NODES} nodes")
    root = torch.nn.Module()
    for name, body in attrs.items():
        _check_name(name)
        try:
            root.register_buffer(name, wire.decode_tensor(body))
        except wire.WireError as exc:
            raise IRError(f"constant {name}: {exc}") from None
    for name, body in subgraphs.items():
        _check_name(name)
        root.add_module(name, from_ir(body, op_namespaces=op_namespaces, _depth=_depth + 1, _count=count))
    graph = torch.fx.Graph()
    env: dict[str, torch.fx.Node] = {}
    seen_output = False

    def ref(name):
        if name not in env:
            raise IRError(f"node refers to {name!r} before it is defined")
        return env[name]

    for spec in nodes:
        if not isinstance(spec, dict) or not {"name", "op", "target", "args", "kwargs"} <= set(spec):
            raise IRError("every node needs name, op, target, args and kwargs")
        name, op, target = spec["name"], spec["op"], spec["target"]
        _check_name(name)
        if name in env:
            raise IRError(f"two nodes are named {name}")
        if op not in OPS or not isinstance(target, str):
            raise IRError(f"node {name}: unknown op {op!r}")
        if seen_output:
            raise IRError("nodes after the output node")
        try:
            args = wire.decode(spec["args"], node=ref)
            kwargs = wire.decode(spec["kwargs"], node=ref)
        except wire.WireError as exc:
            raise IRError(f"node {name}: {exc}") from None
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise IRError(f"node {name}: args must be a tuple and kwargs a dict")
        if op == "call_function":
            resolved = resolve(target, op_namespaces)
        elif op == "call_method":
            if target not in TENSOR_METHODS:
                raise NotAllowed(T("node `{node}` calls the method `{method}`, which is not a Tensor method the "
                                   "judge allows", node=_shown(name), method=_shown(repr(target))))
            if not args or not isinstance(args[0], torch.fx.Node):
                raise IRError(f"node {name}: a method must be called on a graph value")
            resolved = target
        elif op in ("call_module",):
            _check_name(target)
            if target not in subgraphs:
                raise IRError(f"node {name} calls module {target}, which the graph does not carry")
            resolved = target
        elif op == "get_attr":
            _check_name(target)
            if target not in attrs and target not in subgraphs:
                raise IRError(f"node {name} reads {target}, which the graph does not carry")
            resolved = target
        elif op == "placeholder":
            _check_name(target)
            resolved = target
        else:
            resolved, seen_output = "output", True
        node = graph.create_node(op, resolved, args, kwargs, name=name)
        if node.name != name:
            raise IRError(f"node name {name!r} is reserved; rename it")
        node.meta["ir"] = spec.get("meta", {}) if isinstance(spec.get("meta"), dict) else {}
        env[name] = node
    if not seen_output:
        raise IRError("the graph has no output node")
    try:
        graph.lint()
        return torch.fx.GraphModule(root, graph)
    except Exception as exc:  # noqa: BLE001 - anything FX rejects is a malformed graph
        raise IRError(f"the graph is not well formed: {type(exc).__name__}: {str(exc)[:300]}") from None


def _check_name(name) -> None:
    if not isinstance(name, str) or not NAME.match(name) or keyword.iskeyword(name) or name.startswith("__"):
        raise IRError(f"{str(name)[:40]!r} is not an allowed name in a graph")


def placeholders(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    return [n for n in gm.graph.nodes if n.op == "placeholder"]
