#!/usr/bin/env python3
"""Grade torch-practice exercises locally: `python practice/judge.py [EXERCISE [FILE]]`.

A thin script over the `practice` command (the same CLI `pip install` exposes).
"""

import sys
from pathlib import Path

# Run as a script, this folder comes first on sys.path; the project root must, so `judge` is the package.
ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)

from cli.main import main  # noqa: E402

if __name__ == "__main__":
    main()
