"""The `practice` command: a front-end over the grading core."""
