"""Where things live, with one environment override each."""

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EXERCISES_DIR = Path(os.environ.get("PRACTICE_EXERCISES_DIR", PROJECT_ROOT / "exercises"))
WORKSPACE_DIR = Path(os.environ.get("PRACTICE_WORKSPACE", PROJECT_ROOT / "workspace"))
