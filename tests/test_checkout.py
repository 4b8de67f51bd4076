"""A checkout's own files: git ignores the project's virtualenv `.venv`, a folder or a link to one (a git worktree
shares its checkout's `.venv` through a link, which `.venv/` alone does not match)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("kind", ["folder", "link"])
def test_git_ignores_the_virtualenv(tmp_path, kind):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    shutil.copy(ROOT / ".gitignore", tmp_path / ".gitignore")
    if kind == "folder":
        (tmp_path / ".venv").mkdir()
        (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    else:
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / ".venv").symlink_to(tmp_path / "elsewhere")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path, check=True,
                            capture_output=True, text=True).stdout
    assert ".venv" not in status, status
