"""The verifier's own modules (beside judge.checks and judge.remote): runs the hidden tests, decides every check."""
