"""The submissions table (a database made by `create_all` before migrations existed is adopted as it is).

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table("submissions"):
        return  # created by create_all before migrations: the same table
    op.create_table(
        "submissions",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("learner_id", sa.String(64), nullable=False),
        sa.Column("exercise_id", sa.String(128), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("verdict", sa.String(32), nullable=True),
        sa.Column("report_json", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_submissions_learner_id", "submissions", ["learner_id"])
    op.create_index("ix_learner_exercise", "submissions", ["learner_id", "exercise_id"])
    op.create_index("ix_status", "submissions", ["status"])


def downgrade() -> None:
    op.drop_table("submissions")
