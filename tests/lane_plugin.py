"""A pytest plugin: puts every test in its lane (tests/lanes.py), runs the lanes asked for, and holds each lane to a
CPU-seconds budget (tests/lane_budgets.toml).

- `--lane NAME` (repeatable, or a comma list; `quick` is inprocess+warm, `all` every lane) keeps only those lanes'
  tests; without it every lane runs. Each test gets the marker `lane_<name>` (`-m lane_warm` works too).
- Each test's CPU is measured in the process that runs it (an xdist worker): its own CPU time, what its reaped
  child processes used (`RUSAGE_CHILDREN`) and what its live descendants used so far (/proc: warm graders, the
  forks they reaped), over setup, call and teardown. A Docker container's processes are the Docker daemon's
  children, so they are not counted; work done in the background (a thread, a warm pool refilled) is the CPU of the
  test that runs meanwhile, in that test's lane. Each report carries `("lane", name)` and `("cpu_s", seconds)` in its
  `user_properties`, so the controller sums them per lane.
- At the end the run prints each lane's tests, CPU-s and budget, its heaviest tests, and a line per lane to paste into
  tests/lane_budgets.toml; a lane over its budget fails the run (exit status 1) with a message naming it.
  `--lane-report FILE` also writes every test's lane, CPU-s, worker and wall span (start, stop: epoch seconds) as
  JSON, to see where the workers waited.
- Budgets are CPU-seconds of the machine that set them. The reporting process times a fixed piece of Python work
  (`calibrate`) at the start and at the end of the run; where even the faster of the two (the other may have met a
  burst of other work) is slower than the `[machine] calibration_s` kept beside the budgets, every budget grows by
  that ratio (never shrinks), and the summary says so.
- The summary also says what the whole machine did over the run (/proc/stat: busy and idle core-seconds) beside what
  the lanes counted: the difference is what no test process reaps (Docker's containers, PostgreSQL, the browsers,
  background judges and servers started detached) plus collection, and the idle share says whether more workers
  could help (a machine that is never idle is bound by its CPU, not by waiting).
"""

from __future__ import annotations

import inspect
import json
import json.decoder
import os
import resource
import time
from datetime import date
from pathlib import Path

import pytest
import tomllib

from tests.lanes import GROUPS, LANES, NoLane, expand, lane_of

BUDGETS = Path(__file__).with_name("lane_budgets.toml")
HEADROOM = 1.5  # a budget suggested from a run: its CPU-s times this, rounded up to 10
CALIBRATION_RUNS = 5  # the fastest of these is the machine's figure: slower ones met other work
_LANE = pytest.StashKey[str]()
_CPU = pytest.StashKey[float]()
_TICK = os.sysconf("SC_CLK_TCK")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lanes", "the suite's lanes (tests/lanes.py) and their CPU budgets")
    group.addoption("--lane", action="append", default=[], metavar="NAME",
                    help=f"run only this lane's tests (repeatable, or A,B): {', '.join(LANES)}; "
                         + ", ".join(f"{g} = {'+'.join(m)}" for g, m in GROUPS.items()) + ". Default: all")
    group.addoption("--lane-budgets", default=str(BUDGETS), metavar="FILE",
                    help="the lanes' CPU-seconds budgets (TOML: lane = seconds); 'off' checks none")
    group.addoption("--lane-report", default=None, metavar="FILE", help="write each test's lane and CPU-s as JSON")


def pytest_configure(config: pytest.Config) -> None:
    for name, lane in LANES.items():
        config.addinivalue_line("markers", f"lane_{name}: in the {name} lane (tests/lanes.py): {lane.what}")
    try:
        config.stash[_LANE] = ",".join(expand(config.getoption("lane") or ["all"]))
    except ValueError as exc:
        raise pytest.UsageError(f"--lane: {exc}") from None
    if not hasattr(config, "workerinput"):  # the process that reports: xdist's controller, or the only one
        config.pluginmanager.register(LaneTotals(config), "lane-totals")


@pytest.hookimpl(tryfirst=True)  # before -m and -k, so that `-m lane_warm` works
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = set(config.stash[_LANE].split(","))
    keep, drop = [], []
    for item in items:
        params = item.callspec.params if hasattr(item, "callspec") else {}
        try:
            lane = lane_of(item.nodeid, {m.name for m in item.iter_markers()}, set(item.fixturenames), params)
        except NoLane:
            keep.append(item)  # whatever --lane says: it fails in setup, saying where its rule goes
            continue
        item.stash[_LANE] = lane
        item.add_marker(f"lane_{lane}")
        (keep if lane in wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class TreeCpu:
    """CPU-seconds used so far by this process and every process it started, read at each call.

    Its own time and its reaped children's (`RUSAGE_CHILDREN`) come from the kernel; a live descendant's (its own
    and its reaped children's, /proc/PID/stat) is counted as it grows. A descendant that is gone was either reaped
    by its parent, whose children's time then grew by what was counted already (that much is taken back), or left
    without being reaped into this tree (a sandbox's process killed, a daemon reparented to init), and then what
    was counted of it stays counted."""

    def __init__(self) -> None:
        self.seen: dict[tuple[int, int], tuple[float, float, int]] = {}  # (pid, start) -> (total, children's, ppid)
        self.reaped = 0.0
        self.counted = 0.0

    def __call__(self) -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        reaped = usage.ru_utime + usage.ru_stime
        live = self._descendants()
        by_pid = {key[0]: key for key in live}
        grown = 0.0
        gone: dict[int, float] = {}  # parent pid -> what was counted of its children that are gone
        for key, (total, _, _) in live.items():
            grown += total - self.seen.get(key, (0.0, 0.0, 0))[0]
        for key, (total, _, ppid) in self.seen.items():
            if key not in live:
                gone[ppid] = gone.get(ppid, 0.0) + total
        for ppid, counted in gone.items():
            if ppid == os.getpid():
                absorbed = reaped - self.reaped
            elif ppid in by_pid and by_pid[ppid] in self.seen:
                absorbed = live[by_pid[ppid]][1] - self.seen[by_pid[ppid]][1]
            else:
                absorbed = 0.0
            grown -= min(counted, max(0.0, absorbed))
        self.counted += grown
        self.seen, self.reaped = live, reaped
        return time.process_time() + reaped + self.counted

    def _descendants(self) -> dict[tuple[int, int], tuple[float, float, int]]:
        found: dict[tuple[int, int], tuple[float, float, int]] = {}
        pending = [os.getpid()]
        while pending:
            pid = pending.pop()
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for task in tasks:
                try:  # a thread may end while it is read: its children are then listed under another thread
                    kids = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
                except OSError:
                    continue
                for kid in map(int, kids):
                    read = _stat(kid)
                    if read is not None and read[0] not in found:
                        found[read[0]] = read[1]
                        pending.append(kid)
        # The children files are not reliable while processes come and go: one seen before and alive still is ours.
        for key in self.seen.keys() - found.keys():
            read = _stat(key[0])
            if read is not None and read[0] == key:
                found[key] = read[1]
        return found


def _stat(pid: int) -> tuple[tuple[int, int], tuple[float, float, int]] | None:
    """(pid, start time), (CPU-s of it and its reaped children, of its reaped children, its parent's pid)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # after the name: state ppid ... utime stime cutime cstime (fields 14-17 of proc(5)) ... starttime (22)
    fields = stat[stat.rindex(")") + 2:].split()
    own, children = (int(fields[11]) + int(fields[12])) / _TICK, (int(fields[13]) + int(fields[14])) / _TICK
    return (pid, int(fields[19])), (own + children, children, int(fields[1]))


tree_cpu = TreeCpu()  # one per process: an xdist worker measures the tests it runs


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    return (yield from _measured(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    return (yield from _measured(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item):
    return (yield from _measured(item))


@pytest.hookimpl(tryfirst=True, specname="pytest_runtest_setup")
def pytest_lanes_refuse_a_test_in_no_lane(item: pytest.Item) -> None:  # "pytest_": pytest reads no other name
    if _LANE not in item.stash:  # an error, not an exception: xdist's workers would lose the message of a UsageError
        pytest.fail(f"{item.nodeid} is in no lane: add a rule for it to RULES in tests/lanes.py (lanes: "
                    f"{', '.join(LANES)}; the last rules name the folders whose tests default to 'inprocess')",
                    pytrace=False)


def _measured(item: pytest.Item):
    start = tree_cpu()
    try:
        return (yield)
    finally:
        item.stash[_CPU] = tree_cpu() - start


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = yield
    if _LANE in item.stash:
        report.user_properties = [*report.user_properties, ("lane", item.stash[_LANE]),
                                  ("cpu_s", round(item.stash.get(_CPU, 0.0), 3))]
    return report


def machine_core_seconds(path: str = "/proc/stat") -> tuple[float, float] | None:
    """(busy, idle) core-seconds of every CPU since boot (idle counts I/O waits), or None where /proc has no stat."""
    try:
        with open(path, encoding="ascii") as fh:
            fields = [int(v) for v in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5:
        return None
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / _TICK, idle / _TICK


def _calibration_work() -> int:
    """A fixed piece of what the suite does most: compiling Python source and running plain Python over dicts."""
    source = inspect.getsource(json.decoder)
    for _ in range(8):
        compile(source, "calibration", "exec")
    table = {str(i): (i * 7) % 13 for i in range(150_000)}
    return len(sorted(table.items(), key=lambda kv: (kv[1], kv[0])))


def calibrate(runs: int = CALIBRATION_RUNS) -> float:
    """This machine's CPU-seconds for `_calibration_work`: the fastest of `runs`."""
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        _calibration_work()
        best = min(best, time.process_time() - start)
    return best


class LaneTotals:
    """The reporting process's sums: each lane's tests and CPU-s, checked against the budgets at the end."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.cpu: dict[str, float] = {}
        self.tests: dict[str, set[str]] = {}
        self.per_test: dict[str, float] = {}
        self.spans: dict[str, tuple[str, float, float]] = {}  # test -> (worker, first start, last stop): the report
        self.lane_of_test: dict[str, str] = {}
        self.over: list[str] = []
        self.started = time.monotonic()
        self.scale = 1.0
        self.calibrations: list[float] = []
        self.machine_at_start = machine_core_seconds()

    @pytest.hookimpl(tryfirst=True)  # before xdist's starts the workers
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Only where there is a figure to compare with and tests will run (not --collect-only, not --markers).
        if self.reference() and not self.config.option.collectonly:
            self.calibrations.append(calibrate())

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(p for p in report.user_properties if isinstance(p, tuple) and len(p) == 2)
        if "lane" not in props:
            return
        lane, cpu = props["lane"], float(props["cpu_s"])
        self.cpu[lane] = self.cpu.get(lane, 0.0) + cpu
        self.tests.setdefault(lane, set()).add(report.nodeid)
        self.per_test[report.nodeid] = self.per_test.get(report.nodeid, 0.0) + cpu
        self.lane_of_test[report.nodeid] = lane
        node = getattr(report, "node", None)  # xdist's worker, on its controller
        worker = getattr(getattr(node, "gateway", None), "id", "main")
        _, start, stop = self.spans.get(report.nodeid, (worker, report.start, report.stop))
        self.spans[report.nodeid] = (worker, min(start, report.start), max(stop, report.stop))

    def _kept(self) -> tuple[str, dict]:
        """Where the budgets are kept (or "off") and that file's tables as read."""
        where = self.config.getoption("lane_budgets")
        if where == "off" or not Path(where).is_file():  # a missing file: every lane is reported as having no budget
            return where, {}
        with open(where, "rb") as fh:
            return where, tomllib.load(fh)

    def budgets(self) -> tuple[str, dict[str, float]]:
        """Where the budgets are kept and each lane's budget, grown by `scale`."""
        where, kept = self._kept()
        return where, {k: float(v) * self.scale for k, v in kept.items() if not isinstance(v, dict)}

    def reference(self) -> float | None:
        """The calibration of the machine that set the budgets (`[machine] calibration_s`), if the file has one."""
        seconds = self._kept()[1].get("machine", {}).get("calibration_s")
        return None if seconds is None else float(seconds)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        reference = self.reference()
        if reference and self.calibrations:
            self.calibrations.append(calibrate())
            self.scale = max(1.0, min(self.calibrations) / reference)
        where, budgets = self.budgets()
        for lane in (name for name in LANES if name in self.cpu):
            budget = budgets.get(lane)
            if where != "off" and budget is None:
                self.over.append(f"lane {lane} has no budget in {where}: add `{lane} = SECONDS` "
                                 f"(it used {self.cpu[lane]:.1f} CPU-s)")
            elif budget is not None and self.cpu[lane] > budget:
                self.over.append(f"lane {lane} used {self.cpu[lane]:.1f} CPU-s, over its budget of {budget:.4g} CPU-s "
                                 f"({where}{self._scaled()}): move its heaviest tests to a heavier lane in "
                                 "tests/lanes.py, or raise the budget, saying why, in that file")
        if self.over and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        report = self.config.getoption("lane_report")
        if report:
            Path(report).write_text(json.dumps({n: {"lane": self.lane_of_test[n], "cpu_s": round(s, 3),
                                                    "worker": self.spans[n][0], "start": round(self.spans[n][1], 3),
                                                    "stop": round(self.spans[n][2], 3)}
                                               for n, s in self.per_test.items()}, indent=1), encoding="utf-8")

    def _scaled(self) -> str:
        return f", x {self.scale:.2f} for this machine's speed" if self.scale > 1 else ""

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.cpu:
            return
        tr = terminalreporter
        where, budgets = self.budgets()
        tr.section("lanes: CPU-seconds against budgets")
        for lane in (name for name in LANES if name in self.cpu):
            budget = budgets.get(lane)
            state = "no budget" if budget is None else ("OVER" if self.cpu[lane] > budget else "ok")
            tr.write_line(f"{lane:<10} {len(self.tests[lane]):>5} tests {self.cpu[lane]:>9.1f} CPU-s   budget "
                          f"{'-' if budget is None else format(budget, '.4g'):>6}   {state}")
            heavy = sorted((s, n) for n, s in self.per_test.items() if self.lane_of_test[n] == lane)[-3:]
            for seconds, nodeid in reversed(heavy):
                tr.write_line(f"{'':<12}{seconds:>7.1f}  {nodeid}")
        tr.write_line(f"(wall {time.monotonic() - self.started:.0f} s; collection and start-up are in no lane)")
        now = machine_core_seconds()
        if now and self.machine_at_start:
            busy, idle = (b - a for a, b in zip(self.machine_at_start, now))
            counted = sum(self.cpu.values())
            tr.write_line(f"machine over the run: {busy:.1f} core-s busy, {idle:.1f} idle ({os.cpu_count()} cores); "
                          f"the lanes counted {counted:.1f} CPU-s ({counted / busy:.0%} of the busy time)"
                          if busy > 0 else "machine over the run: no busy time measured")
        if self.calibrations:
            scaled = f"budgets x {self.scale:.2f}" if self.scale > 1 else "budgets as kept"
            tr.write_line(f"machine: calibration {min(self.calibrations):.4f} CPU-s (start and end: "
                          f"{', '.join(f'{c:.4f}' for c in self.calibrations)}) against {self.reference():.4f} when "
                          f"the budgets were set: {scaled}")
        tr.write_line(f"to refresh {where}, paste (measured x {HEADROOM}, rounded up to 10):")
        for lane in (name for name in LANES if name in self.cpu):
            seconds = self.cpu[lane]
            suggested = max(10, int(-(-seconds * HEADROOM // 10) * 10))
            tr.write_line(f"{lane} = {suggested}  # measured {seconds:.0f} CPU-s, {len(self.tests[lane])} tests, "
                          f"{date.today().isoformat()}, {os.cpu_count()} cores")
        if self.calibrations:
            tr.write_line(f"[machine]\ncalibration_s = {min(self.calibrations):.4f}  # this run's")
        for line in self.over:
            tr.write_line(f"LANE OVER BUDGET: {line}", red=True, bold=True)

