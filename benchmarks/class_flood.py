"""A class server that no single client can stall: the requests of everyone else, beside the same requests with no
flood, in one run.

    python benchmarks/class_flood.py [--runs 50] [--share 20] [--hold 2] [--probes 20] [--seconds 10]
                                     [--submissions 100] [--grading-seconds 0.5]
    python benchmarks/class_flood.py --small   # the suite's mode: seconds, the stand-in runs

1. Playground runs: `--runs` anonymous (cookie-less) `POST /api/playground` from one client address; half of the
   clients keep their connection waiting for the answer, the other half drop it after `--drop-after` s and send
   again, as the probe that found the stall did (44 runs each dropped after 2 s pushed /healthz, static files and
   pages from 0.1-0.4 s to ~35 s). Each run's file sleeps `--hold` s in its example calls, so it holds the slot.
   Meanwhile (over `--seconds`) another address's `/healthz`, a static file and a learner's page (with its
   cookie) are timed; the flood's status codes, their `Retry-After`, and the runs the server dropped because
   their client went away are printed. The runs are real (`run_playground` in sandbox `none`), or with `--stand-in-runs`
   (and `--small`) a stand-in that only sleeps: the web's part alone.
2. The grading queue: one address sends `--submissions` cookie-less submissions; another address's submission is
   still accepted (202) and graded to a verdict, timed against the same with no flood. The grader is a stand-in
   that takes `--grading-seconds` (tests/web/conftest.py's FakeGrader): the figures measure the queue's order and
   admission, not torch. `--share` (max_queued_per_address) applies to both parts.

Two addresses on one machine: every client connects from 127.0.0.1, which uvicorn trusts as a proxy
(`FORWARDED_ALLOW_IPS`, docs/security.md), so each says its address in `X-Forwarded-For`. The app is served by
uvicorn with `practice serve`'s options (web/server.py) in this process, on the fixture course, with one slot
(`workers = 1`). Figures are printed, never asserted; the run exits non-zero when a precondition fails (a probe
answered other than 200, the other address's submission refused or never graded).
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.web.conftest import CORRECT, FIXTURE_COURSE, FakeGrader  # noqa: E402
from tests.web.live import LiveServer  # noqa: E402

FLOOD, OTHER = "10.0.0.1", "10.0.0.2"  # the flooding address and everyone else's (X-Forwarded-For)
PROBES = ("/healthz", "/static/style.css", "/exercises/add-one")
SUBMIT = "/api/exercises/add-one/submissions"


class Failed(Exception):
    """A precondition of the benchmark is not met: the message says which."""


def held_run(hold: float) -> str:
    """A playground file whose example calls sleep `hold` s: it holds its slot, not the CPU."""
    return ("import time\n\nimport torch\n\n\ndef f(x):\n    return x + 1\n\n\ndef calls():\n"
            f"    time.sleep({hold})\n    return [(torch.ones(2),)]\n\n\n"
            "__practice__ = {\"function\": \"f\", \"calls\": \"calls\", \"inductor\": False}\n")


def stand_in_playground(hold: float):
    """judge.parent.playground.run_playground replaced by one that sleeps `hold` s and reports one clean call (no
    torch)."""
    import judge.parent.playground
    from judge.reports.i18n import T

    def stand_in(source, **kwargs):
        time.sleep(hold)
        return judge.parent.playground.PlaygroundReport(summary=T("stand-in run: {calls} call(s)", calls=1))

    judge.parent.playground.run_playground = stand_in


def figures(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{name}: median {statistics.median(times) * 1000:8.1f} ms, p95 {p95 * 1000:8.1f} ms ({len(times)} requests)"


def probe(client: httpx.Client, count: int, seconds: float = 0.0) -> dict[str, list[float]]:
    """Seconds of `count` rounds of sequential GETs of each of PROBES, the rounds spread over `seconds`."""
    times: dict[str, list[float]] = {path: [] for path in PROBES}
    start = time.monotonic()
    for i in range(count):
        time.sleep(max(0.0, start + i * seconds / count - time.monotonic()))
        for path in PROBES:
            started = time.perf_counter()
            response = client.get(path)
            times[path].append(time.perf_counter() - started)
            if response.status_code != 200:
                raise Failed(f"GET {path} answered {response.status_code}: {response.text[:300]}")
    return times


def raw_post(port: int, path: str, body: bytes, address: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Forwarded-For: "
                 f"{address}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    return sock


def answer(sock: socket.socket, deadline: float, stop: threading.Event) -> tuple[str, str, str] | None:
    """(status code, Retry-After or "-", the start of a refusal's detail) of the answer on `sock`, or None when
    `deadline` or `stop` came first."""
    data = b""
    sock.settimeout(0.2)
    while b"\r\n\r\n" not in data:
        if stop.is_set() or time.monotonic() > deadline:
            return None
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        data += chunk
    head_bytes, _, body = data.partition(b"\r\n\r\n")
    head = head_bytes.decode("latin-1").split("\r\n")
    status = head[0].split(" ")[1] if head and " " in head[0] else "closed"
    retry = next((line.split(":", 1)[1].strip() for line in head[1:] if line.lower().startswith("retry-after:")), "-")
    detail = ""
    if status != "200":
        try:
            sock.settimeout(2)
            while chunk := sock.recv(65536):  # Connection: close: the body ends with the connection
                body += chunk
            detail = str(json.loads(body).get("detail", ""))[:40] + "..."
        except (OSError, ValueError, AttributeError):
            detail = "(no JSON detail)"
    return status, retry, detail


def flood_client(port: int, body: bytes, drop_after: float | None, stop: threading.Event, answers: Counter,
                 lock: threading.Lock) -> None:
    """One flooding client: send a run and wait for its answer; a dropping client closes the connection after
    `drop_after` s and sends again (after an answer too, 0.2 s later), until `stop`."""
    while not stop.is_set():
        with raw_post(port, "/api/playground", body, FLOOD) as sock:
            got = answer(sock, time.monotonic() + (drop_after if drop_after is not None else 3600), stop)
        with lock:
            gone = f"the client dropped it after {drop_after:g} s" if drop_after is not None else "unanswered at end"
            answers[got if got is not None else ("gone", "-", gone)] += 1
        if drop_after is None:
            return  # a holding client sends once
        if got is not None:
            stop.wait(0.2)


def playground_flood(args, data: Path) -> None:
    from web.app import create_app
    from web.settings import Settings

    settings = Settings(data_dir=data / "playground", exercises_dir=FIXTURE_COURSE, sandbox="none",
                        allow_unsandboxed=True, workers=1, secret_key="bench", queue="embedded",
                        max_queued_per_address=args.share)
    print(f"1. playground: {args.runs} anonymous runs from {FLOOD} ({args.runs - args.runs // 2} held, "
          f"{args.runs // 2} dropped after {args.drop_after:g} s and sent again), each holding its slot "
          f"{args.hold:g} s ({'stand-in runs' if args.stand_in_runs else 'real runs, sandbox none'}); workers = 1, "
          f"per-address share {settings.queued_per_address_limit()}, "
          f"{settings.submissions_per_minute_per_address} runs a minute per address")
    app = create_app(settings)
    body = httpx.Request("POST", "/", json={"source": held_run(args.hold)}).content
    with LiveServer(app, settings) as server, httpx.Client(base_url=server.url, timeout=120,
                                                           headers={"X-Forwarded-For": OTHER}) as learner:
        learner.get("/exercises/add-one").raise_for_status()  # the learner's cookie
        if "practice_learner" not in learner.cookies:
            raise Failed("GET /exercises/add-one gave no learner cookie")
        if not args.stand_in_runs:  # a first run starts the sandbox's processes: not part of the flood
            own_run(learner, 0)
        idle = probe(learner, args.probes)
        idle_run = own_run(learner, args.hold)
        admission = app.state.admission
        stop, answers, lock = threading.Event(), Counter(), threading.Lock()
        clients = [threading.Thread(target=flood_client, daemon=True,
                                    args=(server.port, body, args.drop_after if i % 2 else None, stop, answers, lock))
                   for i in range(args.runs)]
        for client in clients:
            client.start()
        deadline = time.monotonic() + 60
        while admission.waiting(FLOOD) < min(args.share, args.runs - 1):
            if time.monotonic() > deadline:
                raise Failed(f"the flood never filled its share: {admission.waiting(FLOOD)} runs waiting after 60 s")
            time.sleep(0.01)
        started = time.perf_counter()
        loaded = probe(learner, args.probes, args.seconds)
        elapsed = time.perf_counter() - started
        waiting, dropped = admission.waiting(FLOOD), admission.dropped
        loaded_run = own_run(learner, args.hold)  # slots go round-robin between addresses: the next one is ours
        stop.set()
        for client in clients:
            client.join(30)
        own_run(learner, 0)  # the flood's waiting runs were dropped with their clients: this one waits only for the
        # run in the slot, so the server stops with none running
    for path in PROBES:
        print(figures(f"   {path:20} no flood", idle[path]))
        print(figures(f"   {path:20} flooded ", loaded[path]))
    print(f"   {OTHER}'s own playground run ({args.hold:g} s held): no flood {idle_run:6.2f} s, flooded "
          f"{loaded_run:6.2f} s")
    print(f"   the flooded probes took {elapsed:.1f} s; then {waiting} of the flood's runs were waiting for the slot")
    print("   the flood's answers:")
    print_answers(answers)
    print(f"   runs the server dropped because their client went away: {dropped} while probing, "
          f"{admission.dropped} in all")


def print_answers(answers: Counter) -> None:
    """One line per (status, what the answer said), with the range of its Retry-After values."""
    lines: dict[tuple[str, str], list] = {}
    for (status, retry, detail), count in answers.items():
        line = lines.setdefault((status, detail), [0, set()])
        line[0] += count
        if retry != "-":
            line[1].add(int(retry))
    for (status, detail), (count, retries) in sorted(lines.items()):
        retry = (f"{min(retries)}-{max(retries)} s" if len(retries) > 1 else f"{min(retries)} s") if retries else "-"
        print(f"     {status:>4}  Retry-After {retry:>8}  {detail:44}: {count}")


def own_run(client: httpx.Client, hold: float) -> float:
    """Seconds of one playground run of the learner of `client`, its file holding the slot `hold` s."""
    started = time.perf_counter()
    response = client.post("/api/playground", json={"source": held_run(hold)})
    if response.status_code != 200:
        raise Failed(f"the other address's playground run answered {response.status_code}: {response.text[:300]}")
    return time.perf_counter() - started


def time_to_verdict(client: httpx.Client, timeout: float) -> tuple[float, str]:
    started = time.perf_counter()
    created = client.post(SUBMIT, json={"source": CORRECT})
    if created.status_code != 202:
        raise Failed(f"the other address's submission was refused: {created.status_code} {created.text[:300]}")
    url = created.json()["url"]
    while time.perf_counter() - started < timeout:
        body = client.get(url).json()
        if body["status"] == "done":
            return time.perf_counter() - started, body["report"]["verdict"]
        time.sleep(0.02)
    raise Failed(f"the other address's submission had no verdict after {timeout:g} s")


class SlowGrader(FakeGrader):
    """FakeGrader that takes `seconds` more per grading."""

    def __init__(self, seconds: float):
        super().__init__()
        self.seconds = seconds

    def __call__(self, submission, publish):
        time.sleep(self.seconds)
        return super().__call__(submission, publish)


def queue_flood(args, data: Path) -> None:
    from web.app import create_app
    from web.settings import Settings

    settings = Settings(data_dir=data / "queue", exercises_dir=FIXTURE_COURSE, sandbox="none", allow_unsandboxed=True,
                        workers=1, secret_key="bench", queue="embedded", max_queued_per_address=args.share)
    print(f"2. grading queue: {args.submissions} anonymous submissions from {FLOOD}, one from {OTHER}; stand-in "
          f"grader {args.grading_seconds:g} s a grading, workers = 1, per-address share "
          f"{settings.queued_per_address_limit()} of {settings.max_queued_submissions}, "
          f"{settings.submissions_per_minute_per_address} a minute per address")
    app = create_app(settings, grade=SlowGrader(args.grading_seconds))
    timeout = args.grading_seconds * 20 + 60
    with LiveServer(app, settings) as server, \
            httpx.Client(base_url=server.url, timeout=60, headers={"X-Forwarded-For": OTHER}) as other, \
            httpx.Client(base_url=server.url, timeout=60, headers={"X-Forwarded-For": FLOOD}) as flood:
        idle, verdict = time_to_verdict(other, timeout)
        answers: Counter = Counter()
        for _ in range(args.submissions):
            flood.cookies.clear()  # each one a new learner
            response = flood.post(SUBMIT, json={"source": CORRECT})
            reason = response.json().get("detail", "")[:40] + "..." if response.status_code != 202 else ""
            answers[(str(response.status_code), response.headers.get("retry-after", "-"), reason)] += 1
        queued = app.state.store.count("queued")
        loaded, loaded_verdict = time_to_verdict(other, timeout)
    print(f"   the flood's answers: {sum(n for (s, _, _), n in answers.items() if s == '202')} accepted, "
          f"{sum(n for (s, _, _), n in answers.items() if s != '202')} refused; {queued} waiting when the other "
          f"address submitted")
    print_answers(answers)
    print(f"   other address, time to verdict: no flood {idle:6.2f} s ({verdict}), flooded {loaded:6.2f} s "
          f"({loaded_verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="flooding playground clients")
    parser.add_argument("--share", type=int, default=20, help="max_queued_per_address (what one address may have "
                                                              "waiting)")
    parser.add_argument("--hold", type=float, default=2.0, help="seconds each run holds its slot")
    parser.add_argument("--drop-after", type=float, default=2.0)
    parser.add_argument("--probes", type=int, default=20, help="rounds of the three probes, each way")
    parser.add_argument("--seconds", type=float, default=10.0, help="the flooded probes are spread over this long")
    parser.add_argument("--stand-in-runs", action="store_true", help="runs that only sleep (no torch)")
    parser.add_argument("--submissions", type=int, default=100, help="the queue flood's submissions")
    parser.add_argument("--grading-seconds", type=float, default=0.5)
    parser.add_argument("--small", action="store_true", help="10 runs, 5 probes, stand-in runs: for the test suite")
    args = parser.parse_args()
    if args.small:
        args.runs, args.share, args.probes, args.seconds, args.hold, args.stand_in_runs = 10, 4, 5, 4.0, 1.0, True
        args.submissions, args.grading_seconds = 20, 0.2
    if args.stand_in_runs:
        stand_in_playground(args.hold)
    with tempfile.TemporaryDirectory() as data:
        try:
            playground_flood(args, Path(data))
            queue_flood(args, Path(data))
        except Failed as exc:
            sys.exit(f"class_flood: {exc}")
    print("CLASS FLOOD OK")


if __name__ == "__main__":
    main()
