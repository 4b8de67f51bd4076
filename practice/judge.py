#!/usr/bin/env python3
"""Grade torch-practice exercises locally: `python practice/judge.py [EXERCISE [FILE]]`.

A thin script over the `practice` command (the same CLI `pip install` exposes). The folder is also the
`practice` package (the Jupyter extension: `%load_ext practice`); imported as `practice.judge`, this file
does nothing.
"""

import sys
from pathlib import Path

if __name__ == "__main__":
    # Run as a script, this folder comes first on sys.path; the project root must, so `judge` is the package.
    ROOT = Path(__file__).resolve().parent.parent
    sys.path[0] = str(ROOT)

    from cli.main import main

    main()
