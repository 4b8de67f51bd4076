"""The jobs of a grading, as the sandboxed processes read them: the runner's, the verifier's, and a loader's.

The parent makes them (judge/parent/job.py: `make_jobs`; a loader's when the verifier asks, judge/parent/loading.py);
the program in the sandbox (judge/child.py) reads its own. The runner's job carries the learner's source and the
exercise's public file only; the verifier's carries the hidden tests, the reference and the starter as text, never
the learner's source; a loader's carries an artifact's bytes, never the learner's source.
"""

from __future__ import annotations

import secrets
from typing import Literal

from pydantic import BaseModel, Field


class RunnerJob(BaseModel):
    role: Literal["runner"] = "runner"
    entry_point: str
    source: str = Field(description="The learner's source text.")
    filename: str = Field("solution.py", description="How the learner's file is named in messages.")
    public: str | None = Field(None, description="Text of the exercise's public module, if it has one.")
    op_namespaces: list[str] = []
    build_process: bool = Field(False, description="Fork, before the learner's file is imported, the process the "
                                "artifact exercises' build process is forked from (judge/shared/prepared_process.py).")
    tier: str | None = Field(None, description="The tier graded (judge/shared/tiers.py): 'cpu' hides CUDA and turns on "
                                               "Triton's interpreter in this process too.")


class VerifierJob(BaseModel):
    role: Literal["verifier"] = "verifier"
    exercise_id: str
    entry_point: str
    filename: str = Field("solution.py", description="How the learner's file is named in messages.")
    files: dict[str, str] = Field(description="Exercise files by relative path: tests/*, solutions/*, starter.py.")
    tests: list[str]
    reference: str = "solutions/reference.py"
    starter: str = "starter.py"
    public: str | None = None
    op_namespaces: list[str] = []
    contract: dict | None = Field(None, description="The exercise's [contract], checked by judge.checks.contract.")
    runner_seconds: float = Field(description="The runner's wall-clock backstop: how long answers may take.")
    stop_after_first_failure: bool = Field(
        False, description="End at the first failing check (pytest --maxfail=1): a proof that needs only the check "
                           "a wrong solution is pinned to. A learner's grading always runs every check.")
    cost: dict | None = Field(None, description="The [cost] table the verifier measures the cost section on "
                                                "(judge/costs/spec.py); none: no cost section.")
    cost_known: dict | None = Field(None, description="The reference's and starter's figures an earlier verifier "
                                                      "measured for this exercise version (judge/costs/memo.py).")
    seed: int = Field(0, description="The grading's draw (judge/shared/draw.py): the hidden tests' inputs, the "
                                     "examples the "
                                     "runner is sent and the contract's sizes and search come from it. Never in the "
                                     "runner's job.")
    tier: str | None = Field(None, description="The tier graded (judge/shared/tiers.py): 'cpu' runs only the "
                                               "exercise's "
                                               "cpu_tier tests, in that order, on the CPU.")
    tier_checks: list[str] = Field([], description="The tier's hidden tests, in order (none: every test).")
    reuse_compiled: bool = Field(True, description="Hidden tests that ask for it (Ref.compile(reuse=True)) share "
                                                   "compile sessions in the runner; False: every test compiles "
                                                   "from a fresh state (judge/remote/transport.py).")
    nonce: str = Field(default_factory=lambda: secrets.token_hex(16))


class LoaderJob(BaseModel):
    """An artifact's bytes to load in a sandboxed run of their own (judge/loader_side/loader.py), made by the trusted
    side when the verifier asks (`VerifierSays.LOAD_ARTIFACT`). It carries no learner file: the bytes, the grader's
    inputs and the grader's own modules only."""

    role: Literal["loader"] = "loader"
    kind: Literal["aot", "cache"] = Field("aot", description="What the bytes are: 'aot', a function saved by "
                                          "`aot_compile` (loaded with torch.compiler.load_compiled_function and "
                                          "called); 'cache', compile-cache artifacts (loaded with "
                                          "torch.compiler.load_cache_artifacts into an empty Inductor cache, then "
                                          "the grader's `fn` is compiled and called).")
    artifact: str = Field(description="The bytes to load, base64.")
    inputs: list[dict] = Field(description="Tensors (judge/shared/wire.py) to call the loaded function on, one each.")
    modules: dict[str, str] = Field({}, description="{module name: source} importable before loading: the "
                                                    "grader's own modules the artifact may name (its `fn`), "
                                                    "and for 'cache' the module `grader_fn` whose `fn` is compiled.")
