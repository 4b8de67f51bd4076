"""The loader: a sandboxed run, started by the trusted side, that loads an artifact's bytes (loader.py)."""
