#!/usr/bin/env python3
"""Screenshots of `%%practice` reports in JupyterLab, in Chinese and English (docs/notebooks.md shows them).

    .venv/bin/python scripts/notebook_screenshots.py OUT_DIR

For each language: a notebook that grades the book's exercise twice (the original code, then the fix) is
executed with nbclient in a kernel of this Python, trusted (`jupyter trust`, so JupyterLab renders its HTML
as it did live), opened in JupyterLab (served offline from the installed package) and photographed by
headless chromium (PRACTICE_CHROMIUM, default /usr/bin/chromium) through Playwright. PRACTICE_LAB_DIR keeps
the executed notebooks (a second run photographs them without grading again).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "exercises" / "graph-break-step"
CHROMIUM = os.environ.get("PRACTICE_CHROMIUM", "/usr/bin/chromium")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_notebook(lang: str, folder: Path, kernel: str) -> Path:
    import nbformat
    from nbclient import NotebookClient

    path = folder / f"practice-{lang}.ipynb"
    if path.exists():  # executed by an earlier run in the same folder (PRACTICE_LAB_DIR)
        return path
    cells = ["%load_ext practice",
             f"%%practice graph-break-step --lang {lang}\n" + (BOOK / "starter.py").read_text(),
             f"%%practice graph-break-step --lang {lang}\n" + (BOOK / "solutions" / "reference.py").read_text()]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": "torch-practice", "language": "python"}
    NotebookClient(nb, kernel_name=kernel, timeout=900, resources={"metadata": {"path": str(folder)}}).execute()
    nbformat.write(nb, path)
    subprocess.run([sys.executable, "-m", "jupyter", "trust", str(path)], check=True, capture_output=True)
    return path


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="practice-lab-") as tmp:
        folder = Path(os.environ.get("PRACTICE_LAB_DIR") or tmp)
        spec = folder / "jupyter" / "kernels" / "torch-practice"
        spec.mkdir(parents=True, exist_ok=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "torch-practice", "language": "python"}))
        os.environ.update(JUPYTER_PATH=str(folder / "jupyter"), JUPYTER_DATA_DIR=str(folder / "data"),
                          JUPYTER_CONFIG_DIR=str(folder / "config"), PRACTICE_WORKSPACE=str(folder / "ws"))
        notebooks = [make_notebook(lang, folder, "torch-practice") for lang in ("zh", "en")]
        port, token = free_port(), secrets.token_hex(16)
        lab = subprocess.Popen([sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
                                f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
                                "--ServerApp.open_browser=False", "--LabApp.news_url=",
                                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
                               stdout=subprocess.DEVNULL, stderr=open(folder / "lab.log", "wb"))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                            args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": 1280, "height": 1700})
                deadline = time.monotonic() + 300
                while True:  # the server takes a while to listen on a busy machine
                    try:
                        page.goto(f"http://127.0.0.1:{port}/lab?token={token}")
                        break
                    except Exception:
                        if time.monotonic() > deadline or lab.poll() is not None:
                            print((folder / "lab.log").read_text(errors="replace")[-3000:], file=sys.stderr)
                            raise
                        time.sleep(2)
                for path in notebooks:
                    page.goto(f"http://127.0.0.1:{port}/lab/tree/{path.name}?token={token}&reset")
                    page.wait_for_selector(".tp-report", timeout=60_000)
                    page.wait_for_timeout(1500)
                    lang = path.stem.split("-")[1]
                    reports = page.locator(".jp-OutputArea-output:has(.tp-report)")
                    reports.nth(0).scroll_into_view_if_needed()
                    page.screenshot(path=str(out / f"notebook-{lang}-lab.png"))
                    for i, name in enumerate(("graph-break", "accepted")):
                        reports.nth(i).screenshot(path=str(out / f"notebook-{lang}-{name}.png"))
                    print(f"{lang}: {out}/notebook-{lang}-*.png")
                browser.close()
        finally:
            lab.terminate()
            lab.wait(20)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "test-artifacts/screenshots"))
