"""A sealed run: how every graph the runner sent is run in the verifier, so that running it cannot touch the verifier.

A returned graph is data rebuilt from an allowlist, but some allowlisted calls change the process they run in:
`torch._C._set_grad_enabled(False)` (Dynamo records it for a bare call), autocast's enter and exit, and anything
that writes the inputs it is handed. `run_sealed(fn, values, ...)` runs one graph on

- **copies** of its inputs, never the test's own tensors: an in-place change is seen by comparing each copy with
  its original afterwards; it is written back where the caller declared that input mutable (a cache the
  exercise says is updated, a module's state) and fails the check as WRONG_ANSWER, naming the input, anywhere else;
- the verifier's **process state** as it was: grad and inference mode, autocast (enabled, dtype, cache, nesting),
  the default dtype, deterministic-algorithm, anomaly, TF32 and float32-matmul-precision flags, the thread count,
  the torch-function and dispatch mode stacks, the compiler stance and the Dynamo, Inductor and functorch
  configs. What differs after the run is put back, and the check fails as FORBIDDEN with what changed, so no
  later check (the reference's gradients included) runs in a state the graph chose.

`judge.remote.compiled` runs every captured graph through it (`RemoteCompiled.run_graph`, graphs a learner's pass
returns) and so do the checks that run a rebuilt graph themselves (`judge.checks.shapes`, `judge.checks.cudagraphs`).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType

import torch

from judge.checks.failures import Forbidden, WrongAnswer
from judge.reports.i18n import T

# ---------------------------------------------------------------- process state


def _autocast_nesting() -> int:
    depth = torch.autocast_increment_nesting()
    torch.autocast_decrement_nesting()
    return depth - 1


def _restore_nesting(depth: int) -> None:
    while _autocast_nesting() > depth:
        torch.autocast_decrement_nesting()
    while _autocast_nesting() < depth:
        torch.autocast_increment_nesting()


def _set_deterministic(value) -> None:
    torch.use_deterministic_algorithms(value[0], warn_only=value[1])


def _pop_modes(getter, popper):
    def restore(depth: int) -> None:
        while getter() > depth:
            popper()
    return restore


def _stance():
    from torch._dynamo import eval_frame

    return eval_frame._stance


def _set_stance(value) -> None:
    from torch._dynamo import eval_frame

    eval_frame._stance = value


def _autocast_devices() -> tuple[str, ...]:
    return ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",)


def _state_items() -> list[tuple[str, Callable[[], object], Callable[[object], None] | None]]:
    """(name shown to a learner, read, restore) for each piece of process state a graph's run must leave alone."""
    items = [
        ("torch.is_grad_enabled()", torch.is_grad_enabled, torch._C._set_grad_enabled),
        ("torch.is_inference_mode_enabled()", torch.is_inference_mode_enabled, None),
        ("torch.get_default_dtype()", torch.get_default_dtype, torch.set_default_dtype),
        ("torch.are_deterministic_algorithms_enabled()",
         lambda: (torch.are_deterministic_algorithms_enabled(),
                  torch.is_deterministic_algorithms_warn_only_enabled()), _set_deterministic),
        ("torch.get_num_threads()", torch.get_num_threads, torch.set_num_threads),
        ("torch.get_float32_matmul_precision()", torch.get_float32_matmul_precision,
         torch.set_float32_matmul_precision),
        ("torch.is_anomaly_enabled()", lambda: (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
         lambda v: torch.set_anomaly_enabled(*v)),
        ("torch.backends.cuda.matmul.allow_tf32", torch._C._get_cublas_allow_tf32, torch._C._set_cublas_allow_tf32),
        ("torch.backends.cudnn.allow_tf32", torch._C._get_cudnn_allow_tf32, torch._C._set_cudnn_allow_tf32),
        ("torch.is_autocast_cache_enabled()", torch.is_autocast_cache_enabled, torch.set_autocast_cache_enabled),
        ("autocast nesting", _autocast_nesting, _restore_nesting),
        ("torch function modes", torch._C._len_torch_function_stack,
         _pop_modes(torch._C._len_torch_function_stack, torch._C._pop_torch_function_stack)),
        ("torch dispatch modes", torch._C._len_torch_dispatch_stack,
         _pop_modes(torch._C._len_torch_dispatch_stack, torch._C._pop_torch_dispatch_stack)),
        ("torch.compiler.set_stance", _stance, _set_stance),
    ]
    for device in _autocast_devices():
        items.append((f"torch.is_autocast_enabled({device!r})", lambda d=device: torch.is_autocast_enabled(d),
                      lambda v, d=device: torch.set_autocast_enabled(d, v)))
        items.append((f"torch.get_autocast_dtype({device!r})", lambda d=device: torch.get_autocast_dtype(d),
                      lambda v, d=device: torch.set_autocast_dtype(d, v)))
    return items


_ITEMS: list = []


def _configs() -> dict[str, ModuleType]:
    from judge.shared.tamper import config_modules

    return config_modules()


_CONFIG_VARS: dict[str, tuple[list[str], list, list]] = {}  # module -> (keys, entries, their ContextVars)


def _config_vars() -> dict[str, tuple[list[str], list, list]]:
    """Each config module's entries and where torch keeps each user override (fixed once imported): a
    ContextVar from torch 2.13 on, before it the entry's `user_override` attribute itself (then None here)."""
    if not _CONFIG_VARS:
        for name, module in _configs().items():
            entries = getattr(module, "_config", None)
            if isinstance(entries, dict):
                keys = list(entries)
                overrides = [entries[k].user_override for k in keys]
                in_context = all(isinstance(v, contextvars.ContextVar) for v in overrides)
                _CONFIG_VARS[name] = (keys, [entries[k] for k in keys], overrides if in_context else None)
    return _CONFIG_VARS


def _plain_overrides() -> dict[str, list] | None:
    """The overrides torch before 2.13 keeps on the entries themselves (None where all live in ContextVars)."""
    found = {name: [entry.user_override for entry in entries]
             for name, (_, entries, variables) in _config_vars().items() if variables is None}
    return found or None


@dataclass
class ProcessState:
    """What a graph's run must leave as it found it, read at one moment."""

    values: list[object]
    context: contextvars.Context  # torch keeps each config override in a ContextVar: the whole set, copied in O(1)
    plain_overrides: dict[str, list] | None = None  # torch before 2.13: the overrides, read one by one

    @classmethod
    def now(cls) -> ProcessState:
        if not _ITEMS:
            _ITEMS.extend(_state_items())
        return cls([read() for _, read, _ in _ITEMS], contextvars.copy_context(), _plain_overrides())

    def restore_and_diff(self) -> list[str]:
        """Put back everything that differs from this state; what differed, as 'name: before -> after'."""
        changed = []
        for (name, read, restore), before in zip(_ITEMS, self.values):
            after = read()
            if after != before:
                changed.append(f"{name}: {_shown(before)} -> {_shown(after)}")
                if restore is not None:
                    restore(before)
        if contextvars.copy_context() != self.context:  # some ContextVar was set: look at the configs' own
            changed += self._restore_configs()
        if self.plain_overrides is not None:
            changed += self._restore_plain_configs()
        return changed

    def _restore_configs(self) -> list[str]:
        from torch.utils._config_module import _UNSET_SENTINEL

        changed = []
        modules = _configs()
        for module_name, (keys, entries, variables) in _config_vars().items():
            if variables is None:
                continue
            module = modules[module_name]
            for key, entry, variable in zip(keys, entries, variables):
                before, after = self.context.get(variable, _UNSET_SENTINEL), variable.get()
                if not (change := _config_change(f"{module_name}.{key}", entry, before, after)):
                    continue
                changed.append(change)
                variable.set(before)
                module._hash_dirty_var.set(True)
                module._mark_get_dict_dirty(key)
        return changed

    def _restore_plain_configs(self) -> list[str]:
        changed = []
        modules = _configs()
        for module_name, overrides in self.plain_overrides.items():
            module = modules[module_name]
            keys, entries, _ = _config_vars()[module_name]
            for key, entry, before in zip(keys, entries, overrides):
                if not (change := _config_change(f"{module_name}.{key}", entry, before, entry.user_override)):
                    continue
                changed.append(change)
                # through the module, which clears its own caches; an unset override comes back as its default
                setattr(module, key, _value(entry, before))
        return changed


def _config_change(name: str, entry, before, after) -> str | None:
    """'name: before -> after' where a config's effective value changed between two overrides, else None."""
    if after is before or _same_config(entry, before, after):
        return None
    return f"{name}: {_shown(_value(entry, before))} -> {_shown(_value(entry, after))}"


def _value(entry, override):
    return entry.default if _is_unset(override) else override


def _is_unset(value) -> bool:
    from torch.utils._config_module import _UNSET_SENTINEL

    return value is _UNSET_SENTINEL


def _same_config(entry, before, after) -> bool:
    """A read of a mutable default copies it into the override: that is no change."""
    try:
        return bool(_value(entry, before) == _value(entry, after))
    except Exception:  # noqa: BLE001 - a config value without a usable ==
        return False


def _shown(value) -> str:
    if hasattr(value, "stance"):  # the compiler stance object
        return str(value.stance)[:120]
    return repr(value)[:120]


# ---------------------------------------------------------------- inputs


def _copy(value, memo: dict):
    """A copy of one graph input: a tensor of the same values, strides, dtype and device, differentiable back to
    the original where it requires grad (so that gradients still reach the caller's leaf); anything else as is."""
    if not isinstance(value, torch.Tensor):
        return value
    found = memo.get(id(value))
    if found is not None:
        return found
    if value.requires_grad:
        copy = value.clone()
    else:
        with torch.no_grad():
            copy = torch.empty_strided(value.size(), value.stride(), dtype=value.dtype, device=value.device) \
                if _dense(value) else torch.empty_like(value)
            copy.copy_(value)
    memo[id(value)] = copy
    return copy


def _dense(t: torch.Tensor) -> bool:
    """Non-overlapping storage (no expanded dims): its strides can be reproduced exactly."""
    return all(s != 0 or n <= 1 for n, s in zip(t.shape, t.stride()))


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    a, b = a.detach(), b.detach()
    if torch.equal(a, b):
        return True
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return False


def changed_inputs(originals: list, copies: list) -> list[int]:
    """Positions whose copy differs from its original after a run (values, shape or dtype)."""
    return [i for i, (a, b) in enumerate(zip(originals, copies))
            if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a is not b and not _same_bits(a, b)]


# ---------------------------------------------------------------- the run


def run_sealed(fn: Callable, values: list, *, what: T | str, mutable: Iterable[int] = (),
               names: list[str] | None = None, case: T | str | None = None):
    """`fn(*copies of values)`, with the verifier's process state unchanged by it (see the module docstring).

    `mutable`: positions of inputs the graph may update in place (their changes are written back to the
    originals); a change to any other input fails as WRONG_ANSWER. `names` label the inputs in messages.
    A run that changes process state fails as FORBIDDEN with what changed, after the state is put back."""
    memo: dict = {}
    copies = [_copy(v, memo) for v in values]
    before = ProcessState.now()
    try:
        result = fn(*copies)
    except BaseException:
        changed = before.restore_and_diff()
        if changed:
            raise _forbidden(what, changed) from None
        raise
    changed = before.restore_and_diff()
    if changed:
        raise _forbidden(what, changed)
    allowed = set(mutable)
    for i in changed_inputs(values, copies):
        name = names[i] if names and i < len(names) else f"input {i}"
        if i not in allowed:
            where = T(" ({case})", case=case) if case is not None else T.same("")
            raise WrongAnswer(T("{what} changes its input `{name}` in place{where}; the statement does not allow it: "
                                "leave the inputs as they were (compute into a new tensor)",
                                what=what, name=name, where=where))
        original, copy = values[i], copies[i]
        if original.shape != copy.shape:
            raise WrongAnswer(T("{what} changes the shape of its input `{name}` in place", what=what, name=name))
        with torch.no_grad():
            original.copy_(copy)
    return result


def _forbidden(what, changed: list[str]) -> Forbidden:
    shown = "; ".join(changed[:5])
    return Forbidden(T("{what}: running the captured graph changed the judge's process state: `{changes}`. A graph "
                       "must leave grad mode, autocast, the default dtype and the other global settings as it found "
                       "them (use a `with` block that ends inside your function)", what=what, changes=shown))


def sealed_module(gm: torch.fx.GraphModule, *, what: T | str) -> torch.fx.GraphModule:
    """`gm` (a graph rebuilt from the runner's answer, which a test calls itself), made to run sealed whenever it is
    called: its inputs copied, none of them mutable, the process state checked."""
    base = type(gm)

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise WrongAnswer(T("{what} was called with keyword arguments", what=what))
        return run_sealed(lambda *values: base.__call__(self, *values), list(args), what=what)

    gm.__class__ = type(base.__name__, (base,), {"__call__": __call__})
    return gm
