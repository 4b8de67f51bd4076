"""Personal sign-in links expire: `learners.signin_token_issued_at`, when the link was made.

A link works once, within `signin_link_days` of this time (web/classes.py). Links made before this revision get
the upgrade's time, so they last the full period from now; downgrading drops the column.

Revision ID: 0008_signin_link_expiry
Revises: 0007_session_epochs
"""

from datetime import datetime, timezone

import sqlalchemy as sa
from alembic import op

revision = "0008_signin_link_expiry"
down_revision = "0007_session_epochs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("learners") as batch:
        batch.add_column(sa.Column("signin_token_issued_at", sa.DateTime(timezone=True), nullable=True))
    learners = sa.table("learners", sa.column("signin_token_hash"), sa.column("signin_token_issued_at"))
    op.get_bind().execute(sa.update(learners).where(learners.c.signin_token_hash.is_not(None))
                          .values(signin_token_issued_at=datetime.now(timezone.utc)))


def downgrade() -> None:
    with op.batch_alter_table("learners") as batch:
        batch.drop_column("signin_token_issued_at")
