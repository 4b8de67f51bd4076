"""The job queue's own tables and functions (Procrastinate's schema), on PostgreSQL only.

SQLite runs the embedded queue and needs none of it. Upgrading Procrastinate to a version that changes its
schema takes a new revision here that runs its migration scripts (procrastinate/sql/migrations/).

Revision ID: 0003
Revises: 0002
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    from procrastinate.schema import SchemaManager

    # Through the driver without parameters: the schema's own '%' must not be read as placeholders.
    with op.get_bind().connection.dbapi_connection.cursor() as cursor:
        cursor.execute(SchemaManager.get_schema())


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("""
        DO $$ DECLARE r record; BEGIN
          FOR r IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema()
                   AND tablename LIKE 'procrastinate%' LOOP
            EXECUTE 'DROP TABLE IF EXISTS ' || quote_ident(r.tablename) || ' CASCADE';
          END LOOP;
          FOR r IN SELECT p.oid::regprocedure AS f FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                   WHERE n.nspname = current_schema() AND p.proname LIKE 'procrastinate%' LOOP
            EXECUTE 'DROP FUNCTION IF EXISTS ' || r.f || ' CASCADE';
          END LOOP;
          FOR r IN SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
                   WHERE n.nspname = current_schema() AND t.typname LIKE 'procrastinate%' AND t.typtype IN ('e', 'c') LOOP
            EXECUTE 'DROP TYPE IF EXISTS ' || quote_ident(r.typname) || ' CASCADE';
          END LOOP;
        END $$;
    """)
