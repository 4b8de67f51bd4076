"""Hidden tests the verifier adds, after the exercise's own, for an exercise that declares a [contract].

They read the contract from the job (judge.checks.contract.contract()) and compare the graph the runner captured,
run here, with the exercise's starter (or reference) run here. Process-global state (grad mode, default dtype,
deterministic flags, thread counts, compiler config) is asked of the runner after every test (judge.shared.tamper).
"""

from judge.checks import contract as c
from judge.remote import grading
from judge.reports.i18n import T


def _run(entry):
    spec, exercise = c.contract(), grading().exercise
    expected = getattr(exercise.exercise_module(spec.get("compare_with", "starter")), exercise.entry_point)
    return spec, c.ContractRun(spec, entry, expected)


def test_contract_dtypes(entry):
    """Every dtype the contract allows: outputs keep that dtype, equal the original, inputs stay unchanged
    zh: 契约允许的每种 dtype：输出保持该 dtype、与原函数相等，且输入保持不变
    """
    spec, run = _run(entry)
    plan = c.shape_plans(spec, int(spec.get("seed", 0)))[0]
    for dtype in c.dtypes(spec):
        args = c.fixed_inputs(spec, plan, dtype)
        run.compare(args, case=T("for {inputs}", inputs=c.describe_inputs(spec, args)))


def test_contract_search(entry, record_property):
    """A search (Hypothesis) for inputs the contract allows where the compiled function differs from the original
    zh: 用 Hypothesis 在契约允许的输入中搜索，寻找编译后的函数与原函数结果不同的情况
    """
    spec, run = _run(entry)
    # In the report, passed or not: the same seed and budget find the same counterexample again.
    record_property("seed", int(spec.get("seed", 0)))
    record_property("examples", int(spec.get("examples", 60)))
    stats = c.search(run, spec)
    record_property("tried", stats["examples"])


def test_contract_boundaries(entry, record_property):
    """Boundary values of every dtype the contract allows: zeros of both signs, subnormals, the smallest normal, huge
    magnitudes and the contract's thresholds; outputs equal the original
    zh: 契约允许的每种 dtype 的边界值：正负零、次正规数、最小正规数、极大的数值以及契约声明的阈值；输出与原函数相等
    """
    spec, run = _run(entry)
    # The same cases on every grading; the seed is that of the ordinary values beside them.
    record_property("seed", int(spec.get("seed", 0)))
    plan = c.shape_plans(spec, int(spec.get("seed", 0)))[0]  # the shape test_contract_dtypes compiled: replayed
    tried = 0
    try:
        for dtype in c.dtypes(spec):
            for args in c.boundary_cases(spec, plan, dtype):
                tried += 1
                run.compare(args, case=T("boundary values: {inputs}", inputs=c.describe_inputs(spec, args)))
    finally:  # also when a case failed: how many were tried, the failing one included
        record_property("examples", tried)
