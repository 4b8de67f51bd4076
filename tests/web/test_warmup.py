"""web/warmup.py: what a first start says in its terminal, step by step, and when it counts as warm."""

import pytest

from judge.parent.cache_layers import LayerProgress
from web.graders import WarmPools
from web.warmup import Announcer, warming_up


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("pools, layer, warming", [
    ("starting", {"state": "ready", "layer": None}, True),
    ("ready", {"state": "building", "layer": None}, True),  # a build that has not named its layer is at its base
    ("ready", {"state": "building", "layer": "base"}, True),
    ("ready", {"state": "building", "layer": "full"}, False),
    ("ready", {"state": "building", "layer": "gpu"}, False),
    ("ready", {"state": "failed", "layer": None}, False),
    ("off", {"state": "off", "layer": None}, False),
])
def test_warming_up_means_pools_starting_or_a_base_layer_building(pools, layer, warming):
    assert warming_up(pools, {"cpu": {**layer, "pending": []}}) is warming


def test_a_first_start_says_each_step_once_as_it_happens():
    pools, cpu, clock, said = WarmPools(), LayerProgress(state="building", layer=None), Clock(), []
    Announcer(pools, {"cpu": cpu}, said.append, clock=clock).attach()
    assert said == [said[0], said[1]] and "starting the warm graders" in said[0] and "base layer" in said[1]
    clock.now = 21
    pools.state = "ready"
    assert said[2] == "warm graders ready after 21 s: a submission starts grading at once"
    clock.now = 70
    cpu.update(layer="full", pending=["a", "b"])
    assert "compiling 2 reference solution(s) into the full layer" in said[3]
    assert "warm after 70 s" in said[4] and "keeps compiling the reference solutions" in said[4]
    cpu.update(pending=["b"])
    cpu.update(pending=["b"])  # no change: nothing said again
    assert said[5:] == ["compile cache (cpu): 1 of 2 references done, next: b"]
    clock.now = 300
    cpu.update(pending=[])  # as judge.parent.cache_layers.build does: the last reference, then the layer committed
    cpu.update(state="ready", layer=None)
    assert said[6:] == ["compile cache (cpu): 2 of 2 references done", "compile cache (cpu): ready after 300 s"]


def test_pools_that_fail_say_where_the_reason_is():
    pools, said = WarmPools(), []
    Announcer(pools, {}, said.append).attach()
    pools.state = "failed"
    assert said[-1] == "the warm graders failed to start: the first submission's report says why"
    assert not any("warm after" in line for line in said)


def test_a_server_that_warms_nothing_says_nothing():
    said = []
    Announcer(WarmPools("off"), {"cpu": LayerProgress(state="off", layer=None)}, said.append).attach()
    assert said == []
