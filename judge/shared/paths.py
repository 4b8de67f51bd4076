"""Where things live, with one environment override each.

In a checkout the course is `exercises/` and your copies go to `workspace/` beside it. Installed with pip
(no checkout), the course is the copy shipped in the `practice` package (`practice/course`) and your copies
go to `./workspace` of the current folder.
"""

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = (PROJECT_ROOT / "exercises").is_dir()
SHIPPED_COURSE = PROJECT_ROOT / "practice" / "course"
EXERCISES_DIR = Path(os.environ.get("PRACTICE_EXERCISES_DIR",
                                    PROJECT_ROOT / "exercises" if CHECKOUT else SHIPPED_COURSE))
WORKSPACE_DIR = Path(os.environ.get("PRACTICE_WORKSPACE",
                                    PROJECT_ROOT / "workspace" if CHECKOUT else Path.cwd() / "workspace"))
CONFIG_DIR_ENV = "PRACTICE_CONFIG_DIR"


def config_dir() -> Path:
    """The user's torch-practice folder (credentials, the grading secret): `PRACTICE_CONFIG_DIR`, else
    `$XDG_CONFIG_HOME/torch-practice` (~/.config/torch-practice)."""
    given = os.environ.get(CONFIG_DIR_ENV)
    if given:
        return Path(given).expanduser()
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "torch-practice"
