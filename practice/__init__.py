"""torch-practice in Jupyter: `%load_ext practice`, then `%%practice EXERCISE` over a cell (docs/notebooks.md).

The cell's text is the solution file; it is graded by the judge (`judge.grade`) in fresh processes, never in
the notebook's kernel, and the report is shown as HTML (with plain-text and JSON forms). `%practice list`
lists the exercises, `%practice hint ID` shows the next hint, `%%practice ID --submit` grades the cell on
your class's server instead (after `practice login`). This module imports nothing heavy: the kernel loads
the extension in milliseconds.
"""


def load_ipython_extension(ipython) -> None:
    """Called by `%load_ext practice`: registers the `%practice` / `%%practice` magics."""
    from practice.magic import PracticeMagics

    ipython.register_magics(PracticeMagics)
