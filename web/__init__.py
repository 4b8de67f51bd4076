"""The web front-end: a FastAPI app (`web.app.create_app`) that renders the same `Report` the CLI prints."""
