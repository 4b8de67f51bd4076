"""The [contract] checks: the declaration is validated where it is parsed, and the search finds and shrinks
counterexamples. The compiled side is a local function here (no runner): what is under test is the search."""

import pytest
import torch
from pydantic import ValidationError

from judge.checks import WrongAnswer, contract as c
from judge.parent.exercise import Contract

STEP = {"inputs": [{"name": "x", "shape": ["N", "K"]}, {"name": "w", "shape": ["K", "M"]}],
        "dims": {"N": [1, 4], "K": [1, 4], "M": [1, 3]}, "dtypes": ["float32", "float64"], "atol": 0.0,
        "examples": 60, "shapes": 2, "seed": 0}


def original(x, w):
    h = x @ w
    return torch.relu(torch.where(h.sum() > 0, h * 2, h))


class LocalRun(c.ContractRun):
    """A ContractRun whose 'captured graph' is a local function: counts signatures as round trips would."""

    def __init__(self, spec, fn, expected_fn=original):
        self.spec, self.expected_fn, self.fn = spec, expected_fn, fn
        self.graph_for, self.round_trips = {}, 0

    def __call__(self, *args):
        key = tuple((tuple(a.shape), a.dtype, a.requires_grad) for a in args)
        if key not in self.graph_for:
            self.graph_for[key], self.round_trips = True, self.round_trips + 1
        return self.fn(*args)


def spec(**changes):
    return Contract(**{**STEP, **changes}).model_dump(mode="json")


@pytest.mark.parametrize("changes, message", [
    ({"dims": {"N": [1, 4], "K": [1, 4]}}, "symbol 'M' is not in contract.dims"),
    ({"dtypes": ["float8"]}, "unknown dtype 'float8'"),
    ({"dims": {"N": [4, 1], "K": [1, 4], "M": [1, 3]}}, "need 0 <= smallest <= largest"),
    ({"inputs": [{"name": "x", "shape": ["N"], "dtype": "float32"}]}, "use int64, int32 or bool"),
    ({"examples": 0}, "greater than or equal to 1"),
])
def test_malformed_contract_is_refused(changes, message):
    with pytest.raises(ValidationError, match=message):
        Contract(**{**STEP, **changes})


def test_correct_function_passes_with_few_round_trips():
    run = LocalRun(spec(), original)
    stats = c.search(run, spec())
    assert stats["examples"] >= 60 and run.round_trips <= 2 * 2  # shapes x dtypes


@pytest.mark.parametrize("wrong, found", [
    (lambda x, w: torch.relu(torch.where((x @ w).sum() > 1e-6, (x @ w) * 2, x @ w)), "output differs"),
    (lambda x, w: torch.relu(torch.where((x @ w).sum() >= 0, (x @ w) * 2, x @ w)), "output differs"),
    (lambda x, w: original(x, w).float(), "output 0 is float32, but the inputs are float64"),
    (lambda x, w: original(x.relu_(), w), "modified its input `x`"),
], ids=["eps_threshold", "ge_zero", "float32_result", "in_place"])
def test_wrong_functions_get_a_shrunk_counterexample_with_the_seed(wrong, found):
    with pytest.raises(WrongAnswer, match=found) as info:
        c.search(LocalRun(spec(), wrong), spec())
    message = str(info.value.message)
    assert "fails for x [" in message and "seed 0, budget 60" in message


def test_integer_input_bounded_by_a_symbol():
    ragged = spec(inputs=[{"name": "x", "shape": ["B", "T"]},
                          {"name": "lengths", "shape": ["B"], "dtype": "int64", "low": 0, "high": "T"}],
                  dims={"B": [1, 3], "T": [1, 5]}, dtypes=["float32"])
    seen = []

    def record(x, lengths):
        assert lengths.dtype == torch.int64 and 0 <= int(lengths.min()) and int(lengths.max()) <= x.shape[1]
        seen.append(lengths.clone())
        return x.sum(1)

    c.search(LocalRun(ragged, record, expected_fn=lambda x, lengths: x.sum(1)), ragged)
    assert seen


@pytest.mark.parametrize("change, restore, shown", [
    (lambda: torch.set_grad_enabled(False), lambda: torch.set_grad_enabled(True), "torch.is_grad_enabled()"),
    (lambda: torch.set_default_dtype(torch.float64), lambda: torch.set_default_dtype(torch.float32),
     "torch.get_default_dtype()"),
    (lambda: torch.use_deterministic_algorithms(True), lambda: torch.use_deterministic_algorithms(False),
     "torch.are_deterministic_algorithms_enabled()"),
    (lambda: torch.set_float32_matmul_precision("medium"), lambda: torch.set_float32_matmul_precision("highest"),
     "torch.get_float32_matmul_precision()"),
], ids=["grad_mode", "default_dtype", "deterministic", "matmul_precision"])
def test_process_wide_state_left_changed_is_reported(change, restore, shown):
    from judge.shared import tamper

    snapshot = tamper.Snapshot()
    assert snapshot.changes() == []
    change()
    try:
        assert any(line.startswith(shown) for line in snapshot.changes())
    finally:
        restore()
    assert snapshot.changes() == []


def boundaries(run, contract):
    """What test_contract_boundaries does, on a local run: every boundary case of every dtype."""
    plan = c.shape_plans(contract, contract["seed"])[0]
    for dtype in c.dtypes(contract):
        for args in c.boundary_cases(contract, plan, dtype):
            run.compare(args, case="boundary")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_boundary_values_reach_every_class_of_the_dtype(dtype):
    info = torch.finfo(dtype)
    values = c.boundary_values(dtype, thresholds=[1e-3])
    as_dtype = torch.tensor(values, dtype=torch.float64).to(dtype)
    assert torch.equal(as_dtype.double(), torch.tensor(values, dtype=torch.float64))  # each one exact in dtype
    signs = {(v, str(v).startswith("-")) for v in values if v == 0}
    assert signs == {(0.0, False), (0.0, True)}  # +0 and -0
    subnormal = [v for v in values if 0 < abs(v) < info.tiny]
    assert info.tiny * info.eps in subnormal and info.tiny in values and info.max / 16 in values
    above = float(torch.nextafter(torch.tensor(1e-3, dtype=dtype), torch.tensor(1.0, dtype=dtype)))
    assert above in values and float(torch.tensor(1e-3, dtype=dtype)) in values


def test_boundary_cases_are_the_same_every_time():
    contract = spec(dtypes=["float32", "bfloat16"])
    plan = c.shape_plans(contract, 0)[0]
    first, again = c.boundary_cases(contract, plan, torch.bfloat16), c.boundary_cases(contract, plan, torch.bfloat16)
    assert len(first) == len(again) > 14 and all(torch.equal(a, b) for x, y in zip(first, again) for a, b in zip(x, y))
    assert all(a.dtype == torch.bfloat16 for case in first for a in case)


def test_a_threshold_at_the_smallest_normal_is_found_at_the_boundaries_and_not_by_the_search():
    def tiny_threshold(x, w):
        h = x @ w
        return torch.relu(torch.where(h.sum() > torch.finfo(h.dtype).tiny, h * 2, h))

    contract = spec()
    c.search(LocalRun(contract, tiny_threshold), contract)  # the random search does not reach a subnormal sum
    with pytest.raises(WrongAnswer, match="output differs"):
        boundaries(LocalRun(contract, tiny_threshold), contract)
    boundaries(LocalRun(contract, original), contract)  # and the original agrees with itself on every case


def test_a_float32_promotion_is_found_in_half_precision_at_the_boundaries():
    contract = spec(dtypes=["float32", "bfloat16", "float16"])
    with pytest.raises(WrongAnswer, match="output 0 is float32, but the inputs are bfloat16"):
        boundaries(LocalRun(contract, lambda x, w: original(x.float(), w.float())), contract)


def test_thresholds_are_declared_as_numbers():
    assert Contract(**{**STEP, "thresholds": [0.5, 1e-3]}).thresholds == [0.5, 1e-3]
    with pytest.raises(ValidationError):
        Contract(**{**STEP, "thresholds": ["eps"]})
