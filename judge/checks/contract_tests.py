"""Hidden tests the verifier adds, after the exercise's own, for an exercise that declares a [contract].

They read the contract from the job (judge.checks.contract.contract()) and compare the graph the runner captured,
run here, with the exercise's starter (or reference) run here. Process-global state (grad mode, default dtype,
deterministic flags, thread counts, compiler config) is asked of the runner after every test (judge.tamper).
"""

from judge.checks import contract as c
from judge.loaded import LOADED


def _run(entry):
    spec = c.contract()
    expected = getattr(LOADED.exercise_module(spec.get("compare_with", "starter")), LOADED.entry_point)
    return spec, c.ContractRun(spec, entry, expected)


def test_contract_dtypes(entry):
    """Every dtype the contract allows: outputs keep that dtype, equal the original, inputs stay unchanged"""
    spec, run = _run(entry)
    plan = c.shape_plans(spec, int(spec.get("seed", 0)))[0]
    for dtype in c.dtypes(spec):
        args = c.fixed_inputs(spec, plan, dtype)
        run.compare(args, case="for " + c.describe_inputs(spec, args))


def test_contract_search(entry):
    """A search (Hypothesis) for inputs the contract allows where the compiled function differs from the original"""
    spec, run = _run(entry)
    stats = c.search(run, spec)
    print(f"contract search: {stats}")
