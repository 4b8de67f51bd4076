"""The helper library for hidden tests: checks on what the compiler did, with learner-readable failures.

Import from here in hidden tests: `from judge.checks import compile_one_graph, assert_same, ...`.
See docs/authoring.md for a tour.
"""

from judge.checks.device import grading_device
from judge.checks.expected import assert_same_result, expected_first, pristine
from judge.checks.failures import CheckFailure, CompileError, Forbidden, GraphBreak, Recompile, WrongAnswer
from judge.checks.graphs import assert_no_host_sync, call_targets, compile_one_graph, find_graph_breaks, graph_code
from judge.checks.inductor import cpp_kernel_names, inductor_code
from judge.checks.numerics import assert_same, describe_tensor
from judge.checks.once import once
from judge.checks.provided import Provided, assert_result_flows_through
from judge.checks.recompiles import CompileCounter, assert_compiles
from judge.checks.sealed import run_sealed
from judge.checks.symbols import unbacked_symbols
from judge.checks.trust import rests_on_learner_process
from judge.compiler.logs import recompile_log
from judge.compiler.recording import Captured, RecordingBackend

__all__ = [
    "Captured", "CheckFailure", "CompileCounter", "CompileError", "Forbidden", "GraphBreak", "Recompile", "Provided",
    "RecordingBackend", "WrongAnswer", "assert_compiles", "assert_no_host_sync", "assert_result_flows_through",
    "assert_same", "assert_same_result", "call_targets", "compile_one_graph", "cpp_kernel_names", "describe_tensor",
    "expected_first", "find_graph_breaks", "graph_code", "grading_device", "inductor_code", "once", "pristine",
    "recompile_log", "rests_on_learner_process", "run_sealed", "unbacked_symbols",
]
