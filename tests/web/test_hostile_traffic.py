"""The server under hostile traffic (docs/security.md, "The web server under hostile traffic"): each test is one
finding of a probe as a hostile learner or an outsider, and failed before its fix."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.polling import wait_until
from tests.web.conftest import CORRECT, wait_done
from tests.web.live import LiveServer, read_all
from web.admission import address_key
from web.app import create_app
from web.offload import hash_slots
from web.sessions import LEARNER_COOKIE

SUBMIT = "/api/exercises/add-one/submissions"


# 1. Password hashing happens off the event loop, a bounded number at once.

def test_health_answers_while_sign_ins_are_hashing(settings, grader, monkeypatch):
    """Argon2 ran inside `async def` routes on the only event loop: while a sign-in hashed, nothing else was
    answered. Here every hash is held until the test lets it go: /healthz must answer meanwhile, and no more than
    `password_hashes_at_once` hashes may run, the others waiting for a slot."""
    settings.password_hashes_at_once = 2
    gate, lock, inside = threading.Event(), threading.Lock(), []
    entered = threading.Semaphore(0)

    def held_verify(stored_hash, password):
        with lock:
            inside.append(password)
        entered.release()
        gate.wait(30)
        return False

    monkeypatch.setattr("web.classes.verify_password", held_verify)
    app = create_app(settings, grade=grader)
    with LiveServer(app, settings) as server, ThreadPoolExecutor(4) as pool:
        sign_ins = [pool.submit(httpx.post, f"{server.url}/signin", data={"username": f"guess{i}", "password": "x" * 9},
                                timeout=60) for i in range(4)]
        try:
            assert entered.acquire(timeout=15) and entered.acquire(timeout=15), "two sign-ins should be hashing"
            wait_until(lambda: hash_slots(app).statistics().tasks_waiting == 2,
                       what="two sign-ins waiting for a slot", interval=0.01)
            health = httpx.get(f"{server.url}/healthz", timeout=15)
            assert health.status_code == 200 and health.json()["status"] == "ok"
            assert not gate.is_set() and len(inside) == 2  # answered while both hashes were still running
        finally:
            gate.set()
        assert [f.result().status_code for f in sign_ins] == [401] * 4
        assert len(inside) == 4


# 2. Submission limits that a free cookie does not sidestep, a capped queue, a fair order.

def cookieless_submit(client: TestClient):
    client.cookies.clear()  # a new learner each time: a cookie costs nothing
    return client.post(SUBMIT, json={"source": CORRECT})


def test_cookieless_flood_from_one_address_is_refused(settings, grader):
    """48 submissions without a cookie were all accepted (each one a new learner); one address now gets
    `submissions_per_minute_per_address`, whatever learners it claims to be."""
    settings.submissions_per_minute_per_address = 3
    app = create_app(settings, grade=grader)
    with TestClient(app, client=("10.0.0.1", 5000)) as flood:
        assert [cookieless_submit(flood).status_code for _ in range(3)] == [202] * 3
        refused = cookieless_submit(flood)
        assert refused.status_code == 429
        assert "from one address (10.0.0.1)" in refused.json()["detail"]
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        other = TestClient(app, client=("10.0.0.2", 5000))  # another address keeps its own budget
        assert cookieless_submit(other).status_code == 202


def test_a_full_queue_refuses_with_retry_after(settings, grader):
    """Nothing capped the queue; past `max_queued_submissions` waiting, a submission gets 429 and a retry time."""
    settings.max_queued_submissions = settings.max_queued_per_address = 2
    grader.gate.clear()
    with TestClient(create_app(settings, grade=grader)) as client:
        try:
            assert cookieless_submit(client).status_code == 202
            assert grader.started.wait(10)  # the one worker grades it: it no longer waits
            assert [cookieless_submit(client).status_code for _ in range(2)] == [202, 202]
            refused = cookieless_submit(client)
            assert refused.status_code == 429
            assert refused.json()["detail"] == "the grading queue is full (2 submissions waiting); try again in 30 s"
            assert refused.headers["retry-after"] == "30"
        finally:
            grader.gate.set()


def test_one_address_gets_only_its_share_of_the_queue(settings, grader):
    """One address could fill the whole queue within its per-minute budget and keep every other address at "queue
    full"; it now gets `max_queued_per_address` of it (by default a quarter)."""
    settings.max_queued_submissions = 8
    assert settings.queued_per_address_limit() == 2
    grader.gate.clear()
    app = create_app(settings, grade=grader)
    with TestClient(app, client=("10.0.0.1", 5000)) as flood:
        try:
            assert cookieless_submit(flood).status_code == 202
            assert grader.started.wait(10)  # graded now: no longer waiting
            assert [cookieless_submit(flood).status_code for _ in range(2)] == [202, 202]
            refused = cookieless_submit(flood)
            assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
            assert "from your address (10.0.0.1) are waiting already" in refused.json()["detail"]
            other = TestClient(app, client=("10.0.0.2", 5000))
            assert cookieless_submit(other).status_code == 202
        finally:
            grader.gate.set()


def test_a_flood_from_one_address_does_not_starve_another(settings, grader):
    """The embedded queue took submissions in arrival order: a learner behind a flood waited for all of it. It now
    takes addresses in turn: the learner from another address is graded after one more of the flood's."""
    grader.gate.clear()
    app = create_app(settings, grade=grader)
    with TestClient(app, client=("10.0.0.1", 5000)) as flood:
        try:
            ids = [cookieless_submit(flood).json()["id"]]
            assert grader.started.wait(10)
            ids += [cookieless_submit(flood).json()["id"] for _ in range(3)]
            honest = TestClient(app, client=("10.0.0.2", 5000))
            honest_id = honest.post(SUBMIT, json={"source": CORRECT}).json()["id"]
        finally:
            grader.gate.set()
        store = app.state.store
        wait_until(lambda: all(store.get(sid).status == "done" for sid in [*ids, honest_id]),
                   what="all graded", interval=0.01)
    assert grader.graded == [ids[0], ids[1], honest_id, ids[2], ids[3]]


# 3. A foreign cookie does not cost the learner their identity.

def test_a_cookie_the_stdlib_dislikes_keeps_the_learner(client):
    """`prefs={"theme":"dark"}` (another app on the same host) stopped the strict parser: the learner was taken for a
    new one and their cookie overwritten."""
    first = client.post(SUBMIT, json={"source": CORRECT}).json()["id"]
    wait_done(client, first)
    mine = client.cookies[LEARNER_COOKIE]
    client.cookies.clear()
    header = f'prefs={{"theme":"dark"}}; {LEARNER_COOKIE}={mine}; other=1'
    response = client.get("/api/exercises/add-one/submissions", headers={"cookie": header})
    assert [s["id"] for s in response.json()] == [first]
    assert not any(c.startswith(f"{LEARNER_COOKIE}=") for c in response.headers.get_list("set-cookie"))


# 4. Read deadlines and a connection limit in the server.

@pytest.fixture
def quick_deadlines(settings):
    settings.header_seconds, settings.body_seconds = 0.5, 0.5
    return settings


def test_slow_headers_get_408_and_the_connection_closed(quick_deadlines, grader):
    """uvicorn has no deadline for a request's headers: a client trickling them held its connection forever."""
    with LiveServer(create_app(quick_deadlines, grade=grader), quick_deadlines) as server, server.raw() as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        answer = read_all(sock)  # socket.timeout (15 s) if the server never closes
        assert answer.startswith(b"HTTP/1.1 408 ")
        assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 200  # a prompt client is served


def test_a_slow_body_gets_408_and_the_connection_closed(quick_deadlines, grader):
    with LiveServer(create_app(quick_deadlines, grade=grader), quick_deadlines) as server, server.raw() as sock:
        sock.sendall(b"POST " + SUBMIT.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"source\": ")
        assert read_all(sock).startswith(b"HTTP/1.1 408 ")
        assert grader.graded == [] and grader.started.is_set() is False


def test_the_deadlines_never_cut_a_slow_answer(quick_deadlines, grader):
    """The deadlines are for reading requests: an event stream open longer than both still gets its verdict."""
    grader.gate.clear()
    with LiveServer(create_app(quick_deadlines, grade=grader), quick_deadlines) as server:
        with httpx.Client(base_url=server.url, timeout=20) as client:
            sid = client.post(SUBMIT, json={"source": CORRECT}).json()["id"]
            with client.stream("GET", f"/api/submissions/{sid}/events") as events:
                lines = events.iter_lines()
                assert next(lines) == "event: queued"
                assert grader.started.wait(10)
                time.sleep(1.5)  # longer than header_seconds + body_seconds, on purpose: nothing to wait for
                grader.gate.set()
                assert "event: done" in list(lines)


@pytest.mark.parametrize("pieces", [1, 16], ids=["whole", "in pieces"])
def test_a_head_over_the_limit_is_431_however_it_arrives(settings, grader, pieces):
    """h11 limits a head only while it is incomplete: one that arrived in a single read was taken at any size."""
    settings.max_header_bytes = 4096
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 8000 + b"\r\n\r\n"
    with LiveServer(create_app(settings, grade=grader), settings) as server, server.raw() as sock:
        step = -(-len(head) // pieces)
        for start in range(0, len(head), step):
            sock.sendall(head[start:start + step])
        assert read_all(sock).startswith(b"HTTP/1.1 431 ")


def test_a_body_larger_than_the_head_limit_is_no_head(settings, grader):
    """Only the head counts: a submission whose body arrives in the same read as its head is taken."""
    settings.max_header_bytes = 4096
    body = json.dumps({"source": CORRECT + "#" * 8000}).encode()
    with LiveServer(create_app(settings, grade=grader), settings) as server, server.raw() as sock:
        sock.sendall(b"POST " + SUBMIT.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                     b"\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        assert read_all(sock).startswith(b"HTTP/1.1 20")


def test_connections_past_the_limit_get_503(settings, grader):
    """Nothing limited connections; past `max_connections`, a request is answered 503 at once."""
    settings.max_connections = 3
    with LiveServer(create_app(settings, grade=grader), settings) as server:
        held = [server.raw() for _ in range(3)]
        try:
            for sock in held:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers not finished
            wait_until(lambda: len(server.server.server_state.connections) == 3,
                       what="three connections held", interval=0.01)
            assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 503
        finally:
            for sock in held:
                sock.close()
        wait_until(lambda: not server.server.server_state.connections,
                   what="the held connections closed", interval=0.01)
        assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 200


# 5. Malformed JSON is a 4xx that says what is wrong.

@pytest.mark.parametrize("body, says", [
    ('{"source": "x", "n": ' + "9" * 5000 + "}", "a number of 5000 digits; the limit is 100"),
    ('{"source": "x", "n": ' + "[" * 100_000 + "]" * 100_000 + "}", "levels deep, too deep to read"),
])
def test_huge_numbers_and_deep_nesting_are_422(client, body, says):
    response = client.post(SUBMIT, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert says in response.json()["detail"]


# 6. Only the server's own host names are answered; links come from base_url.

@pytest.mark.parametrize("base, status", [("http://evil.example:8000", 400), ("http://localhost:8000", 200),
                                          ("http://127.0.0.1:8000", 200), ("http://[::1]:8000", 200),
                                          ("http://practice.example.edu", 200), ("http://lab.school.example", 200)])
def test_the_host_allowlist(settings, grader, base, status):
    """A DNS-rebinding page sends its own name as Host; only configured names (and IP literals) are answered."""
    settings.allowed_hosts, settings.base_url = ["*.school.example"], "https://practice.example.edu/"
    with TestClient(create_app(settings, grade=grader), base_url=base) as client:
        response = client.get("/healthz")
    assert response.status_code == status
    if status == 400:
        assert "does not answer for host 'evil.example'" in response.json()["detail"]


def test_default_hosts_are_localhost_and_addresses(settings, grader):
    settings.allowed_hosts = []
    with TestClient(create_app(settings, grade=grader), base_url="http://testserver") as client:
        assert client.get("/").status_code == 400


def test_links_are_built_from_base_url(settings, grader):
    """The class page's join link named whatever Host the request carried."""
    settings.allowed_hosts, settings.base_url = [], "https://practice.example.edu"
    app = create_app(settings, grade=grader)
    app.state.classes.add_instructor("teacher", "a long password")
    with TestClient(app, base_url="http://localhost:8000") as client:
        assert client.post("/signin", data={"username": "teacher", "password": "a long password"},
                           follow_redirects=False).status_code == 303
        created = client.post("/teach/classes", data={"name": "A"}, follow_redirects=False)
        page = client.get(created.headers["location"]).text
    join_url = re.search(r'id="join-url" readonly value="([^"]+)"', page).group(1)
    assert join_url.startswith("https://practice.example.edu/join/")


# 7. Sign-in-link tokens stay out of the access log.

def test_sign_in_tokens_stay_out_of_the_access_log(settings, grader):
    records: list[str] = []
    seen = threading.Event()

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())
            seen.set()

    app = create_app(settings, grade=grader)
    with LiveServer(app, settings, log_level="info", access_log=True) as server:
        handler = Keep()
        logging.getLogger("uvicorn.access").addHandler(handler)
        try:
            link = f"{server.url}/signin/link/SECRET-link-token?token=tp_SECRET2"
            assert httpx.get(link, timeout=10).status_code == 404
            assert seen.wait(10)
        finally:
            logging.getLogger("uvicorn.access").removeHandler(handler)
    assert not any("SECRET" in line for line in records), records
    assert any("/signin/link/<redacted>?token=<redacted>" in line for line in records), records


def test_concurrent_submissions_of_one_learner_queue_one(settings, grader):
    """The routes run in threads now: the one-grading-at-a-time check and the store happen under one lock."""
    grader.gate.clear()
    with LiveServer(create_app(settings, grade=grader), settings) as server:
        cookie = httpx.get(f"{server.url}/", timeout=10).cookies[LEARNER_COOKIE]
        try:
            def post(_):
                return httpx.post(f"{server.url}{SUBMIT}", json={"source": CORRECT}, cookies={LEARNER_COOKIE: cookie},
                                  timeout=30).status_code
            with ThreadPoolExecutor(6) as pool:
                codes = sorted(pool.map(post, range(6)))
        finally:
            grader.gate.set()
    assert codes == [202, 429, 429, 429, 429, 429]


@pytest.mark.parametrize("address, key", [
    ("10.0.0.1", "10.0.0.1"), ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
    ("2001:db8:1:2:ffff::9", "2001:db8:1:2::/64"),
    ("::ffff:10.0.0.1", "10.0.0.1"), ("testclient", "testclient")])
def test_an_ipv6_address_counts_as_its_64(address, key):
    """A host given an IPv6 /64 can send from any of its 2**64 addresses: the per-address budget is the network's."""
    assert address_key(address) == key


# 8. Every run of learner code goes through one admission: waiting holds no thread, one address gets a share.

PLAYGROUND = "/api/playground"
RUN = {"source": "def f(x):\n    return x\n"}


def test_a_flood_of_playground_runs_waits_without_threads_and_gets_its_share(settings, grader, fake_playground):
    """44 cookie-less playground runs each held one of the server's threads while they waited for a slot, and
    /healthz, static files and pages waited behind them (~35 s). Now a waiting run is a coroutine: 45 of them wait
    (more than the 40 threads the server has), /healthz answers meanwhile, the next run from that address is refused
    (its share of the queue is full) and another address's submission is still accepted."""
    calls, release, started = fake_playground
    release.clear()
    settings.submissions_per_minute_per_address, settings.max_queued_submissions = 1000, 400
    settings.max_queued_per_address = 45
    app = create_app(settings, grade=grader)
    with LiveServer(app, settings) as server, ThreadPoolExecutor(46) as pool:
        try:
            runs = [pool.submit(httpx.post, f"{server.url}{PLAYGROUND}", json=RUN, timeout=60)]
            assert started.wait(15)  # the one slot (workers = 1) is taken
            runs += [pool.submit(httpx.post, f"{server.url}{PLAYGROUND}", json=RUN, timeout=60) for _ in range(45)]
            wait_until(lambda: app.state.admission.waiting("127.0.0.1") == 45,
                       what="45 runs waiting for the slot", interval=0.01)
            health = httpx.get(f"{server.url}/healthz", timeout=15)
            assert health.status_code == 200 and health.json()["status"] == "ok"
            refused = httpx.post(f"{server.url}{PLAYGROUND}", json=RUN, timeout=15)
            assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
            assert "from your address (127.0.0.1) are waiting already" in refused.json()["detail"]
            other = httpx.post(f"{server.url}{SUBMIT}", json={"source": CORRECT}, timeout=15,
                               headers={"X-Forwarded-For": "10.0.0.2"})  # uvicorn trusts a proxy at 127.0.0.1
            assert other.status_code == 202
            assert not release.is_set() and len(calls) == 1
        finally:
            release.set()
        assert [r.result().status_code for r in runs] == [200] * 46


def test_a_queued_run_whose_client_has_gone_is_dropped(settings, grader, fake_playground):
    """A run waiting for a slot was run even after its client had dropped the connection; it is now dropped before
    it starts, and its place in the queue is given back."""
    calls, release, started = fake_playground
    release.clear()
    app = create_app(settings, grade=grader)
    with LiveServer(app, settings) as server, ThreadPoolExecutor(1) as pool:
        try:
            first = pool.submit(httpx.post, f"{server.url}{PLAYGROUND}", json=RUN, timeout=60)
            assert started.wait(15)
            body = json.dumps(RUN).encode()
            with server.raw() as sock:
                sock.sendall(b"POST " + PLAYGROUND.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                             b"application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
                wait_until(lambda: app.state.admission.waiting() == 1,
                           what="the second run waiting for the slot", interval=0.01)
            wait_until(lambda: app.state.admission.dropped == 1,
                       what="the run of the client that went dropped", interval=0.01)
            assert app.state.admission.waiting() == 0
        finally:
            release.set()
        assert first.result().status_code == 200
        assert httpx.post(f"{server.url}{PLAYGROUND}", json=RUN, timeout=15).status_code == 200
    assert len(calls) == 2  # the first run and the last: never the dropped one


def test_submissions_and_playground_runs_share_one_address_budget(settings, grader, fake_playground):
    """The playground counted runs per learner only (a cookie is free): an address now has one budget for all the
    learner code it runs."""
    settings.submissions_per_minute_per_address = 2
    app = create_app(settings, grade=grader)
    with TestClient(app, client=("10.0.0.1", 5000)) as flood:
        assert cookieless_submit(flood).status_code == 202
        flood.cookies.clear()
        assert flood.post(PLAYGROUND, json=RUN).status_code == 200
        flood.cookies.clear()
        refused = flood.post(PLAYGROUND, json=RUN)
        assert refused.status_code == 429 and "from one address (10.0.0.1)" in refused.json()["detail"]
        assert 1 <= int(refused.headers["retry-after"]) <= 60
