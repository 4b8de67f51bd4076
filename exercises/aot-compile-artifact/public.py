"""Handed to the runner for aot-compile-artifact: the grader's fn, and the fresh processes.

This exercise is self-checked (see trust_reason in exercise.toml): the bytes the learner returns are pickles
that `torch.compiler.load_compiled_function` unpickles, so only a process that already runs the learner's code
may load them. `build_and_serve` runs in the runner, beside the learner's code, with the processes of
judge/checks/artifact_processes.py: a fresh process that imports torch and compiles nothing, a "build" process
forked from it that calls build_artifact(fn, example()), then the fresh process serving with SERVE below: it loads
the bytes with load_compiled_function, calls the loaded function on the grader's input, and reports Dynamo's
counters (frames it traced, graphs it compiled) and the output tensor, which the grader compares with fn on that
input itself.
"""

import torch

from judge.checks import artifact_processes

GRADER_FN = '''
import torch

def fn(x):
    h = torch.nn.functional.silu(x @ x.T)
    return (h.softmax(-1) * 2.0 + 1.0).sum(0)

def example():
    return torch.arange(16 * 32, dtype=torch.float32).reshape(16, 32).sin()
'''
exec(compile(GRADER_FN, "<grader_fn>", "exec"))  # fn and example, here and in every fresh process

SERVE = '''
def serve(data, x_path, out_path):
    import io
    from torch._dynamo.utils import counters
    served = {}
    try:
        loaded = torch.compiler.load_compiled_function(io.BytesIO(data))
    except BaseException as exc:
        return {"load_error": f"{type(exc).__name__}: {exc}"[:500]}
    x = torch.load(x_path, weights_only=True)
    try:
        torch.save(loaded(x).detach().clone(), out_path)
    except BaseException as exc:
        served["call_error"] = f"{type(exc).__name__}: {exc}"[:800]
    served["counters"] = {k: {n: int(v) for n, v in counters[k].items()} for k in ("frames", "stats")}
    return served
'''


def build_and_serve(build_artifact, x: torch.Tensor) -> dict:
    """{"build": {type, size, changed | error}, "serve": {load_error | counters, call_error | output}}; "serve"
    only after bytes from a build that left no global setting changed."""
    return artifact_processes.build_and_serve(build_artifact, x, entry="build_artifact", grader_fn=GRADER_FN,
                                              serve=SERVE)
