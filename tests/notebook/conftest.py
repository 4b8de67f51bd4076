"""A Jupyter kernel of this virtualenv for the notebook tests: a kernel spec pointing at `sys.executable`,
found through JUPYTER_PATH (nothing is installed into the user's Jupyter folders)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

KERNEL = "torch-practice-test"


@pytest.fixture
def kernel_name(tmp_path, monkeypatch) -> str:
    pytest.importorskip("ipykernel")
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "torch-practice (tests)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("PRACTICE_WORKSPACE", str(tmp_path / "workspace"))
    monkeypatch.setenv("PRACTICE_LANG", "en")
    return KERNEL


def execute(cells: list[str], kernel_name: str, folder: Path, timeout: int = 600):
    """A notebook of these code cells, executed by nbclient in `kernel_name`; the executed notebook."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, kernel_name=kernel_name, timeout=timeout, allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return nb
