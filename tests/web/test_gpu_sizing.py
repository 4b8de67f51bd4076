"""GPU gradings at once: the graders' concurrency, lowered by the machine's cores and free GPU memory."""

import threading
from types import SimpleNamespace

import pytest

from judge.reports.report import Verdict
from web.gpu_sizing import GIB_PER_GPU_GRADING, gpu_concurrency, gpu_free_bytes

GIB = 1 << 30


@pytest.mark.parametrize("workers, setting, cores, free_gib, expected", [
    (16, 0, 16, 140, 16),  # the lent H200: cores first (140 GiB would hold 35)
    (32, 0, 16, 140, 16),  # more threads than cores: one grading per core
    (16, 0, 64, 3 * GIB_PER_GPU_GRADING, 3),  # a small GPU: its memory decides
    (4, 0, 16, 140, 4),  # the graders' concurrency is the ceiling
    (16, 0, 16, None, 16),  # nvidia-smi could not tell: no limit from memory
    (16, 0, 16, 1, 1),  # almost no free memory: still one
    (16, 6, 2, 1, 6),  # the setting wins
])
def test_sized_by_the_machine(workers, setting, cores, free_gib, expected):
    free = None if free_gib is None else free_gib * GIB
    assert gpu_concurrency(workers, setting, cores=cores, free_bytes=free) == expected


def test_free_memory_is_unknown_without_nvidia_smi(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi on it
    assert gpu_free_bytes() is None


def test_free_memory_is_read_from_nvidia_smi(monkeypatch, tmp_path):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 143000\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert gpu_free_bytes() == 143000 * 1024 * 1024


def test_gpu_gradings_wait_for_a_slot(monkeypatch, tmp_path):
    """make_grade_fn lets `gpu_pool_size` GPU gradings run at once, whatever the queue's thread count."""
    from web import graders

    running, most, lock, release, two = [0], [0], threading.Lock(), threading.Event(), threading.Event()

    def fake_grade(exercise, source, sandbox, on_event, tier=None):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            if running[0] == 2:
                two.set()
        release.wait(10)
        with lock:
            running[0] -= 1
        return SimpleNamespace(verdict=Verdict.ACCEPTED)

    class Exercise:
        id, needs_cuda, cpu_tier = "gpu-one", True, []  # no CPU tier: straight to the GPU

    class Course:
        def all(self):
            return [Exercise()]

        def get(self, _):
            return Exercise()

    class Submission:
        exercise_id, source = "gpu-one", ""

    monkeypatch.setattr("judge.grade", fake_grade)
    monkeypatch.setattr("judge.parent.requirements.cuda_missing", lambda: None)
    monkeypatch.setattr("judge.parent.cache_layers.gpu_layer", lambda exercises: (None, None))
    monkeypatch.setattr("judge.parent.grading.make_sandbox", lambda *args, **kwargs: object())
    grading = graders.make_grade_fn(Course(), "none", gpu_pool_size=2)
    threads = [threading.Thread(target=grading.grade, args=(Submission(), lambda e: None)) for _ in range(5)]
    for thread in threads:
        thread.start()
    assert two.wait(10)
    release.wait(0.3)  # what cannot be awaited: that no third one starts meanwhile (five threads are ready to)
    assert most[0] == 2
    release.set()
    for thread in threads:
        thread.join(10)
    assert most[0] == 2
