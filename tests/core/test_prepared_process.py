"""The process the runner forks before the learner's file is imported (judge/shared/prepared_process.py), for the
artifact exercises' build process: a script there sees what it would see in a new interpreter with the same
environment (Inductor's settings, the environment, its folder, no descriptor of the runner's), dies and hangs as
there (also while a child the learner's code forked holds its pipe open), a process killed before its command is
told apart (the caller starts a new interpreter instead), and it ends when the runner closes its pipe without a
command. All in one subprocess, which plays the runner: a fork of the test process itself would copy the test
runner's threads."""

from __future__ import annotations

import json
import subprocess
import sys

from judge.shared.paths import PROJECT_ROOT

SEEN = """
import json, os, sys
import torch, torch._functorch.config as functorch_config, torch._inductor.config as inductor_config
fds = sorted(os.listdir("/proc/self/fd"), key=int)
with open(sys.argv[1], "w") as f:
    json.dump({"fx_graph_cache": inductor_config.fx_graph_cache,
               "autograd_cache": functorch_config.enable_autograd_cache, "vec_isa_ok": inductor_config.cpp.vec_isa_ok,
               "bundled_autotune_remote_cache": inductor_config.bundled_autotune_remote_cache,
               "enable_remote_autograd_cache": functorch_config.enable_remote_autograd_cache,
               "threads": torch.get_num_threads(), "mark": os.environ.get("MARKED_FOR_THE_TEST"),
               "logs": os.environ.get("TORCH_LOGS"), "cache": os.environ["TORCHINDUCTOR_CACHE_DIR"],
               "in_its_folder": os.getcwd() == os.path.dirname(sys.argv[1]), "fds": len(fds)}, f)
"""

RUNNER = """
import json, os, sys, time
from pathlib import Path
import torch, torch._functorch.config as functorch_config, torch._inductor.config as inductor_config
from judge.checks.fresh_process import run_python
from judge.shared import prepared_process

SEEN, folder = sys.argv[1], Path(sys.argv[2])
# what a warm worker's run has set otherwise than a new interpreter would read it from the environment below
inductor_config.fx_graph_cache, functorch_config.enable_autograd_cache = False, False
inductor_config.cpp.vec_isa_ok, inductor_config.bundled_autotune_remote_cache = True, False
functorch_config.enable_remote_autograd_cache = False
torch.set_num_threads(2)
os.environ["TORCH_LOGS"] = "+dynamo"
channel = os.open(folder / "channel", os.O_WRONLY | os.O_CREAT)  # one of the runner's descriptors
found = {}
for name in ("prepared", "new"):
    where = folder / name
    where.mkdir()
    env = {"TORCHINDUCTOR_FX_GRAPH_CACHE": "1", "TORCHINDUCTOR_AUTOGRAD_CACHE": "1", "TORCHINDUCTOR_VEC_ISA_OK": "",
           "OMP_NUM_THREADS": "1", "MARKED_FOR_THE_TEST": "here", "TORCHINDUCTOR_CACHE_DIR": str(where / "cache")}
    if name == "prepared":
        prepared_process.prepare()
        found["status"] = prepared_process.run(prepared_process.take(), SEEN, [str(where / "seen.json")], env, where,
                                               120)[0]
        found[name] = json.loads((where / "seen.json").read_text())
    else:
        found[name] = run_python(SEEN, [str(where / "seen.json")], env=env, result_file=where / "seen.json",
                                 timeout=300, cwd=where)
        found[name]["cache"] = found[name]["cache"].replace("new", "prepared")
holders = []
for name, script in (("exits", "import sys\\nsys.exit(3)"), ("raises", "raise ValueError('from the script')"),
                     ("hangs", "import time\\ntime.sleep(60)")):
    (folder / name).mkdir()
    prepared_process.prepare()
    holders.append(os.fork())  # as a learner's import may: a child with a copy of the write end, never closed
    if holders[-1] == 0:
        time.sleep(600)
        os._exit(0)
    try:
        found[name] = prepared_process.run(prepared_process.take(), script, [], {}, folder / name, 2)
    except TimeoutError as exc:
        found[name] = str(exc)
for holder in holders:
    os.kill(holder, 9)
found["second_take"] = prepared_process.take()
prepared_process.prepare()
prepared = prepared_process.take()
os.kill(prepared[0], 9)  # as the learner's code may
os.waitid(os.P_PID, prepared[0], os.WEXITED | os.WNOWAIT)  # dead, not yet reaped
found["killed_before_its_command"] = prepared_process.run(prepared, "pass", [], {}, folder, 2)
prepared_process.prepare()
pid, write_end = prepared_process.take()
os.close(write_end)  # the runner ends without a build
found["without_a_command"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(found))
"""


def test_a_script_in_the_prepared_process_runs_as_in_a_new_interpreter(tmp_path):
    done = subprocess.run([sys.executable, "-c", RUNNER, SEEN, str(tmp_path)], capture_output=True, text=True,
                          timeout=600, cwd=PROJECT_ROOT, env={"PYTHONPATH": str(PROJECT_ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["status"] == 0
    assert found["prepared"] == found["new"], (found["prepared"], found["new"])
    assert found["prepared"]["fx_graph_cache"] is True and found["prepared"]["threads"] == 1
    assert found["prepared"]["mark"] == "here" and found["prepared"]["logs"] is None
    assert found["prepared"]["in_its_folder"] and found["prepared"]["fds"] == 4  # 0-2 and the listing's own
    assert found["exits"] == [3, ""]
    assert found["raises"][0] == 1 and "ValueError: from the script" in found["raises"][1]
    assert found["hangs"] == "the prepared process did not finish in 2 s"
    assert found["second_take"] is None and found["without_a_command"] == 0
    assert found["killed_before_its_command"] is None
