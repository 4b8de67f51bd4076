"""Hidden tests for aot-compile-artifact: a fresh process loads the learner's precompiled function and runs it.

Self-checked (exercise.toml: trust_reason). The bytes build_artifact returns are pickles that
torch.compiler.load_compiled_function unpickles, so they are loaded only beside the learner's code: the runner
runs public.build_and_serve, whose two processes (a fresh one that compiled nothing, and a fork of it) are
1. "build" (the fork): imports the learner's file and calls build_artifact(fn, example) on the grader's function;
2. "serve": load_compiled_function(bytes), calls the loaded function on this grader's input, reports Dynamo's
   counters (frames traced, graphs compiled) and the output.
What they report decides the first three checks (counts, never seconds); the served output is compared here
with fn on that input.
"""

import re

import torch

from judge import remote
from judge.checks import WrongAnswer, assert_same, describe_tensor, once
from judge.checks.artifact_processes import assert_built_bytes, report_form
from judge.reports.i18n import T

_RUNS: dict = {}


def runs(entry, public) -> dict:
    """Build and serve in the runner (public.build_and_serve); done once, shared by the checks (~8 s)."""
    def run():
        example = public.example()
        x = torch.randn(example.shape, dtype=example.dtype)  # what the service is called with: same shape, new values
        report = remote.call(remote.public("build_and_serve"), entry, x, what=T.same("`build_artifact(fn, example)`"))
        report_form(report)
        return {**report, "x": x}

    return once(_RUNS, run)


def built(entry, public) -> dict:
    build = runs(entry, public)["build"]
    assert_built_bytes(build, entry="build_artifact", scoped="`torch.no_grad()`",
                       returns=T("what `load_compiled_function` reads from a file",
                                 zh="`load_compiled_function` 从文件里读的内容"))
    if not build.get("size"):
        raise WrongAnswer(T("`build_artifact` returned empty bytes: nothing was precompiled to ship.",
                            zh="`build_artifact` 返回了空的 bytes：没有任何预编译的结果可以带走。"))
    return build


def served(entry, public) -> dict:
    """The serve process's report, once the bytes loaded and the loaded function ran."""
    built(entry, public)
    serve = runs(entry, public)["serve"]
    if "load_error" in serve:
        raise WrongAnswer(T("`torch.compiler.load_compiled_function` could not read the bytes you returned "
                            "({error}): return what `save_compiled_function` writes, as is.",
                            zh="`torch.compiler.load_compiled_function` 读不了你返回的 bytes（{error}）："
                               "把 `save_compiled_function` 写出的内容原样返回。",
                            error=T.same(f"`{serve['load_error']}`")))
    if "call_error" in serve:
        error = str(serve["call_error"])
        guard = re.search(r'verbose_code_parts=\[\s*"(.*?)"\s*[,\]]', error, re.S)  # a GuardManager error's own words
        if guard:
            raise WrongAnswer(T("the loaded function's guard failed on the served input (same shape and dtype as "
                                "`example`, no gradient): {guard}. A precompiled function carries the guards of the "
                                "input it was compiled for and never recompiles: compile it for exactly the input "
                                "it will be served.",
                                zh="加载出的函数在服务的输入（形状、dtype 与 `example` 相同，不需要梯度）上 guard 没有通过："
                                   "{guard}。预编译的函数带着编译时那个输入的 guard，而且不会重新编译：要按服务时完全"
                                   "一样的输入编译。", guard=T.same(f"`{guard.group(1)[:300]}`")))
        raise WrongAnswer(T("the loaded function failed on the served input (same shape and dtype as `example`, "
                            "no gradient): {error}",
                            zh="加载出的函数在服务的输入（形状、dtype 与 `example` 相同，不需要梯度）上失败了：{error}",
                            error=T.same(f"`{error}`")))
    return serve


def test_returns_artifact(entry, public):
    """build_artifact returns non-empty bytes and leaves no global setting changed
    zh: build_artifact 返回非空的 bytes，不留下被改动的全局设置
    """
    built(entry, public)


def test_fresh_process_runs_it(entry, public):
    """A fresh process loads the bytes with load_compiled_function and the loaded function runs on a new input
    zh: 新进程用 load_compiled_function 加载这些 bytes，加载出的函数能在新输入上运行
    """
    served(entry, public)


def test_no_new_compile(entry, public):
    """The fresh process runs the function without Dynamo tracing a frame or compiling a graph
    zh: 新进程运行这个函数时，Dynamo 没有追踪任何帧，也没有编译任何图
    """
    counters = served(entry, public)["counters"]
    frames = counters.get("frames", {}).get("total", 0)
    graphs = counters.get("stats", {}).get("unique_graphs", 0)
    if frames or graphs:
        raise WrongAnswer(T("the fresh process compiled again: Dynamo traced {frames} frame(s) and compiled {graphs} "
                            "graph(s) while loading and running your artifact. It must carry the compiled function "
                            "itself (`aot_compile`), not a way to compile it on arrival.",
                            zh="新进程又编译了：加载并运行你的产物时，Dynamo 追踪了 {frames} 个帧、编译了 {graphs} 张图。"
                               "产物里要带着编译好的函数本身（`aot_compile`），而不是一个到了再编译的办法。",
                            frames=frames, graphs=graphs))


def test_served_result(entry, public):
    """The loaded function gives the original function's result on a new input
    zh: 加载出的函数在新输入上给出与原函数相同的结果
    """
    serve, x = served(entry, public), runs(entry, public)["x"]
    assert_same(serve["output"], public.fn(x), case=T("`fn` served from your artifact, {x}",
                                                    zh="用你的产物服务的 `fn`，{x}", x=describe_tensor("x", x)),
                rtol=1e-4, atol=1e-4)
