"""Host processes left running as a sandbox uid: what a sandbox test and the soak (benchmarks/soak.py) require to be
none once a run has ended."""

from __future__ import annotations

from pathlib import Path

from sandbox.settings import SandboxSettings


def sandbox_uids() -> range:
    from sandbox.warm import SLOTS_PER_POOL, WarmSandbox

    base = SandboxSettings().uid_base
    return range(base, base + SLOTS_PER_POOL * len(WarmSandbox.POOL_NAMES))


def sandbox_processes(exclude: set[int]) -> list[str]:
    """Host processes running as a sandbox uid, except the warm workers themselves."""
    found, uids = [], sandbox_uids()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        uid = int(fields.get("Uid", "0").split()[0])
        pid = int(status.parent.name)
        if uid in uids and pid not in exclude:
            found.append(f"{pid} uid={uid} {fields.get('Name', '').strip()}")
    return found
