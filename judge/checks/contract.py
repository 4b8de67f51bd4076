"""Checks derived from an exercise's `[contract]` (judge/parent/exercise.py: Contract), written once for every exercise.

`ContractRun(contract, entry, expected_fn)` compiles the entry point in the runner and runs each captured graph
here. A graph is fetched once per input signature (shapes, dtype, requires_grad): examples of a signature
already seen reuse it without a runner round trip, so a search prefers few shapes and many values.

- `check_dtypes`: one call per allowed dtype; every tensor output keeps the inputs' dtype.
- `check_inputs_unchanged`: the graph run here leaves the verifier's inputs as they were.
- `boundary_cases`: the boundary classes of every dtype the contract allows (zeros of both signs, subnormals, the
  smallest normal `torch.finfo(dtype).tiny`, huge magnitudes, the contract's `thresholds` and their neighbours one
  ulp away), the same cases on every grading.
- `search`: property-based differential testing with Hypothesis; inputs drawn from the contract (shapes,
  dtypes, magnitudes incl. zero, tiny, huge, negative and exact ties); a failure is shrunk to a minimal
  counterexample, shown with the seed that finds it again.
"""

from __future__ import annotations

import random
import time

import torch
import torch.utils._pytree as pytree

from judge import remote
from judge.checks.autograd import value_and_grads
from judge.checks.failures import CheckFailure, WrongAnswer
from judge.checks.numerics import assert_same
from judge.reports.i18n import T

MAX_SHOWN_VALUES = 6
# Scales a whole tensor is multiplied by (shrinking goes towards the first): tiny and huge magnitudes.
SCALES = {
    torch.float16: [1.0, 1e-4, 1e-7, 0.5, 3e3, 6e4],
    torch.bfloat16: [1.0, 1e-12, 1e-30, 0.5, 1e12, 1e30],
    torch.float32: [1.0, 1e-12, 1e-30, 1e-6, 1e6, 1e12, 1e30],
    torch.float64: [1.0, 1e-12, 1e-30, 1e-6, 1e6, 1e12, 1e30, 1e-300],
}


def contract() -> dict | None:
    """The contract of the exercise being graded (set by the verifier from the job), or None."""
    return remote.current().contract


class ContractRun:
    """The compiled entry point (graphs captured in the runner, run here) and the expected function."""

    def __init__(self, spec: dict, entry, expected_fn):
        self.spec, self.expected_fn = spec, expected_fn
        dynamic = None if spec.get("dynamic") is None else bool(spec["dynamic"])
        # values only are compared: one compile session for the three contract tests (Ref.compile's `reuse`)
        self.compiled = entry.compile(fullgraph=bool(spec.get("fullgraph", True)), dynamic=dynamic,
                                      what=T("your compiled function"), local_backend=spec.get("local_backend"),
                                      reuse=True)
        self.graph_for: dict = {}  # signature -> (graph index, output spec)
        self.round_trips = 0

    def __call__(self, *args):
        key = tuple((tuple(a.shape), a.dtype, a.requires_grad) for a in args)
        if key not in self.graph_for:
            self.round_trips += 1
            out = self.compiled(*args)
            self.graph_for[key] = (self.compiled.calls[-1].graph, self.compiled.last_output_spec)
            return out
        index, output_spec = self.graph_for[key]
        return self.compiled.run_graph(index, args, {}, output_spec)

    def expected(self, *args):
        return self.expected_fn(*[a.clone() for a in args])

    def compare(self, args, case: T | str) -> None:
        """Outputs (and gradients, when the contract asks) of the compiled graph against the expected ones."""
        rtol, atol = self.spec.get("rtol"), self.spec.get("atol")
        names = [i["name"] for i in self.spec["inputs"]]
        if self.spec.get("grads"):
            out, grads = value_and_grads(self, *args)
            ref_out, ref_grads = value_and_grads(self.expected_fn, *args)
        else:
            before = [a.clone() for a in args]
            ref_out, ref_grads = self.expected(*args), []
            out, grads = self(*args), []
            if self.spec.get("inputs_unchanged", True):
                for name, a, a0 in zip(names, args, before):
                    assert_same(a, a0, case=T("{case}: your function modified its input `{name}`", case=case,
                                              name=name), what=T.same(name), rtol=0, atol=0)
        check_dtype(out, args, case, self.spec)
        assert_same(out, ref_out, case=case, rtol=rtol, atol=atol, what=T("output"))
        for name, grad, ref_grad in zip(names, grads, ref_grads):
            if ref_grad is not None:
                assert_same(grad, ref_grad, case=case, rtol=rtol, atol=atol,
                            what=T("gradient of {name}", name=name))


def check_dtype(out, args, case: T | str, spec: dict) -> None:
    """Every tensor output has the inputs' dtype (contract.keep_dtype)."""
    if not spec.get("keep_dtype", True) or not args:
        return
    floating = [a.dtype for a in args if a.is_floating_point()]
    if not floating:
        return
    dtype = floating[0]
    for i, leaf in enumerate(pytree.tree_leaves(out)):
        if isinstance(leaf, torch.Tensor) and leaf.is_floating_point() and leaf.dtype != dtype:
            got, want = str(leaf.dtype).removeprefix("torch."), str(dtype).removeprefix("torch.")
            raise WrongAnswer(T("{case}: output {i} is {got}, but the inputs are {want}: the contract says every "
                                "output keeps the inputs' dtype (no promotion to {got})", case=case, i=i, got=got,
                                want=want))


# ------------------------------------------------------------------ inputs from the contract


def dtypes(spec: dict) -> list[torch.dtype]:
    return [getattr(torch, name) for name in spec.get("dtypes", ["float32"])]


def shape_plans(spec: dict, seed: int) -> list[dict]:
    """`spec["shapes"]` assignments of the shape symbols: the smallest sizes first, then random ones."""
    rng = random.Random(seed)
    dims = spec.get("dims", {})
    plans = [{k: max(lo, min(hi, 2)) for k, (lo, hi) in dims.items()}]
    for _ in range(64):
        if len(plans) >= spec.get("shapes", 2):
            break
        plan = {k: rng.randint(lo, hi) for k, (lo, hi) in dims.items()}
        if plan not in plans:
            plans.append(plan)
    return plans


def shape_of(input_spec: dict, plan: dict) -> tuple[int, ...]:
    return tuple(plan[d] if isinstance(d, str) else int(d) for d in input_spec["shape"])


def fixed_inputs(spec: dict, plan: dict, dtype: torch.dtype, seed: int = 0) -> list[torch.Tensor]:
    """Ordinary inputs (normal values, clamped to each input's range) of one shape plan."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for item in spec["inputs"]:
        shape = shape_of(item, plan)
        if item.get("dtype"):
            lo, hi = _bounds(item, plan, 0, 1)
            out.append(torch.randint(int(lo), int(hi) + 1, shape, generator=gen).to(getattr(torch, item["dtype"])))
            continue
        t = torch.randn(shape, generator=gen, dtype=torch.float64)
        out.append(_in_range(t, item, plan, dtype))
    return out


def _bounds(item: dict, plan: dict, lo=None, hi=None):
    """(low, high) of an input, symbols replaced by their size in `plan`; `lo`/`hi` where none is given."""
    def value(v, default):
        return default if v is None else (plan[v] if isinstance(v, str) else v)
    return value(item.get("low"), lo), value(item.get("high"), hi)


def _in_range(t: torch.Tensor, item: dict, plan: dict, dtype: torch.dtype) -> torch.Tensor:
    """Clamped to the input's range and to the dtype's finite values, then cast."""
    big = torch.finfo(dtype).max
    lo, hi = _bounds(item, plan, -big, big)
    return t.clamp(min=max(lo, -big), max=min(hi, big)).to(dtype)


def boundary_values(dtype: torch.dtype, thresholds=()) -> list[float]:
    """The values where floating-point code most often goes wrong in `dtype`: zeros of both signs, the smallest
    subnormal and one in the middle of the subnormals, the smallest normal (`finfo.tiny`), huge magnitudes
    (`sqrt(max)`, `max / 16`: a sum of a few of them stays finite, as the contract's inputs are), each with both
    signs; then each threshold and its neighbours one ulp away in `dtype`."""
    info = torch.finfo(dtype)
    found = [0.0, -0.0]
    for v in (info.tiny * info.eps, info.tiny / 2, info.tiny, info.max ** 0.5, info.max / 16):
        found += [v, -v]
    for t in thresholds:
        at = torch.tensor(float(t), dtype=dtype)
        for toward in (float("-inf"), float("inf")):
            found.append(float(torch.nextafter(at, torch.tensor(toward, dtype=dtype))))
        found.append(float(at))
    return [float(torch.tensor(v, dtype=torch.float64).to(dtype)) for v in found]  # each exact in `dtype`


def _filled(item: dict, plan: dict, dtype: torch.dtype, values: list[float], start: int = 0) -> torch.Tensor:
    """An input of the plan's shape whose elements are `values`, cycled from `start`, clamped to the input's range."""
    shape = shape_of(item, plan)
    numel = 1
    for n in shape:
        numel *= n
    flat = [values[(start + i) % len(values)] for i in range(numel)]
    return _in_range(torch.tensor(flat, dtype=torch.float64).reshape(shape), item, plan, dtype)


def boundary_cases(spec: dict, plan: dict, dtype: torch.dtype) -> list[list[torch.Tensor]]:
    """Inputs made of boundary values (`boundary_values`, with the contract's `thresholds`): for each value, every
    floating input filled with it, and (with several floating inputs) each one alone filled with it, the others
    ordinary; then every floating input cycling through all the values. Deterministic: the same on every grading."""
    values = boundary_values(dtype, spec.get("thresholds", ()))
    base = fixed_inputs(spec, plan, dtype)
    floating = [i for i, item in enumerate(spec["inputs"]) if not item.get("dtype")]
    cases = []

    def case(filled: dict[int, torch.Tensor]) -> list[torch.Tensor]:
        return [filled[i] if i in filled else t.clone() for i, t in enumerate(base)]

    for v in values:
        cases.append(case({i: _filled(spec["inputs"][i], plan, dtype, [v]) for i in floating}))
        if len(floating) > 1:
            cases += [case({i: _filled(spec["inputs"][i], plan, dtype, [v])}) for i in floating]
    cases.append(case({i: _filled(spec["inputs"][i], plan, dtype, values, start=n)
                       for n, i in enumerate(floating)}))
    return cases


def tensor_strategy(st, shape, dtype, item: dict, plan: dict):
    """Hypothesis strategy of one tensor: small integers (zeros, exact ties and cancellations), special
    values and plain floats, times a scale drawn for the whole tensor (tiny and huge magnitudes); sometimes
    mirrored along dim 0 (rows a, then -a), so that sums cancel to exactly zero with nonzero terms."""
    numel = 1
    for n in shape:
        numel *= n
    if item.get("dtype"):
        lo, hi = _bounds(item, plan, 0, 1)
        fixed = getattr(torch, item["dtype"])
        return st.lists(st.integers(int(lo), int(hi)), min_size=numel, max_size=numel).map(
            lambda v: torch.tensor(v, dtype=torch.int64).reshape(shape).to(fixed))
    element = st.one_of(st.integers(-3, 3).map(float), st.sampled_from([0.5, -0.5, 1e-3, -2.0, 7.0]),
                        st.floats(-10, 10, allow_nan=False, allow_infinity=False))

    def build(parts):
        values, scale, mirror = parts
        t = torch.tensor(values, dtype=torch.float64).reshape(shape) * scale
        if mirror and t.dim() and t.shape[0] > 1:  # rows [a; 0; -a]: sums over dim 0 cancel exactly
            half = t.shape[0] // 2
            t[t.shape[0] - half:] = -t[:half]
            if t.shape[0] % 2:
                t[half] = 0
        return _in_range(t, item, plan, dtype)

    return st.tuples(st.lists(element, min_size=numel, max_size=numel), st.sampled_from(SCALES[dtype]),
                     st.booleans()).map(build)


def describe_inputs(spec: dict, args) -> T:
    """'s [3] = [1e-12, 0, 0] float32' per input; larger tensors show their nonzero entries."""
    parts = []
    for item, t in zip(spec["inputs"], args):
        name, flat = item["name"], t.detach().double().flatten()
        dtype = str(t.dtype).removeprefix("torch.")
        if flat.numel() <= MAX_SHOWN_VALUES:
            parts.append(T.same(f"{name} {list(t.shape)} = [{', '.join(f'{v:.3g}' for v in flat.tolist())}] {dtype}"))
            continue
        nz = t.detach().double().nonzero().tolist()
        shown = ", ".join(f"{idx}={t[tuple(idx)].item():.3g}" for idx in nz[:MAX_SHOWN_VALUES])
        tensor = T.same(f"{name} {list(t.shape)} {dtype}")
        if not nz:
            parts.append(T("{tensor} all zero", tensor=tensor))
        elif len(nz) > MAX_SHOWN_VALUES:
            parts.append(T("{tensor} nonzero at {shown}, … ({count} nonzero)", tensor=tensor, shown=shown,
                           count=len(nz)))
        else:
            parts.append(T("{tensor} nonzero at {shown}", tensor=tensor, shown=shown))
    return T.join(parts, sep=", ")


def _draw_from_the_contract_alone() -> None:
    """Hypothesis mixes constants found in the source of every non-library module into its draws, parsing each
    newly imported module first (~0.25 s of a grading); the draws would then depend on the judge's own source.
    The search draws from the contract alone, so the same seed finds the same counterexample everywhere."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        return
    if not all(hasattr(providers, name) for name in ("_get_local_constants", "Constants", "SortedSet", "float_to_int")):
        return
    # None at all, not those found so far: what was found depends on what this process imported and ran before
    # (another search's test file, Hypothesis's on-disk cache of them), and so would the search's draws.
    empty = providers.Constants(integers=providers.SortedSet(), floats=providers.SortedSet(key=providers.float_to_int),
                                bytes=providers.SortedSet(), strings=providers.SortedSet())
    providers._get_local_constants = lambda: empty


def search(run: ContractRun, spec: dict) -> dict:
    """Differential search with Hypothesis; returns statistics. A failure is shrunk to a minimal
    counterexample and re-raised with the seed (`spec["seed"]`) and the budget."""
    from hypothesis import HealthCheck, Phase, given, seed as fix_seed, settings, strategies as st

    _draw_from_the_contract_alone()
    seed, budget = int(spec.get("seed", 0)), int(spec.get("examples", 60))
    plans = shape_plans(spec, seed)
    strategies = []
    for dtype in dtypes(spec):
        for plan in plans:
            strategies.append(st.tuples(*[tensor_strategy(st, shape_of(i, plan), dtype, i, plan)
                                          for i in spec["inputs"]]))
    stats = {"seed": seed, "examples": 0, "round_trips": 0, "seconds": 0.0}
    started = time.monotonic()

    @settings(max_examples=budget, database=None, deadline=None, derandomize=False, print_blob=False,
              report_multiple_bugs=False, suppress_health_check=list(HealthCheck),
              phases=[Phase.explicit, Phase.generate, Phase.shrink])
    @fix_seed(seed)
    @given(st.one_of(*strategies))
    def holds(args):
        stats["examples"] += 1
        args = list(args)
        run.compare(args, case=T("fails for {inputs}", inputs=describe_inputs(spec, args)))

    try:
        holds()
    except CheckFailure as exc:
        found = type(exc)(T("{message} [counterexample found by search, seed {seed}, budget {budget}]",
                            message=exc.message, seed=seed, budget=budget),
                          exc.diagnostics, verdict=exc.verdict)
        if isinstance(exc, WrongAnswer) and isinstance(found, WrongAnswer):  # what it compared: the counterexample's
            found.compared = exc.compared  # stages (judge/remote/stages.py)
        raise found from None
    finally:
        stats["round_trips"], stats["seconds"] = run.round_trips, time.monotonic() - started
    return stats
