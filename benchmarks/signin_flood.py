"""/healthz and a static file while anonymous clients hammer POST /signin (real Argon2), beside the same requests
on an idle server.

    python benchmarks/signin_flood.py [--clients 8] [--seconds 20] [--probes 40]   # --small: the suite's mode

The app is served by uvicorn with `practice serve`'s options (web/server.py) in this process, on the fixture
course; each flooding client loops sign-ins with an unknown name and a wrong password (each one verifies an
Argon2 hash at the default cost). Before the hashes moved off the event loop (web/offload.py), eight such
clients pushed /healthz to a 9.4 s median. The figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.web.conftest import FIXTURE_COURSE  # noqa: E402
from tests.web.live import LiveServer  # noqa: E402


def probe(base: str, path: str, count: int) -> list[float]:
    """Seconds of `count` sequential GETs of `path`."""
    times = []
    with httpx.Client(base_url=base, timeout=120) as client:
        for _ in range(count):
            started = time.perf_counter()
            client.get(path).raise_for_status()
            times.append(time.perf_counter() - started)
    return times


def flood(base: str, stop: threading.Event, done: list[int]) -> None:
    with httpx.Client(base_url=base, timeout=120) as client:
        while not stop.is_set():
            response = client.post("/signin", data={"username": "nobody", "password": "wrong password"})
            assert response.status_code == 401, response.status_code
            done.append(1)


def figures(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{name}: median {statistics.median(times) * 1000:7.1f} ms, p95 {p95 * 1000:7.1f} ms ({len(times)} requests)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0, help="longest flood (the probes end it sooner)")
    parser.add_argument("--probes", type=int, default=40)
    parser.add_argument("--small", action="store_true", help="2 clients, 5 probes: seconds, for the test suite")
    args = parser.parse_args()
    if args.small:
        args.clients, args.probes, args.seconds = 2, 5, 10.0
    from web.app import create_app
    from web.settings import Settings

    with tempfile.TemporaryDirectory() as data:
        settings = Settings(data_dir=Path(data), exercises_dir=FIXTURE_COURSE, sandbox="none", allow_unsandboxed=True,
                            workers=1, secret_key="bench", queue="embedded")
        print(f"password_hashes_at_once = {settings.password_hashes_at_once}, {args.clients} flooding clients")
        with LiveServer(create_app(settings), settings) as server:
            idle = {path: probe(server.url, path, args.probes) for path in ("/healthz", "/static/style.css")}
            stop, done = threading.Event(), []
            threads = [threading.Thread(target=flood, args=(server.url, stop, done), daemon=True)
                       for _ in range(args.clients)]
            for thread in threads:
                thread.start()
            while not done:  # the first sign-in is through: the flood is running
                time.sleep(0.01)
            started = time.perf_counter()
            loaded = {path: probe(server.url, path, args.probes) for path in ("/healthz", "/static/style.css")}
            stop.set()
            elapsed = time.perf_counter() - started
            for thread in threads:
                thread.join(args.seconds + 120)
    for path in idle:
        print(figures(f"{path:18} idle    ", idle[path]))
        print(figures(f"{path:18} flooded ", loaded[path]))
    print(f"sign-ins answered during the flooded probes: {len(done)} in {elapsed:.1f} s "
          f"({len(done) / max(elapsed, 1e-9):.1f}/s)")


if __name__ == "__main__":
    main()
