"""The suite's plugins, declared at the repository's root so that pytest loads them whatever the arguments:
`pytest --lane sandbox` names a lane, but pytest first reads "sandbox" as this folder's `sandbox/` and would then
skip tests/conftest.py, leaving `--lane` unknown."""

# Every test in a lane with a CPU budget (tests/lanes.py); pytester tests the lanes themselves (tests/test_lanes.py).
pytest_plugins = ("tests.lane_plugin", "pytester")
