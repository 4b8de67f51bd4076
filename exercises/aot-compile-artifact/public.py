"""Handed to the runner for aot-compile-artifact: the grader's fn, and the build process.

`build_and_serve` runs in the runner, beside the learner's code, with the processes of
judge/checks/artifact_processes.py: a process that has imported torch and compiled nothing (forked by the runner
before the learner's file is imported: `build_process` in exercise.toml), and a "build" process forked from it that
calls build_artifact(fn, example()). It only builds (the name is the shared form's, as in
compile-cache-artifacts): the bytes come back to the verifier as data (`build["artifacts"]`, a uint8 tensor). The
serving is the trusted side's: the verifier sends the bytes to the trusted parent, which loads them with
load_compiled_function in a sandboxed run of its own where no learner file is imported (judge/parent/loading.py,
judge/loader_side/loader.py), calls the loaded function on the verifier's inputs, and hands back Dynamo's counters
(frames traced, graphs compiled) and the outputs, which the verifier compares with fn on those inputs itself.
The artifact is a pickle, so its own code runs in that process: the exercise stays self-checked (trust_reason).
"""


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


def build_and_serve(build_artifact) -> dict:
    """{"build": {type, size, artifacts, changed | error}}: the build only; the bytes are loaded on the trusted side."""
    return artifact_processes.build_and_serve(build_artifact, entry="build_artifact", grader_fn=GRADER_FN)
