"""One rule for byte counts (judge.costs.view.BYTE_UNITS): the report's Python and the page's cost.js agree."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from judge.costs.view import BYTE_UNITS, human_bytes
from judge.shared.paths import PROJECT_ROOT

COST_JS = PROJECT_ROOT / "web" / "static" / "cost.js"


@pytest.mark.parametrize("count, shown", [
    (0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
    (4352, "4.3 KiB"),   # 4.25 KiB: a tie, rounded up (Python's format gave 4.2, toFixed 4.3)
    (4403, "4.3 KiB"), (4300, "4.2 KiB"), (1048575, "1024.0 KiB"), (1048576, "1.0 MiB"),
    (3_170_000, "3.0 MiB"), (-1536, "-1.5 KiB"),
])
def test_byte_counts_round_half_up(count, shown):
    assert human_bytes(count) == shown


def _units_and_counts() -> list[int]:
    rng = random.Random(23)
    # around each unit's x.x5 points (4352 is exactly 4.25 KiB), where rounding rules differ
    ties = [size * (20 * whole + 2 * tenth + 1) // 20 + delta for _, size, _ in BYTE_UNITS[1:]
            for whole in range(40) for tenth in range(10) for delta in (-1, 0, 1)]
    edges = [size + delta for _, size, _ in BYTE_UNITS for delta in (-1, 0, 1)]
    return sorted(set([c for c in ties + edges if c >= 0] + [rng.randrange(0, 2 ** 40) for _ in range(2000)]))


def test_the_page_shows_every_count_as_the_report_does():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: cost.js cannot run here")
    counts = _units_and_counts()
    script = (f"global.window = {{}};\nrequire({json.dumps(str(COST_JS))});\n"
              f"const units = {json.dumps([list(u) for u in BYTE_UNITS])};\n"
              f"const counts = {json.dumps(counts)};\n"
              "process.stdout.write(JSON.stringify(counts.map((n) => window.PracticeCost.bytes(n, units))));")
    shown = json.loads(subprocess.run([node, "-e", script], capture_output=True, text=True, check=True,
                                      timeout=60).stdout)
    mismatched = [(c, js, human_bytes(c)) for c, js in zip(counts, shown) if js != human_bytes(c)]
    assert not mismatched, f"cost.js and human_bytes disagree (count, js, python): {mismatched[:10]}"
    assert len(shown) == len(counts) > 2000


def test_the_page_is_sent_the_rule():
    from web.i18n import strings

    assert strings("zh")["byte_units"] == strings("en")["byte_units"] == [list(u) for u in BYTE_UNITS]
