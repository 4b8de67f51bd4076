"""Detect a submission that changes global compiler state or replaces the functions the judge relies on.

Watched: compiler configs and stance, process-wide state, a few torch functions, and every function and class of
the judge's modules, the hidden tests and the exercise's public module, together with each method (plain, static,
class, property) of those classes, e.g. `judge.runner_side.compiling.Session.call` or
`judge.runner_side.runner.Runner.op_compile`, and the methods of the live objects handed to `Snapshot(watch=...)`
(a method set on the running `Runner` itself). In the runner all this can only explain a failure: the learner's
process may patch this module too.
"""

from __future__ import annotations

import types

import torch

from judge.reports.i18n import T

_GUARDED_FUNCTIONS = [
    (torch, "compile"), (torch, "allclose"), (torch, "isclose"), (torch, "equal"), (torch.testing, "assert_close"),
    (torch._dynamo, "reset"), (torch._dynamo, "explain"), (torch.Tensor, "__eq__"), (torch.Tensor, "item"),
    (torch.compiler, "disable"), (torch.compiler, "set_stance"),
]


def config_modules() -> dict:
    """The compiler's config modules by name, the one list both the runner's snapshot and the verifier's sealed runs
    watch (judge/checks/sealed.py)."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    import torch.compiler.config as compiler_config  # dynamic_sources, unbacked_sources: shapes of every later compile
    import torch.fx.experimental._config as symbolic_shapes_config  # backed_size_oblivious and the other shape knobs

    return {"torch._dynamo.config": torch._dynamo.config, "torch._inductor.config": inductor_config,
            "torch._functorch.config": functorch_config, "torch.fx.experimental._config": symbolic_shapes_config,
            "torch.compiler.config": compiler_config}


class Snapshot:
    """Compiler config values and the identity of key functions, taken before the learner's code runs."""

    def __init__(self, watch: dict | None = None):
        """`watch`: {name: object} live objects whose own attributes must not come to shadow their class's
        methods (e.g. {"judge.runner_side.runner.Runner": the runner})."""
        self.watched = dict(watch or {})
        self.shadowing = {name: _shadowing(obj) for name, obj in self.watched.items()}
        self.configs = {name: _plain_config(mod) for name, mod in config_modules().items()}
        self.functions = {(owner.__name__, attr): getattr(owner, attr) for owner, attr in _GUARDED_FUNCTIONS}
        self.stance = _stance()
        self.judge = _judge_functions()
        self.process = process_globals()

    def changes(self) -> list[str]:
        """What differs now, as 'torch._dynamo.config.x: False -> True' lines; empty when nothing did."""
        return [str(change) for change in self.changed()]

    def changed(self) -> list[T]:
        """What differs now, for a learner in both languages (see `changes`)."""
        found = []
        if _stance() != self.stance:
            found.append(_change("torch.compiler.set_stance", self.stance, _stance(), quote=False))
        now_process = process_globals()
        for key, before in self.process.items():
            if now_process.get(key) != before:
                found.append(T("{change} (process-wide state; restore it, e.g. with a `with` block)",
                               change=_change(key, before, now_process.get(key))))
        for name, mod in config_modules().items():
            now = _plain_config(mod)
            for key, before in self.configs[name].items():
                if now.get(key, before) != before:
                    found.append(_change(f"{name}.{key}", before, now.get(key)))
        for (owner_name, attr), fn in self.functions.items():
            owner = next(o for o, a in _GUARDED_FUNCTIONS if o.__name__ == owner_name and a == attr)
            if getattr(owner, attr) is not fn:
                found.append(T("`{name}` was replaced", name=owner_name + "." + attr))
        now = _judge_functions()
        for name, fn in self.judge.items():
            if now.get(name) is not fn:
                found.append(T("`{name}` was replaced", name=name))
        for owner, obj in self.watched.items():
            for attr, value in sorted(_shadowing(obj).items()):
                if self.shadowing[owner].get(attr) is not value:
                    found.append(T("`{name}` was replaced", name=f"{owner}.{attr}"))
        return found


def _change(name: str, before, after, quote: bool = True) -> T:
    """'name: before -> after', the same in every language."""
    shown = (lambda v: repr(v)) if quote else str
    return T.same(f"{name}: {shown(before)} -> {shown(after)}")


_METHOD_KINDS = (types.FunctionType, staticmethod, classmethod, property)


PUBLIC_MODULE = "exercise_public"
"""The name the runner loads an exercise's public.py under (judge/runner_side/runner.py): its functions are the
judge's too (a file that replaces aot-compile-artifact's `build_and_serve` reports what it likes)."""


def _judge_functions() -> dict:
    """Every function and class defined in the judge's modules and the hidden tests, and every method of those
    classes (as stored in the class: a function, staticmethod, classmethod or property), by qualified name."""
    import sys

    found = {}
    for module_name, module in list(sys.modules.items()):
        hidden_test = "/hidden/" in (getattr(module, "__file__", None) or "") or module_name == PUBLIC_MODULE
        if module is None or not (module_name == "judge" or module_name.startswith("judge.") or hidden_test):
            continue
        for attr, value in list(vars(module).items()):
            if callable(value) and (hidden_test or getattr(value, "__module__", None) == module_name):
                found[f"{module_name}.{attr}"] = value
                if isinstance(value, type) and value.__module__ == module_name:
                    found.update(_methods(value, f"{module_name}.{value.__qualname__}"))
    return found


def _methods(cls: type, prefix: str) -> dict:
    """`prefix.name` -> the method object stored in `cls` itself (inherited ones are their own class's)."""
    return {f"{prefix}.{name}": value for name, value in list(vars(cls).items()) if isinstance(value, _METHOD_KINDS)}


def _shadowing(obj) -> dict:
    """Attributes of `obj` itself that hide a method of its class (a patched `runner.op_call = ...`)."""
    own = getattr(obj, "__dict__", {})
    return {name: value for name, value in list(own.items())
            if callable(value) and isinstance(getattr(type(obj), name, None), _METHOD_KINDS)}


def process_globals() -> dict:
    """Process-wide state a solution must leave as it found it: grad mode, default dtype, determinism, threads."""
    values = {
        "torch.is_grad_enabled()": torch.is_grad_enabled(),
        "torch.is_inference_mode_enabled()": torch.is_inference_mode_enabled(),
        "torch.get_default_dtype()": str(torch.get_default_dtype()),
        "torch.are_deterministic_algorithms_enabled()": torch.are_deterministic_algorithms_enabled(),
        "torch.is_deterministic_algorithms_warn_only_enabled()":
            torch.is_deterministic_algorithms_warn_only_enabled(),
        "torch.get_num_threads()": torch.get_num_threads(),
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision(),
        "torch.is_anomaly_enabled()": torch.is_anomaly_enabled(),
        "torch.set_flush_denormal": _flushes_denormals(),
    }
    return values


def _flushes_denormals() -> bool:
    """Whether this thread flushes denormal floats to zero (torch.set_flush_denormal(True)); torch has no getter."""
    return bool((torch.tensor([1e-40], dtype=torch.float32) * 1.0).item() == 0.0)


def _stance() -> str:
    """The current torch.compiler stance (e.g. 'force_eager' would make every compile a no-op)."""
    from torch._dynamo import eval_frame

    current = eval_frame._stance
    return f"{current.stance}" + (f" (backend={current.backend})" if current.backend else "")


def _plain_config(mod) -> dict:
    values = {}
    for key, value in mod.get_config_copy().items():
        if isinstance(value, (bool, int, float, str, type(None))):
            values[key] = value
        elif isinstance(value, (set, frozenset)):
            values[key] = repr(sorted(map(repr, value)))  # a set's repr order is not stable across copies
        elif isinstance(value, (list, tuple, dict)):
            values[key] = repr(value)
    return values


def disabled_reason(fn) -> T | None:
    """Why `fn` would not be compiled (torch.compiler.disable, allow_in_graph), or None.

    For a class (an nn.Module the learner defines), its `forward` is looked at too.
    """
    forward = getattr(fn, "forward", None)
    if isinstance(fn, type) and callable(forward):
        reason = disabled_reason(forward)
        return T("its forward: {reason}", reason=reason) if reason else None
    inner = getattr(fn, "__wrapped__", None)
    if getattr(fn, "_torchdynamo_disable", False) or (
            inner is not None and getattr(inner, "_torchdynamo_disable", False)):
        return T("it is wrapped in `torch.compiler.disable`, so torch.compile would never trace it")
    try:
        from torch._dynamo import trace_rules

        if trace_rules.is_callable_allowed(fn):
            return T("it is marked with `allow_in_graph`, so torch.compile would not trace into it")
    except Exception:  # noqa: BLE001 - the rule lookup is best effort across torch versions
        pass
    return None
