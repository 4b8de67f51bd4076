"""A server's warm-up: the one definition of "still warming up" (/healthz) and what `practice serve` prints of it.

A first start spends minutes before its gradings run at their usual speed: the warm pools import torch (every
grading waits for them) and the compile cache's base layer is built (the precompiled header and the vector-ISA
probes every Inductor compile of a run would otherwise make again). The full and GPU layers, the reference
solutions' own kernels, keep building after that: they only spare a grading whose graph is a reference's its C++
compile, so the server is warm without them, and /healthz lists the references they still lack.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from judge.parent.cache_layers import BASE, LayerProgress
from web.graders import WarmPools


def warming_up(pools: str, layers: Mapping[str, Mapping]) -> bool:
    """True while the warm pools are starting or a base layer is being built (`layers`: LayerProgress snapshots; a
    build that has not named its layer yet is at its base)."""
    return pools == "starting" or any(layer["state"] == "building" and layer["layer"] in (None, BASE)
                                      for layer in layers.values())


class Announcer:
    """Says each step of the warm-up once, as it happens (listeners on the pools and the layers' progress)."""

    def __init__(self, pools: WarmPools, layers: Mapping[str, LayerProgress], say: Callable[[str], None],
                 clock: Callable[[], float] = time.monotonic):
        self.pools, self.layers, self.say, self.clock = pools, layers, say, clock
        self.started = clock()
        self._said: set[tuple] = set()
        self._totals: dict[str, int] = {}
        self._lock = threading.Lock()

    def attach(self) -> None:
        """Listen from now on, and say where the warm-up stands."""
        self.pools.listeners.append(self.changed)
        for progress in self.layers.values():
            progress.listeners.append(self.changed)
        self.changed()

    def changed(self) -> None:
        with self._lock:
            for key, line in self._lines():
                if key not in self._said:
                    self._said.add(key)
                    self.say(line)

    def _after(self) -> str:
        return f"after {self.clock() - self.started:.0f} s"

    def _lines(self):
        pools = self.pools.state
        layers = {name: progress.snapshot() for name, progress in self.layers.items()}
        if pools == "starting":
            yield ("pools", "starting"), ("warming up: starting the warm graders (a runner and a verifier process, "
                                          "each importing torch); a submission meanwhile waits for them")
        elif pools == "ready":
            yield ("pools", "ready"), f"warm graders ready {self._after()}: a submission starts grading at once"
        elif pools == "failed":
            yield ("pools", "failed"), "the warm graders failed to start: the first submission's report says why"
        for name, layer in layers.items():
            yield from self._layer_lines(name, layer)
        if pools == "ready" and not warming_up(pools, layers):
            building = [name for name, layer in layers.items() if layer["state"] == "building"]
            rest = (f"; the {', '.join(building)} compile cache keeps compiling the reference solutions in the "
                    "background (it spares a reference-like Inductor grading its C++ compile)") if building else ""
            yield ("warm",), f"warm {self._after()} (/healthz: warming_up false){rest}"

    def _layer_lines(self, name: str, layer: dict):
        state, kind, pending = layer["state"], layer["layer"], layer["pending"]
        if state == "building" and kind in (None, BASE):
            yield (name, "base"), (f"compile cache ({name}): building the base layer (the precompiled header and the "
                                   "vector-ISA probes every Inductor compile needs)")
        elif state == "building":
            total = self._totals.setdefault(name, len(pending))
            yield (name, kind, "start"), (f"compile cache ({name}): compiling {total} reference solution(s) into the "
                                          f"{kind} layer, at a low priority")
            done = total - len(pending)
            if done:
                yield (name, kind, done), (f"compile cache ({name}): {done} of {total} references done" +
                                           (f", next: {pending[0]}" if pending else ""))
        elif state == "ready":
            yield (name, "ready"), f"compile cache ({name}): ready {self._after()}"
        elif state == "failed":
            yield (name, "failed"), (f"compile cache ({name}): the build failed (the log says why); gradings go on "
                                     "without it, only slower where Inductor compiles")
