"""Classes: learners, instructors, classes, their instructors and members; every submission belongs to a learner.

Existing submissions are carried over: each learner id found in `submissions` (an anonymous cookie) becomes a
`learners` row, created at its first submission, before the foreign key is added; their submissions stay theirs.
Downgrading drops the new tables and keeps every submission.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "learners",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("password_hash", sa.String(255), nullable=True),
        sa.Column("signin_token_hash", sa.String(64), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_index("ix_learners_signin_token_hash", "learners", ["signin_token_hash"], unique=True)
    op.execute("INSERT INTO learners (id, created_at) "
               "SELECT learner_id, MIN(created_at) FROM submissions GROUP BY learner_id")
    with op.batch_alter_table("submissions") as batch:
        batch.create_foreign_key("fk_submissions_learner", "learners", ["learner_id"], ["id"])

    op.create_table(
        "instructors",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("username", sa.String(64), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_index("ix_instructors_username", "instructors", ["username"], unique=True)
    op.create_table(
        "classes",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("join_code", sa.String(32), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_index("ix_classes_join_code", "classes", ["join_code"], unique=True)
    op.create_table(
        "class_instructors",
        sa.Column("class_id", sa.String(32), sa.ForeignKey("classes.id", name="fk_class_instructors_class",
                                                           ondelete="CASCADE"), primary_key=True),
        sa.Column("instructor_id", sa.String(32), sa.ForeignKey(
            "instructors.id", name="fk_class_instructors_instructor", ondelete="CASCADE"), primary_key=True),
    )
    op.create_table(
        "class_members",
        sa.Column("class_id", sa.String(32), sa.ForeignKey("classes.id", name="fk_class_members_class",
                                                           ondelete="CASCADE"), primary_key=True),
        sa.Column("learner_id", sa.String(64), sa.ForeignKey("learners.id", name="fk_class_members_learner"),
                  primary_key=True),
        sa.Column("display_name", sa.String(64), nullable=False),
        sa.Column("name_key", sa.String(64), nullable=False),
        sa.Column("joined_at", WHEN, nullable=False),
    )
    op.create_index("ix_class_members_name", "class_members", ["class_id", "name_key"], unique=True)
    op.create_index("ix_class_members_learner_id", "class_members", ["learner_id"])


def downgrade() -> None:
    op.drop_table("class_members")
    op.drop_table("class_instructors")
    op.drop_table("classes")
    op.drop_table("instructors")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_constraint("fk_submissions_learner", type_="foreignkey")
    op.drop_table("learners")
