"""`practice worker` with a fake grader, for test_cluster.py and benchmarks/throughput.py.

    python -m tests.web.cluster_worker [practice worker's options] [--grading-seconds S]

Everything but the grading is the real worker (`web.worker.Worker`: queue, heartbeats, reaper, events);
grading `add_one` takes S seconds of sleep spread over its checks instead of a torch child process, so
that three workers fit on a two-core machine.
"""

from __future__ import annotations

import sys
import time

import click

from judge.reports.report import ProgressEvent
from tests.web.conftest import FakeGrader


class SlowFakeGrader(FakeGrader):
    """The web tests' fake grader, with a pause before each check (a grading that takes time)."""

    def __init__(self, seconds: float):
        super().__init__()
        self.seconds = seconds

    def __call__(self, submission, publish):
        def slow_publish(event: ProgressEvent) -> None:
            if event.type == "check":
                time.sleep(self.seconds / 2)
            publish(event)

        return super().__call__(submission, slow_publish)


@click.command()
@click.option("--database-url", required=True)
@click.option("--queue", "queues", multiple=True, default=("cpu",))
@click.option("--concurrency", type=int, default=1)
@click.option("--name", default=None)
@click.option("--stalled-after", type=float, default=None)
@click.option("--sandbox", default="none")
@click.option("--grading-seconds", type=float, default=0.3)
def main(database_url, queues, concurrency, name, stalled_after, sandbox, grading_seconds):
    from cli.worker import settings_from
    from web.worker import Worker

    settings = settings_from(database_url=database_url, worker_queues=list(queues), workers=concurrency,
                             worker_name=name, stalled_after_seconds=stalled_after)
    worker = Worker(settings, grade=SlowFakeGrader(grading_seconds), sandbox="fake")
    print(worker.describe(), flush=True)
    worker.run()


if __name__ == "__main__":
    sys.exit(main())
