"""The background judge (cli/daemon.py, cli/daemon_server.py), driven as a learner drives it: `practice` in real
processes, each test with a daemon folder of its own (PRACTICE_DAEMON_DIR).

Most tests grade a file over judge.parent.grading's size limit: its report (LOAD_ERROR) is made before any sandbox runs,
so the direct grading costs nothing and what is tested is who grades and which daemon runs. The daemon still warms
its workers in the background; every test stops the daemons of its folder.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cli import daemon
from cli.daemon_protocol import LOG_NAME, SOCKET_NAME, DaemonSettings, alive, lock_held
from judge.parent.job import MAX_SOURCE_BYTES
from tests.daemons import stop_all, wait_until

ROOT = Path(__file__).resolve().parents[2]
OVERSIZE = "x = 1\n" * (MAX_SOURCE_BYTES // 6 + 1)  # refused before any process runs
STARTING = "A background judge is starting"


class Practice:
    """`practice ...` in a process of its own, from code at `root`, with the daemon on and in `folder`."""

    def __init__(self, tmp_path: Path, fake_course: Path, root: Path = ROOT, folder: Path | None = None):
        self.folder = folder or tmp_path / "daemon"
        self.settings = DaemonSettings(dir=self.folder)
        self.root = root
        self.env = {**os.environ, "PRACTICE_DAEMON": "1", "PRACTICE_DAEMON_DIR": str(self.folder),
                    "PRACTICE_EXERCISES_DIR": str(fake_course), "PRACTICE_WORKSPACE": str(tmp_path / "ws"),
                    "PYTHONPATH": str(root), "PRACTICE_LANG": "en", "COLUMNS": "200"}
        self.oversize = tmp_path / "big.py"
        self.oversize.write_text(OVERSIZE)

    def __call__(self, *args: str, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True,
                              env={**self.env, **env}, cwd=self.root, timeout=600)

    def status(self) -> dict | None:
        found = self("daemon", "status", "--json")
        assert found.returncode == 0, found.stderr
        return json.loads(found.stdout)

    def log(self) -> str:
        path = self.folder / LOG_NAME
        return path.read_text() if path.exists() else ""


@pytest.fixture
def practice(tmp_path, fake_course):
    runner = Practice(tmp_path, fake_course)
    yield runner
    stop_all(runner.settings)


def test_a_first_grading_runs_fresh_then_the_daemon_grades_alike_and_stays(practice, fake_course, add_one):
    wrong = str(fake_course / "add-one" / "wrong" / "add_two.py")
    first = practice("add-one", wrong, "--json")
    assert first.returncode == 1, first.stderr
    fresh = json.loads(first.stdout)
    assert fresh["sandbox"].startswith("none")  # as without a daemon: two fresh processes
    assert STARTING in first.stderr and "practice daemon stop" in first.stderr
    started = wait_until(practice.status, 60, "the daemon answers")
    assert started["current"] and started["gradings"] == 0

    second = practice("add-one", wrong, "--json")
    assert second.returncode == 1, second.stderr
    warm = json.loads(second.stdout)
    assert warm["sandbox"].startswith("local")  # the daemon's warm forks
    assert warm["verdict"] == fresh["verdict"] == "WRONG_ANSWER"
    assert [(c["name"], c["passed"]) for c in warm["checks"]] == [(c["name"], c["passed"]) for c in fresh["checks"]]
    assert STARTING not in second.stderr and second.stderr.strip() == ""

    reference = practice("add-one", str(fake_course / "add-one" / "solutions" / "reference.py"))
    assert reference.returncode == 0 and "ACCEPTED" in reference.stdout
    assert "local (warm forked processes" in reference.stdout

    events = []  # the client's own call: the progress events stream before the report
    report = daemon.grade(daemon.connect(practice.settings), add_one, add_one.read(add_one.reference), "ref.py",
                          events.append, practice.settings)
    assert report.accepted
    assert [e.type for e in events][:1] == ["running"] and sum(e.type == "check" for e in events) == 3

    now = practice.status()
    assert now["pid"] == started["pid"] and now["gradings"] == 3 and now["state"] == "ready"
    said = practice("daemon", "status")
    assert f"pid {started['pid']}, ready, 3 grading(s)" in said.stdout and "15 idle minutes" in said.stdout
    assert "正在运行" in practice("daemon", "status", "--lang", "zh").stdout

    stopped = practice("daemon", "stop")
    assert f"Stopped the background judge (pid {started['pid']})" in stopped.stdout
    assert not alive(started["pid"]) and not (practice.folder / SOCKET_NAME).exists()
    assert "No background judge is running" in practice("daemon", "status").stdout
    assert "No background judge is running" in practice("daemon", "stop").stdout


def test_the_daemon_folder_and_socket_are_private(practice):
    practice("add-one", str(practice.oversize))
    wait_until(practice.status, 60, "the daemon answers")
    assert practice.folder.stat().st_mode & 0o777 == 0o700
    assert (practice.folder / SOCKET_NAME).stat().st_mode & 0o777 == 0o600
    assert (practice.folder / LOG_NAME).stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("how", ["--no-daemon", "PRACTICE_DAEMON=0", "--sandbox none"])
def test_the_daemon_can_be_bypassed(practice, how):
    args, env = ["add-one", str(practice.oversize)], {}
    if how.startswith("--"):
        args += how.split()
    else:
        env = dict([how.split("=")])
    result = practice(*args, **env)
    assert result.returncode == 1 and "LOAD_ERROR" in result.stdout
    assert "background judge" not in result.stderr
    assert not practice.folder.exists()  # never started, never looked for


@pytest.mark.parametrize("variable, value", [("PRACTICE_DAEMON_IDLE_SECONDS", "soon"),
                                             ("PRACTICE_DAEMON_SILENCE_SECONDS", "-1"), ("PRACTICE_DAEMON", "maybe")])
def test_a_bad_setting_is_one_line_naming_its_variable(practice, variable, value):
    for args in (["add-one", str(practice.oversize)], ["daemon", "status"]):
        result = practice(*args, **{variable: value})
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and result.stdout == "" and len(lines) == 1, result.stderr
        assert lines[0].startswith(f"error: {variable}: ") and f"'{value}'" in lines[0]


def test_a_daemon_of_other_code_is_replaced(tmp_path, fake_course):
    """An edit of the judge's code (or an upgrade: the fingerprint covers cli/, judge/, sandbox/, the interpreter
    and torch's version) makes the running daemon a stranger: the next grading stops it and starts another."""
    code = tmp_path / "code"
    for package in ("cli", "judge", "sandbox", "web"):
        shutil.copytree(ROOT / package, code / package,
                        ignore=shutil.ignore_patterns("__pycache__", "node_modules", "static", "templates"))
    practice = Practice(tmp_path, fake_course, root=code)
    try:
        assert STARTING in practice("add-one", str(practice.oversize)).stderr
        first = wait_until(practice.status, 60, "the first daemon answers")
        assert first["current"]
        with (code / "judge" / "grading.py").open("a") as handle:
            handle.write("\n# edited\n")
        assert practice.status()["current"] is False
        assert "other code" in practice("daemon", "status").stdout
        again = practice("add-one", str(practice.oversize))
        assert again.returncode == 1 and STARTING in again.stderr  # graded fresh, a daemon of this code started
        wait_until(lambda: not alive(first["pid"]), 30, "the first daemon is gone")
        second = wait_until(practice.status, 60, "the second daemon answers")
        assert second["pid"] != first["pid"] and second["current"]
    finally:
        stop_all(practice.settings)


def test_the_idle_timeout_stops_it(practice):
    result = practice("add-one", str(practice.oversize), PRACTICE_DAEMON_IDLE_SECONDS="1")
    assert "after 0.0166667 idle minutes" in result.stderr
    wait_until(lambda: "idle for" in practice.log(), 60, "the daemon says it is idle")
    wait_until(lambda: not lock_held(practice.folder), 30, "the daemon has exited")
    assert not (practice.folder / SOCKET_NAME).exists()
    assert practice.status() is None


def test_a_stale_socket_is_replaced(practice):
    practice.folder.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(practice.folder / SOCKET_NAME))  # bound, never listening: a daemon that died
    stale.close()
    assert practice.status() is None
    result = practice("add-one", str(practice.oversize))
    assert result.returncode == 1 and STARTING in result.stderr
    assert wait_until(practice.status, 60, "the new daemon answers")["current"]


def test_a_folder_others_can_enter_is_not_used(practice):
    practice.folder.mkdir()
    practice.folder.chmod(0o755)
    result = practice("add-one", str(practice.oversize))
    assert result.returncode == 1 and "LOAD_ERROR" in result.stdout
    assert "The background judge is not used" in result.stderr and "chmod 700" in result.stderr
    assert not (practice.folder / SOCKET_NAME).exists()


def ask_as(uid: int, path: Path) -> dict:
    """What the daemon at `path` says to a forked child that became `uid` (that user may not read this Python)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: socket calls only, then _exit
        code = 1
        try:
            os.setgid(uid)
            os.setuid(uid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(30)
                sock.connect(str(path))  # refused at once: before it reads a request, it answers and closes
                os.write(write, sock.recv(1 << 16))
            code = 0
        except BaseException as exc:  # noqa: BLE001 - said to the parent
            os.write(write, repr(exc).encode())
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        said = answer.read()
    assert os.waitpid(pid, 0)[1] == 0, said
    return json.loads(said)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another user")
def test_another_user_is_refused(tmp_path, fake_course):
    reachable = Path(tempfile.mkdtemp(prefix="practice-daemon-test-"))  # pytest's own folders are closed to others
    reachable.chmod(0o711)
    practice = Practice(tmp_path, fake_course, folder=reachable / "daemon")
    try:
        practice("add-one", str(practice.oversize))
        wait_until(practice.status, 60, "the daemon answers")
        practice.folder.chmod(0o711)  # let another user reach the socket: the daemon itself must refuse
        (practice.folder / SOCKET_NAME).chmod(0o666)
        assert ask_as(65534, practice.folder / SOCKET_NAME) == {"op": "refused", "reason": "uid"}
        assert "refused a connection of uid 65534" in practice.log()
    finally:
        stop_all(practice.settings)
        shutil.rmtree(reachable, ignore_errors=True)


FAKE_DAEMON = """
import socket, sys, time
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.bind(sys.argv[1])
sock.listen()
print("listening", flush=True)
while True:
    conn, _ = sock.accept()
    conn.recv(1 << 20)
    if sys.argv[2] == "garbage":
        conn.sendall(b'{"op": "report", "report": {"verdict": "ACCEPTED", "exercise_id": 3}}\\n')
    elif sys.argv[2] == "hung":
        time.sleep(3600)
    conn.close()
"""


@pytest.mark.parametrize("mode, reason", [("crash", "it closed the connection"),
                                          ("garbage", "its answer was malformed"),
                                          ("hung", "it did not answer for 1 s")])
def test_a_failing_daemon_costs_a_note_and_a_fresh_grading(practice, mode, reason):
    practice.folder.mkdir(mode=0o700)
    fake = subprocess.Popen([sys.executable, "-I", "-c", FAKE_DAEMON, str(practice.folder / SOCKET_NAME), mode],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert fake.stdout is not None and fake.stdout.readline() == "listening\n"
        result = practice("add-one", str(practice.oversize), PRACTICE_DAEMON_SILENCE_SECONDS="1")
        assert result.returncode == 1 and "LOAD_ERROR" in result.stdout  # graded here, never the daemon's verdict
        assert f"The background judge failed ({reason}); your file was graded in fresh processes" in result.stderr
        if mode == "hung":  # ended, so that the next grading starts a daemon that answers
            assert fake.wait(timeout=30) == -signal.SIGTERM
    finally:
        fake.kill()
        fake.wait()


@pytest.mark.parametrize("tier", ["gpu", "../cpu", 3, None])
def test_a_grade_request_naming_an_unknown_tier_is_refused_before_anything_runs(tmp_path, tier):
    from cli.daemon_protocol import VERSION
    from cli.daemon_server import Daemon

    server = Daemon(tmp_path, DaemonSettings(dir=tmp_path))
    here, there = socket.socketpair()
    with here, there:
        server.grade(there, {"op": "grade", "version": VERSION, "fingerprint": server.fingerprint, "exercise": "x",
                             "source": "", "filename": "a.py", "stop_after_first_failure": False, "tier": tier})
        answer = json.loads(here.recv(65536).decode().splitlines()[0])
    assert answer == {"op": "error", "message": "malformed request: tier"} and server.gradings == 0
