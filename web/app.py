"""The app factory: `create_app(settings)` wires storage, the course, the grading queue and the routes."""

from __future__ import annotations

import logging
import threading
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from judge.parent.requirements import needs_cuda
from judge.shared.tiers import has_cpu_tier
from web import db
from web.admission import Admission
from web.api import router as api_router
from web.classes import ClassStore
from web.client_api import router as client_api_router
from web.cost_api import router as cost_router
from web.course import Course
from web.deadlines import Deadlines
from web.events import EventHub
from web.forms import PageRefused
from web.gpu_sizing import gpu_graders
from web.graders import WarmPools, choose_sandbox, make_grade_fn
from web.grading_loop import GradeFn
from web.hosts import HostAllowlist, allowed as allowed_hosts
from web.join import router as join_router
from web.lti.grades import GradeSender
from web.lti.launch import KeySets
from web.lti.login_cookie import LoginCookies
from web.lti.registry import LtiRegistry
from web.lti.routes import router as lti_router
from web.middleware import LearnerMiddleware
from web.pages import router as pages_router
from web.playground import close as close_playground, router as playground_router
from web.questions import QuestionStore
from web.questions_api import router as questions_router
from web.queue import EmbeddedQueue, GradingQueue
from web.regrade import Regrades
from web.sessions import Cookies
from web.settings import Settings
from web.store import Store
from web.teach import refused_page, router as teach_router
from web.teach_exports import router as teach_exports_router
from web.throttle import SignInThrottle
from web.timeline_pages import router as timeline_router
from web.tokens import TokenStore

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).parent / "static"


def create_app(settings: Settings | None = None, *, grade: GradeFn | None = None,
               queue: GradingQueue | None = None) -> FastAPI:
    """Build the app. `grade` replaces the real grader, `queue` the embedded queue (both for tests).

    With the procrastinate queue (PostgreSQL) the app only stores and defers: `practice worker`s grade.
    Raises `web.errors.StartupError` when a setting cannot be honoured (sandbox, database URL, schema).
    """
    settings = settings or Settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    kind = settings.resolved_queue()
    sandbox_name = choose_sandbox(settings) if kind == "embedded" else "workers"
    engine = db.make_engine(settings.resolved_database_url())
    if settings.migrate_on_start:
        db.upgrade(engine)
    course = Course(settings.exercises_dir, reload=settings.reload_exercises)
    store = Store(engine)
    close_grader = warm = None
    layers: dict = {}
    pools = WarmPools("off")  # a test's grade function, or practice worker processes, warm nothing here
    serves_gpu = kind == "embedded" and grade is not None  # a test's grade function grades anything
    if kind == "procrastinate" and queue is None:
        from web.pg_events import PgEventHub
        from web.pg_queue import ProcrastinateQueue

        hub = PgEventHub(engine, listen=True)
        queue = ProcrastinateQueue(store, hub, course)
    else:
        hub = EventHub()
    if queue is None:
        if grade is None:
            grading = make_grade_fn(course, sandbox_name, gpu_pool_size=gpu_graders(settings, course))
            grade, warm, close_grader = grading.grade, grading.warm, grading.close
            layers, serves_gpu, pools = grading.layers, grading.serves_gpu, grading.pools
        queue = EmbeddedQueue(store, hub, grade, settings.workers, sandbox_name, serves_gpu=serves_gpu,
                              needs_gpu=lambda exercise_id: needs_cuda(course.get(exercise_id)),
                              tier_first=lambda exercise_id: has_cpu_tier(course.get(exercise_id)),
                              gpu_exercises=lambda: [e.id for e in course.all() if needs_cuda(e)],
                              listeners=[GradeSender(engine)])

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        _app.state.hash_slots = None  # web.offload makes them on this loop
        queue.start()
        if warm is not None:
            threading.Thread(target=warm, name="sandbox-warm-up", daemon=True).start()
        try:
            yield
        finally:
            queue.stop()
            if close_grader is not None:
                close_grader()
            close_playground(_app)
            if getattr(app.state, "cost_demands", None) is not None:  # web/cost_api.py
                app.state.cost_demands.close()
            course.close()
            store.close()

    app = FastAPI(title="torch-practice", version="1", lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Practice judge for torch.compile exercises. Learners are identified by a cookie.")
    app.state.settings, app.state.course, app.state.store = settings, course, store
    app.state.hub, app.state.queue, app.state.sandbox_name = hub, queue, sandbox_name
    app.state.queue_kind = kind
    app.state.layers = layers  # name -> judge.parent.cache_layers.LayerProgress of this process's layer builds
    app.state.warm_pools = pools  # web.graders.WarmPools: whether this process's warm pools have started
    app.state.classes = ClassStore(engine, SignInThrottle(engine, settings.signin_failures_per_name,
                                                          settings.signin_failures_per_address,
                                                          settings.signin_failures_per_name_anywhere),
                                   link_days=settings.signin_link_days)
    app.state.regrades, app.state.deadlines = Regrades(engine), Deadlines(engine)
    app.state.lti, app.state.lti_keys = LtiRegistry(engine), KeySets()
    app.state.tokens = TokenStore(engine)
    app.state.questions = QuestionStore(engine)
    app.state.score_sender = GradeSender(engine)  # after a question is solved: the LMS score, under the class's rule
    app.state.secret_key = secret_key = settings.resolved_secret_key()  # configured, or kept in the data folder
    app.state.cookies = Cookies(secret_key, secure=settings.cookie_secure,
                                learner_max_age=int(settings.learner_session_days * 24 * 3600),
                                instructor_max_age=int(settings.instructor_session_hours * 3600))
    app.state.admission = Admission(settings, store)
    app.state.lti_login_cookies = LoginCookies(secret_key, settings.cookie_secure)
    app.add_middleware(LearnerMiddleware, cookies=app.state.cookies, sessions=app.state.classes)
    app.add_middleware(HostAllowlist, names=allowed_hosts(settings))  # outermost: before anything reads the Host
    app.add_exception_handler(PageRefused, refused_page)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(api_router)
    app.include_router(cost_router)
    app.include_router(client_api_router)
    app.include_router(pages_router)
    app.include_router(timeline_router)
    app.include_router(questions_router)
    app.include_router(playground_router)
    app.include_router(teach_router)
    app.include_router(teach_exports_router)
    app.include_router(join_router)
    app.include_router(lti_router)
    return app
