"""Learners' tokens for `practice submit` and notebooks, and where each submission came from.

`learner_tokens` holds a SHA-256 per token (never the token); `submissions.origin` is 'browser' for every
submission made before (the only way there was), 'cli' or 'notebook' for those sent with a token.
Downgrading drops both and keeps every submission.

Revision ID: 0005_learner_tokens
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_learner_tokens"
down_revision = "0004"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("origin", sa.String(16), nullable=False, server_default="browser"))
    op.create_table(
        "learner_tokens",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("learner_id", sa.String(64), sa.ForeignKey("learners.id", name="fk_learner_tokens_learner",
                                                             ondelete="CASCADE"), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("label", sa.String(100), nullable=False),
        sa.Column("created_by", sa.String(16), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("last_used_at", WHEN, nullable=True),
        sa.Column("revoked_at", WHEN, nullable=True),
    )
    op.create_index("ix_learner_tokens_token_hash", "learner_tokens", ["token_hash"], unique=True)
    op.create_index("ix_learner_tokens_learner_id", "learner_tokens", ["learner_id"])


def downgrade() -> None:
    op.drop_index("ix_learner_tokens_learner_id", "learner_tokens")
    op.drop_index("ix_learner_tokens_token_hash", "learner_tokens")
    op.drop_table("learner_tokens")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("origin")
