"""The runner: the learner's process, in the sandbox. Untrusted; decides nothing."""
