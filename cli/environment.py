"""Every `PRACTICE_*` environment variable the project reads, and a warning at start for any other.

The settings models declare most of them (`web.settings.Settings`, `sandbox.settings.SandboxSettings`,
`cli.daemon_protocol.DaemonSettings`); the few read elsewhere are listed here with where they are read. A variable
outside the list is a typo (`PRACTICE_SANBOX=docker` used to be ignored in silence): every command says so once.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping

from judge.reports.i18n import T

PREFIX = "PRACTICE_"
# Read outside the settings models: by the grading core, the sandbox, the learner's commands.
READ_ELSEWHERE = (
    "PRACTICE_EXERCISES_DIR", "PRACTICE_WORKSPACE", "PRACTICE_CONFIG_DIR",  # judge/shared/paths.py
    "PRACTICE_GRADING_SECRET",  # judge/shared/draw.py
    "PRACTICE_PHASES",  # judge/shared/phases.py
    "PRACTICE_INDUCTOR_CACHE",  # sandbox/limits.py
    "PRACTICE_VEC_ISA_LOADED",  # sandbox/compile_cache.py, set for the sandboxed child
    "PRACTICE_VEC_ISA_SEEDED",  # judge/shared/isa_probes.py, set for the artifact exercises' build process
    "PRACTICE_LANG",  # cli/options.py, practice/magic.py
    "PRACTICE_TOKEN",  # cli/submit_commands.py
)
# Read by the project's scripts and its test suite (scripts/, tests/, sandbox/setup_ci.sh).
TOOLING = (
    "PRACTICE_VENV", "PRACTICE_LINT_NO_INSTALL", "PRACTICE_SETUP_LOG_DIR", "PRACTICE_REQUIRE_POSTGRES",
    "PRACTICE_REQUIRE_SANDBOXES", "PRACTICE_CHROMIUM", "PRACTICE_SCREENSHOTS", "PRACTICE_SHOTS_TIME_FACTOR",
    "PRACTICE_LAB_DIR", "PRACTICE_TEST_DATABASE_URL", "PRACTICE_TEST_HIDDEN_MODULES", "PRACTICE_TEST_SERVER_SECRET",
    "PRACTICE_TEST_WORKERS", "PRACTICE_TEST_LAYERS_DIR",
)


def known() -> set[str]:
    """The name of every `PRACTICE_*` variable that something of the project reads."""
    from cli.daemon_protocol import DaemonSettings
    from sandbox.settings import SandboxSettings
    from web.settings import Settings

    names = {PREFIX + name.upper() for model in (Settings, SandboxSettings) for name in model.model_fields}
    names |= {field.metadata["env"] for field in dataclasses.fields(DaemonSettings)}
    return names | set(READ_ELSEWHERE) | set(TOOLING)


def unknown(environ: Mapping[str, str]) -> list[T]:
    """A warning per `PRACTICE_*` variable of `environ` that nothing reads, with the closest known name."""
    names = known()
    warnings = []
    for name in sorted(n for n in environ if n.startswith(PREFIX) and n not in names):
        close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.8)
        if close:
            warnings.append(T("{name} is set, but no setting has that name: it is ignored (did you mean {close}?)",
                              name=name, close=close[0]))
        else:
            warnings.append(T("{name} is set, but no setting has that name: it is ignored", name=name))
    return warnings
