"""LTI 1.3 from a fake platform on this machine: login, launch into an exercise, submit, the score comes back once.

The platform (`tests/web/fake_lms.py`) has its own RSA key, JWKS, token and score endpoints on 127.0.0.1; the
tool reaches nothing else. Each test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from tests.web.classroom import PASSWORD, browser, new_class, sign_in, table
from tests.web.fake_lms import FakePlatform, rsa_key
from tests.web.test_api_submissions import read_events
from tests.web.test_regrade import EXACT, SMALL_ONLY, SUBMIT, changes, tighten_hidden_test, wait_regraded
from web.sessions import LEARNER_COOKIE

# course, grader and client: tests/web/conftest.py's, graded by the course copy's hidden tests
pytestmark = pytest.mark.hidden_tests


@pytest.fixture
def platform():
    fake = FakePlatform().start()
    yield fake
    fake.stop()


@pytest.fixture
def lms_class(client, platform):
    """An instructor's class, the fake platform registered, its deployment launching into the class."""
    client.app.state.classes.add_instructor("teacher", PASSWORD)
    teacher = browser(client)
    assert sign_in(teacher, "teacher").status_code == 303
    class_path, _ = new_class(teacher, "LMS course")
    registry = client.app.state.lti
    registry.add_deployment(platform.register(registry), platform.deployment_id, class_path.rsplit("/", 1)[1])
    platform.tool_jwks = client.get("/lti/jwks").json()
    return teacher, class_path


CROSS_SITE = {"Sec-Fetch-Site": "cross-site"}


def login(learner: TestClient, platform: FakePlatform) -> dict[str, str]:
    """Start a login as the LMS does; the query the tool redirects to the platform's auth URL with."""
    started = learner.post("/lti/login", data={"iss": platform.issuer, "login_hint": "42",
                                               "target_link_uri": "http://testserver/exercises/add-one",
                                               "client_id": platform.client_id}, headers=CROSS_SITE)
    assert started.status_code == 302, started.text
    location = urlsplit(started.headers["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == platform.base + "/auth"
    query = {k: v[0] for k, v in parse_qs(location.query).items()}
    assert query["redirect_uri"] == "http://testserver/lti/launch" and query["response_mode"] == "form_post"
    assert query["client_id"] == platform.client_id and query["scope"] == "openid"
    return query


def launch(learner: TestClient, platform: FakePlatform, **token_options):
    query = login(learner, platform)
    return learner.post("/lti/launch", headers=CROSS_SITE,
                        data={"id_token": platform.id_token(query["nonce"], **token_options), "state": query["state"]})


def submit_and_follow(learner: TestClient, source: str) -> dict:
    created = learner.post(SUBMIT, json={"source": source}).json()
    return read_events(learner, created["events_url"])[-1]["report"]


def test_a_launch_opens_the_exercise_as_a_class_member_and_the_score_arrives_once(client, platform, lms_class):
    teacher, class_path = lms_class
    learner = browser(client)
    launched = launch(learner, platform)
    assert launched.status_code == 303 and launched.headers["location"] == "/exercises/add-one"
    assert LEARNER_COOKIE in launched.headers["set-cookie"]
    assert learner.get("/exercises/add-one").status_code == 200
    assert [r["learner"] for r in table(teacher.get(class_path).text)] == ["Ada Lovelace"]

    assert submit_and_follow(learner, EXACT)["verdict"] == "ACCEPTED"
    assert platform.score_arrived.wait(10)
    [score] = platform.scores
    assert (score["userId"], score["scoreGiven"], score["scoreMaximum"]) == ("lms-user-42", 1.0, 1.0)
    assert score["gradingProgress"] == "FullyGraded" and score["activityProgress"] == "Completed"
    assert score["_query"] == "type=exercise"  # the line item's own query is kept on its scores URL
    assert len(platform.tokens) == 1  # the tool's assertion verified against its published key

    # The same score is not sent again: another accepted submission, a wrong one, a second launch.
    assert submit_and_follow(learner, EXACT)["verdict"] == "ACCEPTED"
    assert submit_and_follow(learner, "def add_one(x):\n    return x\n")["verdict"] == "WRONG_ANSWER"
    again = browser(client)
    assert launch(again, platform).status_code == 303
    assert submit_and_follow(again, EXACT)["verdict"] == "ACCEPTED"
    assert len(platform.scores) == 1
    assert [r["learner"] for r in table(teacher.get(class_path).text)] == ["Ada Lovelace"]  # one member per user


def test_a_regrade_that_changes_the_verdict_sends_the_new_score_once(client, platform, lms_class, course):
    teacher, class_path = lms_class
    learner = browser(client)
    assert launch(learner, platform).status_code == 303
    assert submit_and_follow(learner, SMALL_ONLY)["verdict"] == "ACCEPTED"
    assert platform.wait_scores(1) == [1.0]
    tighten_hidden_test(course)
    for _ in range(2):  # the second regrade grades nothing and sends nothing
        teacher.post(class_path + "/regrade", data={"exercise": "add-one", "reason": "stricter test"})
        wait_regraded(teacher, class_path)
    assert platform.wait_scores(2) == [1.0, 0.0]
    assert platform.scores[-1]["comment"] == "WRONG_ANSWER"


@pytest.mark.parametrize("failure", ["INTERNAL_ERROR", "exception"])
def test_a_regrade_the_grader_fails_keeps_the_verdict_and_sends_the_lms_nothing(client, platform, lms_class, course,
                                                                                grader, monkeypatch, failure):
    """A regrade that failed for the grader's own reasons (a sandbox that did not start, a dead worker) replaced the
    stored verdict for good and sent the LMS a 0. It is now graded again, then kept aside: the verdict stays."""
    from judge.parent.outcome import grader_failed
    from web.grading_loop import MAX_ATTEMPTS

    teacher, class_path = lms_class
    learner = browser(client)
    assert launch(learner, platform).status_code == 303
    assert submit_and_follow(learner, SMALL_ONLY)["verdict"] == "ACCEPTED"
    assert platform.wait_scores(1) == [1.0]
    tries = []

    def broken(self, submission, publish):
        tries.append(submission.id)
        if failure == "exception":
            raise RuntimeError("the sandbox's worker died")
        return grader_failed(submission.exercise_id, "the sandbox did not start")

    monkeypatch.setattr(type(grader), "__call__", broken)
    tighten_hidden_test(course)  # SMALL_ONLY would now be WRONG_ANSWER, if the grader could say so
    teacher.post(class_path + "/regrade", data={"exercise": "add-one", "reason": "stricter test"})
    assert changes(wait_regraded(teacher, class_path)) == []
    assert len(tries) == MAX_ATTEMPTS  # tried again before being kept aside
    assert [s["scoreGiven"] for s in platform.scores] == [1.0]
    assert learner.get("/api/exercises").json()[0]["state"] == "solved"


@pytest.mark.parametrize("case, status, message", [
    ("bad signature", 401, "bad signature: the id_token does not verify against the platform's key set"),
    ("replayed nonce", 401, "replayed launch: this login's nonce was used already"),
    ("unknown deployment", 403, "unknown deployment 'deploy-elsewhere' of platform"),
    ("unknown state", 403, "this launch was not started in this browser, or its login expired"),
    ("unknown exercise", 404, "the launch opens exercise 'no-such-exercise', which this course does not have"),
])
def test_refused_launches_say_why(client, platform, lms_class, case, status, message):
    learner = browser(client)
    query = login(learner, platform)
    options = {"bad signature": {"key": rsa_key()}, "unknown deployment": {"deployment_id": "deploy-elsewhere"},
               "unknown exercise": {"exercise": "no-such-exercise"}}.get(case, {})
    form = {"id_token": platform.id_token(query["nonce"], **options), "state": query["state"]}
    if case == "unknown state":
        form["state"] = "no-such-state"
    replayer = browser(client)
    replayer.cookies.update(learner.cookies)  # the login's cookie as it was before the launch, copied
    if case == "replayed nonce":
        assert learner.post("/lti/launch", data=form, headers=CROSS_SITE).status_code == 303
    refused = replayer.post("/lti/launch", data=form, headers=CROSS_SITE)
    assert refused.status_code == status and message in refused.text, refused.text
    teacher, class_path = lms_class
    assert len(table(teacher.get(class_path).text)) == (1 if case == "replayed nonce" else 0)  # nobody joined
    assert platform.scores == []


def test_a_launch_from_a_browser_that_did_not_start_the_login_is_refused(client, platform, lms_class):
    """The launch's state was not bound to a browser: an attacker's own login and id_token, posted from a victim's
    browser (login CSRF), signed the victim in as the attacker's LMS user. Now the launch needs the cookie that
    /lti/login set in the same browser."""
    attacker, victim = browser(client), browser(client)
    query = login(attacker, platform)
    form = {"id_token": platform.id_token(query["nonce"]), "state": query["state"]}
    refused = victim.post("/lti/launch?lang=en", data=form, headers=CROSS_SITE)
    assert refused.status_code == 403 and "was not started in this browser" in refused.text
    teacher, class_path = lms_class
    assert len(table(teacher.get(class_path).text)) == 0  # nobody was signed in or joined
    assert attacker.post("/lti/launch", data=form, headers=CROSS_SITE).status_code == 303  # its own browser may
    assert len(table(teacher.get(class_path).text)) == 1


def test_an_anonymous_login_stores_nothing(client, platform, lms_class):
    """Each /lti/login added a row (state, nonce): anyone could fill the table. A login now lives in its browser's
    signed cookie; only a verified launch is recorded (to refuse its replay)."""
    from sqlalchemy import func, select

    from web.tables import LtiStateRow

    def rows() -> int:
        with client.app.state.store.engine.connect() as conn:
            return conn.scalar(select(func.count()).select_from(LtiStateRow))

    for _ in range(5):
        login(browser(client), platform)
    assert rows() == 0
    assert launch(browser(client), platform).status_code == 303 and rows() == 1


@pytest.mark.parametrize("name, sub", [
    ("\u202eecalpretsaM", "lms-user-42"),  # a text-direction mark: refused as a display name
    ("Bо​b", "user​‮"),  # an odd name whose sub would not do as a name either (it was a 500)
    ("x" * 500, "lms-user-42"), ("", "lms-user-42"),
])
def test_an_odd_lms_name_joins_under_a_plain_one(client, platform, lms_class, name, sub):
    learner = browser(client)
    assert launch(learner, platform, name=name, sub=sub).status_code == 303
    teacher, class_path = lms_class
    (row,) = table(teacher.get(class_path).text)
    assert re.fullmatch(r"LMS user [0-9a-f]{8}", row["learner"]), row


@pytest.mark.parametrize("sub", ["x" * 256, "nul\x00inside"])
def test_a_sub_the_tool_cannot_keep_is_refused_with_a_message(client, platform, lms_class, sub):
    refused = launch(browser(client), platform, sub=sub)
    assert refused.status_code == 400 and "the id_token's sub is not a user id this tool takes" in refused.text


@pytest.fixture
def no_secret_key(settings):
    """An app whose cookie key is generated into its data folder (no PRACTICE_SECRET_KEY), as by default."""
    settings.secret_key = None


def test_deep_linking_works_without_an_explicit_secret_key(no_secret_key, client, platform, lms_class):
    """The picker signed its context with `settings.secret_key`, None unless set: a 500 by default."""
    from html import unescape

    from tests.web.fake_lms import INSTRUCTOR

    teacher_lms = browser(client)
    picker = launch(teacher_lms, platform, sub="lms-teacher", name="Grace Hopper", roles=(INSTRUCTOR,),
                    deep_linking=True)
    assert picker.status_code == 200, picker.text
    context = unescape(re.search(r'name="context" value="([^"]+)"', picker.text).group(1))
    assert teacher_lms.post("/lti/deep-link", data={"context": context, "exercise": "add-one"}).status_code == 200


def test_a_login_from_an_unregistered_platform_is_refused(client, platform):
    refused = browser(client).get("/lti/login", params={"iss": "https://lms.example", "login_hint": "1"})
    assert refused.status_code == 400 and "unknown platform 'https://lms.example'" in refused.text
    assert "register it with `practice lti add-platform`" in refused.text


def test_the_operator_registers_platform_and_deployment_from_the_command_line(tmp_path):
    from click.testing import CliRunner

    from cli.main import cli
    from web import db
    from web.classes import ClassStore
    from web.lti.registry import LtiRegistry

    data = ["--data-dir", str(tmp_path / "data")]
    run = CliRunner().invoke
    platform = ["--issuer", "https://lms.example", "--client-id", "c1", "--auth-login-url", "https://lms.example/auth",
                "--token-url", "https://lms.example/token", "--jwks-url", "https://lms.example/jwks"]
    assert run(cli, ["lti", "add-platform", *platform, *data]).exit_code == 0
    twice = run(cli, ["lti", "add-platform", *platform, *data])
    assert twice.exit_code != 0 and "is registered already" in twice.output
    bad_url = run(cli, ["lti", "add-platform", *platform[:-1], "lms.example/jwks", *data])
    assert bad_url.exit_code != 0 and "jwks-url must be an http(s) URL" in bad_url.output
    no_class = run(cli, ["lti", "add-deployment", "--issuer", "https://lms.example", "--deployment-id", "d1",
                         "--class", "nope", *data])
    assert no_class.exit_code != 0 and "No class has the id nope" in no_class.output
    engine = db.make_engine(f"sqlite:///{tmp_path / 'data' / 'practice.db'}")
    classes = ClassStore(engine)
    class_ = classes.create_class(classes.add_instructor("teacher", "correct horse").id, "LMS")
    added = run(cli, ["lti", "add-deployment", "--issuer", "https://lms.example", "--deployment-id", "d1",
                      "--class", class_.id, *data])
    assert added.exit_code == 0, added.output
    registry = LtiRegistry(engine)
    assert registry.deployment_class(registry.find_platform("https://lms.example").id, "d1") == class_.id
    shown = run(cli, ["lti", "show", "--base-url", "https://practice.example", *data])
    assert "https://practice.example/lti/login" in shown.output and "https://practice.example/lti/jwks" in shown.output
    assert '"kty": "RSA"' in shown.output and "platform https://lms.example client id c1" in shown.output
    engine.dispose()


def test_the_configuration_the_lms_admin_pastes_names_every_url(client):
    config = client.get("/lti/config.json").json()
    base = "http://testserver"
    assert config["oidc_initiation_url"] == f"{base}/lti/login" and config["target_link_uri"] == f"{base}/lti/launch"
    assert config["redirect_uris"] == [f"{base}/lti/launch"] and config["public_jwk_url"] == f"{base}/lti/jwks"
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in config["scopes"]
    assert "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly" in config["scopes"]
    assert {m["type"] for m in config["messages"]} == {"LtiResourceLinkRequest", "LtiDeepLinkingRequest"}
    placements = config["extensions"][0]["settings"]["placements"]
    assert {p["message_type"] for p in placements} == {"LtiDeepLinkingRequest"}
    assert client.get(config["public_jwk_url"].removeprefix(base)).json()["keys"][0]["kty"] == "RSA"


def test_an_instructors_deep_link_picks_an_exercise_and_returns_a_signed_response(client, platform, lms_class):
    """LtiDeepLinkingRequest -> the exercises to pick from -> an LtiDeepLinkingResponse signed with the tool's key,
    whose link then launches into the picked exercise."""
    from html import unescape

    import jwt
    from jwt.algorithms import RSAAlgorithm

    from tests.web.fake_lms import INSTRUCTOR

    teacher_lms = browser(client)
    picker = launch(teacher_lms, platform, sub="lms-teacher", name="Grace Hopper", roles=(INSTRUCTOR,),
                    deep_linking=True)
    assert picker.status_code == 200 and 'value="add-one"' in picker.text, picker.text
    context = unescape(re.search(r'name="context" value="([^"]+)"', picker.text).group(1))
    unknown = teacher_lms.post("/lti/deep-link", data={"context": context, "exercise": "nope"})
    assert unknown.status_code == 404 and "no exercise 'nope'" in unknown.text
    forged = teacher_lms.post("/lti/deep-link", data={"context": context + "x", "exercise": "add-one"})
    assert forged.status_code == 400 and "context is not valid" in forged.text
    answer = teacher_lms.post("/lti/deep-link", data={"context": context, "exercise": "add-one"})
    assert answer.status_code == 200
    assert f'action="{platform.deep_link_return_url}"' in answer.text
    assert f"form-action 'self' {platform.base}" in answer.headers["content-security-policy"]
    token = unescape(re.search(r'name="JWT" value="([^"]+)"', answer.text).group(1))
    kid = jwt.get_unverified_header(token)["kid"]
    jwk = next(k for k in client.get("/lti/jwks").json()["keys"] if k["kid"] == kid)
    claims = jwt.decode(token, RSAAlgorithm.from_jwk(jwk), algorithms=["RS256"], audience=platform.issuer,
                        issuer=platform.client_id)  # as the platform verifies it
    lti = "https://purl.imsglobal.org/spec/lti/claim/"
    dl = "https://purl.imsglobal.org/spec/lti-dl/claim/"
    assert claims[lti + "message_type"] == "LtiDeepLinkingResponse" and claims[lti + "version"] == "1.3.0"
    assert claims[lti + "deployment_id"] == platform.deployment_id and claims[dl + "data"] == "opaque-42"
    (item,) = claims[dl + "content_items"]
    assert item["type"] == "ltiResourceLink" and item["url"] == "http://testserver/lti/launch"
    assert item["custom"] == {"exercise": "add-one"} and item["lineItem"]["scoreMaximum"] == 1
    # the link the LMS made launches a learner into that exercise
    learner = browser(client)
    opened = launch(learner, platform, exercise=item["custom"]["exercise"])
    assert opened.status_code == 303 and opened.headers["location"] == "/exercises/add-one"


def test_a_learners_deep_linking_request_is_refused(client, platform, lms_class):
    refused = launch(browser(client), platform, deep_linking=True)
    assert refused.status_code == 403 and "only an instructor of the course picks" in refused.text


def test_an_instructors_launch_reads_the_roster_into_the_class(client, platform, lms_class):
    """Names and Role Provisioning Services: both pages of the roster; active learners join under their LMS names,
    the instructor and an inactive member do not; a learner's later launch is the same member."""
    from tests.web.fake_lms import INSTRUCTOR, MEMBERSHIP_SCOPE

    teacher, class_path = lms_class
    assert launch(browser(client), platform, sub="lms-teacher", name="Grace Hopper", roles=(INSTRUCTOR,),
                  roster=True).status_code == 303
    assert len(platform.roster_reads) == 2 and [t["_scope"] for t in platform.tokens] == [MEMBERSHIP_SCOPE]
    learners = sorted(r["learner"] for r in table(teacher.get(class_path).text))
    assert learners == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]  # Grace: the launching user's own member
    assert launch(browser(client), platform, roster=True).status_code == 303  # a learner's launch reads nothing
    assert len(platform.roster_reads) == 2
    assert sorted(r["learner"] for r in table(teacher.get(class_path).text)) == learners  # Ada joined once
