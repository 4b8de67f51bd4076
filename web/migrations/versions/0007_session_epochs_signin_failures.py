"""Revocable sessions, sign-in backoff, display names compared by NFKC + casefold.

`learners.session_epoch` and `instructors.session_epoch` (0 for everyone, so every cookie in use stays
valid until its account's next sign-out, new link or new password); `signin_failures` counts failed
sign-ins per account name and client address. Each member's `name_key` is recomputed as `web.names.name_key`
(NFKC + casefold); where two members of a class would then share a key, theirs stay as they were.
Downgrading drops the table and the columns (the keys stay: casefolded NFC and NFKC agree on every name
that was accepted before, save compatibility characters).

Revision ID: 0007_session_epochs
Revises: 0006_course
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_session_epochs"
down_revision = "0006_course"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("learners", "instructors"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("session_epoch", sa.Integer(), nullable=False, server_default="0"))
    op.create_table(
        "signin_failures",
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("blocked_until", sa.DateTime(timezone=True), nullable=True),
    )
    _rekey_members()


def _rekey_members() -> None:
    from web.names import name_key

    conn = op.get_bind()
    members = sa.table("class_members", sa.column("class_id"), sa.column("learner_id"), sa.column("display_name"),
                       sa.column("name_key"))
    rows = conn.execute(sa.select(members.c.class_id, members.c.learner_id, members.c.display_name,
                                  members.c.name_key)).all()
    taken: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row.class_id, name_key(row.display_name))
        taken[key] = taken.get(key, 0) + 1
    for row in rows:
        new = name_key(row.display_name)
        if new != row.name_key and taken[(row.class_id, new)] == 1:
            conn.execute(sa.update(members).where(members.c.class_id == row.class_id,
                                                  members.c.learner_id == row.learner_id).values(name_key=new))


def downgrade() -> None:
    op.drop_table("signin_failures")
    for table in ("instructors", "learners"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("session_epoch")
