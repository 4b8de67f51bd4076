"""A learner's timeline: `submission_facts` (what the judge measured, stored with the first report) and
`submissions.note` (the learner's one-line note on an attempt).

Submissions graded before this revision get no facts row: the timeline reads their facts from the stored report
(web/timeline.py). Downgrading drops the table and the column.

Revision ID: 0009_timeline
Revises: 0008_signin_link_expiry
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_timeline"
down_revision = "0008_signin_link_expiry"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("note", sa.String(200), nullable=True))
    op.create_table(
        "submission_facts",
        sa.Column("submission_id", sa.String(32), sa.ForeignKey(
            "submissions.id", name="fk_submission_facts_submission", ondelete="CASCADE"), primary_key=True),
        sa.Column("facts_json", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("submission_facts")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("note")
