"""The trusted parent: exercises, jobs, one grading, its outcome; the process that calls grade()."""
