"""Alembic environment: run by `web.db.upgrade`, which hands over an open connection (batch mode for SQLite)."""

from alembic import context

from web.tables import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
