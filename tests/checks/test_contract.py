"""The [contract] checks: the declaration is validated where it is parsed, and the search finds and shrinks
counterexamples. The compiled side is a local function here (no runner): what is under test is the search."""

import pytest
import torch
from pydantic import ValidationError

from judge.checks import WrongAnswer
from judge.checks import contract as c
from judge.exercise import Contract

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
    from judge import tamper

    snapshot = tamper.Snapshot()
    assert snapshot.changes() == []
    change()
    try:
        assert any(line.startswith(shown) for line in snapshot.changes())
    finally:
        restore()
    assert snapshot.changes() == []
