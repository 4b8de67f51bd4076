"""The attack suite: each hostile submission, through each hardened backend, must get a clean
non-accepted verdict, leave the host unchanged, and leave the pool able to grade the next honest
submission correctly.

A probe that finds a way out prints ESCAPED; no report may ever contain it.
"""

from __future__ import annotations

import textwrap
import time

import pytest

from judge.reports.report import Verdict
from judge.shared.paths import PROJECT_ROOT

# One xdist worker runs the whole suite, so the warm pools are started once.
pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("sandbox")]

NOT_ACCEPTED = frozenset(Verdict) - {Verdict.ACCEPTED}
WRONG = "\n\ndef f(x):\n    return x + 2\n"

ATTACKS = {
    "fork_bomb": (NOT_ACCEPTED, """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """),
    "thread_bomb": (NOT_ACCEPTED, """
        import threading, time
        while True:
            threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
        """),
    "memory_bomb_tensor": ({Verdict.MEMORY_LIMIT}, """
        import torch
        keep = [torch.ones(32 * 2**20) for _ in range(256)]
        """),
    "memory_bomb_list": ({Verdict.MEMORY_LIMIT}, """
        keep = []
        while True:
            keep.append([0] * 10**6)
        """),
    "busy_loop": ({Verdict.TIME_LIMIT}, "while True:\n    pass\n"),
    "sleep": ({Verdict.TIME_LIMIT}, "import time\ntime.sleep(3600)\n"),
    "ignores_sigterm": ({Verdict.TIME_LIMIT}, """
        import signal
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
            signal.signal(sig, signal.SIG_IGN)
        while True:
            pass
        """),
    "stdout_flood": ({Verdict.OUTPUT_LIMIT}, "while True:\n    print('x' * 1000)\n"),
    "huge_file": (NOT_ACCEPTED, """
        with open("big.bin", "wb") as fh:
            for _ in range(4096):
                fh.write(b"\\0" * 2**20)
        """),
    "fill_tmp": (NOT_ACCEPTED, """
        import os
        os.makedirs("/tmp/fill", exist_ok=True)
        for i in range(100000):
            with open(f"/tmp/fill/{i}", "wb") as fh:
                fh.write(b"\\1" * 8 * 2**20)
        """),
    "network_internet": (NOT_ACCEPTED, """
        import socket
        names = [n for _, n in socket.if_nameindex()]
        if set(names) - {"lo"}:
            print("ESCAPED interfaces", names)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.connect(("192.0.2.1", 9))  # a UDP connect only looks up a route: no packet is sent
            print("ESCAPED route to the internet")
        except OSError as exc:
            print("no route:", exc)
        raise SystemExit("probe done")
        """),
    "network_host_loopback": (NOT_ACCEPTED, """
        import socket
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
            print("ESCAPED connected to the host")
        except OSError as exc:
            print("refused:", exc)
        raise SystemExit("probe done")
        """),
    "read_shadow": (NOT_ACCEPTED, """
        for path in ("/etc/shadow", "/proc/1/root/etc/shadow", "/proc/self/root/etc/shadow"):
            try:
                print("ESCAPED", path, open(path).read()[:100])
            except OSError as exc:
                print("denied:", path, exc)
        raise SystemExit("probe done")
        """),
    "read_server_data_and_hidden_tests": (NOT_ACCEPTED, """
        import os, sys
        paths = ["{root}/tests/fake_course/add-one/tests/test_add.py", "{root}/exercises",
                 "{root}/data", "{root}/pyproject.toml", "{sentinel}"]
        for path in paths:
            try:
                print("ESCAPED", path, os.listdir(path) if os.path.isdir(path) else open(path).read()[:80])
            except OSError as exc:
                print("denied:", path, type(exc).__name__)
        # everywhere but the kernel's files and installed packages (walking torch's alone outlasts the time
        # limit, and a search killed half-way proves nothing)
        skip = {"/proc", "/sys", "/dev", "/usr", sys.prefix, sys.base_prefix}
        for top, dirs, files in os.walk("/"):
            dirs[:] = [d for d in dirs if os.path.join(top, d) not in skip
                       and d not in ("site-packages", "dist-packages", "__pycache__")]
            if "test_add.py" in files:
                print("ESCAPED hidden test file", os.path.join(top, "test_add.py"))
        print("searched everywhere")
        raise SystemExit("probe done")
        """),
    "write_outside_scratch": (NOT_ACCEPTED, """
        import os, sys
        targets = ["{sentinel_dir}/planted", "{root}/judge/planted.py", "/opt/practice/judge/planted.py",
                   "/usr/planted", "/etc/planted", os.path.join(sys.prefix, "planted.pth"), "/planted",
                   "/proc/sys/kernel/hostname", "/sys/fs/cgroup/planted"]
        for path in targets:
            try:
                with open(path, "w") as fh:
                    fh.write("x")
                print("ESCAPED wrote", path)
            except OSError as exc:
                print("denied:", path, type(exc).__name__)
        raise SystemExit("probe done")
        """),
    "server_environment": (NOT_ACCEPTED, """
        import glob, os
        print(dict(os.environ))
        for path in glob.glob("/proc/*/environ"):
            try:
                print(path, open(path, "rb").read())
            except OSError:
                pass
        raise SystemExit("probe done")
        """),
    "kill_parent": (NOT_ACCEPTED, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n" + WRONG),
    "kill_everything": (NOT_ACCEPTED, "import os, signal\nos.kill(-1, signal.SIGKILL)\n" + WRONG),
    "daemon_writes_later": (NOT_ACCEPTED, """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(1.5)
                for path in ("{sentinel_dir}/daemon", "/tmp/daemon-mark", "daemon-mark"):
                    try:
                        open(path, "w").write("x")
                    except OSError:
                        pass
                time.sleep(600)
            os._exit(0)
        raise SystemExit("daemon started")
        """),
    "deep_recursion": (NOT_ACCEPTED, """
        import sys
        sys.setrecursionlimit(10**8)
        def down(n):
            return down(n + 1) + 1
        down(0)
        """),
    "segfault_ctypes": ({Verdict.RUNTIME_ERROR}, "import ctypes\nctypes.string_at(0)\n"),
    "fake_report_on_stdout": (NOT_ACCEPTED, """
        import json
        for kind in ("collected", "check", "done"):
            print(json.dumps({"type": kind, "verdict": "ACCEPTED", "passed": True}))
        print("Verdict: ACCEPTED")
        """ + WRONG),
    "forged_result_channel": (NOT_ACCEPTED, """
        import os
        os.write(3, b'{"type": "done"}\\n{"nonce": "0", "type": "done"}\\n')
        """ + WRONG),
    "closes_descriptors": (NOT_ACCEPTED, "import os\nos.closerange(0, 1024)\n\n\ndef f(x):\n    return x + 1\n"),
    "exit_0_early": (NOT_ACCEPTED, "import os\nos._exit(0)\n"),
    "sys_exit_0_at_import": (NOT_ACCEPTED, "import sys\nsys.exit(0)\n"),
    "fork_then_parent_exits": (NOT_ACCEPTED, """
        import os
        if os.fork():
            os._exit(0)

        def f(x):
            return x + 1
        """),
    "poison_compile_cache": (NOT_ACCEPTED, """
        import os
        cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "/tmp/inductor")
        os.makedirs(cache, exist_ok=True)
        with open(os.path.join(cache, "planted-kernel.so"), "w") as fh:
            fh.write("the next submission must never load this")
        raise SystemExit("planted")
        """),
    "symlinks_out_of_scratch": (NOT_ACCEPTED, """
        import os
        for name, target in (("host", "{sentinel_dir}"), ("root", "/"), ("code", "/opt/practice"),
                             ("etc", "/etc"), ("proc", "/proc/1/root")):
            os.symlink(target, name)
            os.symlink(target, "/tmp/" + name)
        raise SystemExit("links planted")
        """),
}


# Attacks that run until the run's time limit ends them get a short one, which ends them as TIME_LIMIT as well as
# any other would (the honest run after them keeps 8 s).
ENDED_BY_TIME = {"busy_loop", "sleep", "ignores_sigterm", "fork_bomb", "thread_bomb"}
SHORT_SECONDS = 2


def _source(template: str, host, port: int) -> str:
    values = {"{root}": PROJECT_ROOT, "{sentinel_dir}": host.dir, "{sentinel}": host.sentinel, "{port}": port}
    text = textwrap.dedent(template)
    for key, value in values.items():
        text = text.replace(key, str(value))
    return "import torch\n" + text


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack(name, run_attack, host, loopback_listener, assert_honest_accepted, server_secret):
    allowed, template = ATTACKS[name]
    report = run_attack(_source(template, host, loopback_listener.port),
                        time_seconds=SHORT_SECONDS if name in ENDED_BY_TIME else None)
    shown = report.stdout + report.stderr + report.summary

    assert report.verdict in allowed, (report.verdict, report.summary, report.stderr[-1500:])
    if name == "read_server_data_and_hidden_tests":  # the search ended: it found nothing, not too little time
        assert "searched everywhere" in report.stdout, report.summary
    if name == "segfault_ctypes":  # the signal named
        assert "SIGSEGV" in report.summary, report.summary
    if name == "stdout_flood":  # what was printed kept, truncated
        assert report.output_truncated and 0 < len(report.stdout) <= 64 * 1024
    assert report.verdict is not Verdict.ACCEPTED
    assert "ESCAPED" not in shown, shown[-3000:]
    assert server_secret not in shown
    assert len(report.stdout) + len(report.stderr) <= 64 * 1024 + 1024
    if name == "daemon_writes_later":
        time.sleep(2.5)  # past the daemon's write, had it survived
    host.assert_unchanged()
    assert not loopback_listener.accepted(), "a submission reached the host's loopback"
    after = assert_honest_accepted(
        "import os\ncache = os.environ.get('TORCHINDUCTOR_CACHE_DIR', '/tmp/inductor')\n"
        "print('MARK', os.path.exists('/tmp/daemon-mark'), os.path.exists('/tmp/fill'), "
        "os.path.exists(os.path.join(cache, 'planted-kernel.so')), os.listdir('.'))\n")
    assert "MARK False False False" in after.stdout, after.stdout


CONFINEMENT_PROBE = """
import os, resource, socket
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
facts = {
    "uid": os.getuid(), "euid": os.geteuid(), "pid": os.getpid(), "hostname": socket.gethostname(),
    "cap_eff": status["CapEff"].strip(), "no_new_privs": status["NoNewPrivs"].strip(),
    "seccomp": status["Seccomp"].strip(), "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[0],
    "core": resource.getrlimit(resource.RLIMIT_CORE)[0], "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
    "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
    "fds": {fd: os.readlink("/proc/self/fd/" + fd) for fd in os.listdir("/proc/self/fd")
            if os.path.exists("/proc/self/fd/" + fd)},
    "env": sorted(os.environ),
}
print("FACTS", repr(facts))
"""


def test_submission_is_confined(sandbox, run_attack):
    """What the learner's code finds itself in: no privileges, seccomp, rlimits, a clean environment."""
    report = run_attack(CONFINEMENT_PROBE + "\n\ndef f(x):\n    return x + 1\n")
    assert report.verdict is Verdict.ACCEPTED, report.summary
    line = next(x for x in report.stdout.splitlines() if x.startswith("FACTS "))
    facts = eval(line[len("FACTS "):])
    assert facts["uid"] == facts["euid"] != 0
    assert facts["cap_eff"] == "0000000000000000"
    assert facts["no_new_privs"] == "1" and facts["seccomp"] == "2"
    assert facts["fsize"] == 16 * 2**20 and facts["core"] == 0 and facts["cpu"] <= 17
    assert facts["nofile"] <= 1024
    fds = facts["fds"]  # stdin, stdout, stderr, the result pipe and the runner's private copy of its inbox
    extras = set(fds.values()) - {fds["0"], fds["1"], fds["2"], fds["3"]}
    assert len(extras) <= 1 and all(t.startswith("pipe:") for t in extras), fds
    assert fds["0"] == "/dev/null" and not any(t.startswith("socket:") for t in fds.values())
    assert facts["hostname"] == "sandbox"
    assert not any(name.startswith("PRACTICE_") for name in facts["env"])
    if sandbox.name == "bwrap":
        assert facts["pid"] == 1  # its own pid namespace


# The playground (judge/parent/playground.py) runs the user's own file in the same two sandboxed processes as a
# grading, from
# the same pools (judge.parent.playground.run_jobs, as judge.parent.grading), and the attacks act while the runner
# imports the file,
# before the playground's form is read: what the host sees of an attack does not depend on the surface, and
# test_attack checks it for every attack on each backend. Here, each attack that a limit or a crash ends, given the
# playground's form, must be named as a grading names it, leak nothing, leave the host unchanged and the pool able to
# run the next honest file. (There is no verdict to forge: an attack that also defines a working `f` may simply be
# reported.)
NAMED_BY_A_LIMIT = sorted(name for name, (allowed, _) in ATTACKS.items() if allowed != NOT_ACCEPTED)
PLAYGROUND_FORM = ("\n\ndef example_calls():\n    return [(torch.ones(3),)]\n\n\n"
                   "__practice__ = {'function': 'f', 'calls': 'example_calls', 'inductor': False}\n")
HONEST_PLAYGROUND = "import torch\n\n\ndef f(x):\n    return x + 1\n" + PLAYGROUND_FORM


@pytest.mark.parametrize("name", NAMED_BY_A_LIMIT)
def test_attack_on_the_playground(name, sandbox, host, loopback_listener, server_secret):
    from judge.parent.playground import run_playground
    from tests.sandbox.conftest import ATTACK_LIMITS

    allowed, template = ATTACKS[name]
    limits = ATTACK_LIMITS.model_copy(update={"time_seconds": SHORT_SECONDS}) if name in ENDED_BY_TIME \
        else ATTACK_LIMITS
    report = run_playground(_source(template, host, loopback_listener.port) + PLAYGROUND_FORM, sandbox=sandbox,
                    limits=limits)
    shown = report.stdout + report.stderr + report.summary + report.model_dump_json()

    # the limit or crash that ended it, as a grading names it
    assert report.problem is not None and report.problem.exc_type in {v.value for v in allowed}, report.summary
    assert "ESCAPED" not in shown, shown[-3000:]
    assert server_secret not in shown
    assert len(report.stdout) + len(report.stderr) <= 64 * 1024 + 1024
    if name == "daemon_writes_later":
        time.sleep(2.5)
    host.assert_unchanged()
    assert not loopback_listener.accepted(), "a submission reached the host's loopback"
    after = run_playground(HONEST_PLAYGROUND, sandbox=sandbox, limits=ATTACK_LIMITS)
    assert after.problem is None and after.calls == 1 and not after.breaks, after.summary
