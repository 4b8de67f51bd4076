"""Hidden tests for aot-compile-artifact: a fresh process loads the learner's precompiled function and runs it.

Self-checked (exercise.toml: trust_reason), but the learner's file decides only the bytes:
1. "build", in the runner (public.build_and_serve): a fresh process that compiled nothing imports the learner's
   file and calls build_artifact(fn, example); the bytes come back here as data;
2. "serve", on the trusted side (judge.checks.artifact_processes.load_artifact): the trusted parent loads the bytes
   with load_compiled_function in a sandboxed run of its own where no learner file is imported, calls the loaded
   function on inputs drawn here for this grading, and reports Dynamo's counters (frames traced, graphs compiled)
   and the outputs, which are compared here with fn on those inputs. Only the artifact's own code runs there.
"""

import re

import torch

from judge import remote
from judge.checks import Forbidden, WrongAnswer, assert_same, describe_tensor, once
from judge.checks.artifact_processes import artifact_bytes, assert_built_bytes, build_form, load_artifact
from judge.reports.i18n import T

_BUILT: dict = {}
_SERVED: dict = {}


def runs(entry, public) -> dict:
    """Build in the runner (public.build_and_serve); done once, shared by the checks (~5 s)."""
    def run():
        report = remote.call(remote.public("build_and_serve"), entry, what=T.same("`build_artifact(fn, example)`"))
        return build_form(report)  # only the build is read: what a "serve" in it says is not asked

    return once(_BUILT, run)


def built(entry, public) -> dict:
    build = runs(entry, public)
    assert_built_bytes(build, entry="build_artifact", scoped="`torch.no_grad()`",
                       returns=T("what `load_compiled_function` reads from a file",
                                 zh="`load_compiled_function` 从文件里读的内容"))
    if not build.get("size"):
        raise WrongAnswer(T("`build_artifact` returned empty bytes: nothing was precompiled to ship.",
                            zh="`build_artifact` 返回了空的 bytes：没有任何预编译的结果可以带走。"))
    return build


def loaded(entry, public) -> dict:
    """The trusted side's load of the bytes (done once): its report, and the inputs drawn here for it."""
    def run():
        data = artifact_bytes(built(entry, public))
        example = public.example()
        # what the service is called with: the same shape and dtype, new values drawn for this grading
        xs = [torch.randn(example.shape, dtype=example.dtype), 4.0 * torch.randn(example.shape, dtype=example.dtype)]
        return {**load_artifact(data, xs, grader_fn=public.GRADER_FN), "xs": xs}

    built(entry, public)
    return once(_SERVED, run)


def served(entry, public) -> dict:
    """The loader's report, once the bytes loaded and the loaded function ran on every input."""
    serve = loaded(entry, public)
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
    if serve["changed"]:
        raise Forbidden(T("loading and running your artifact left global settings changed in the fresh process: "
                          "{changes}. An artifact must not change the process that loads it.",
                          zh="加载并运行你的产物后，新进程里的全局设置被改动了：{changes}。产物不能改动加载它的进程。",
                          changes=T.same(", ".join(f"`{c}`" for c in serve["changed"][:5]))))
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
    serve = served(entry, public)
    for x, output in zip(serve["xs"], serve["outputs"], strict=True):
        assert_same(output, public.fn(x.clone()), case=T("`fn` served from your artifact, {x}",
                                                         zh="用你的产物服务的 `fn`，{x}", x=describe_tensor("x", x)),
                    rtol=1e-4, atol=1e-4)
