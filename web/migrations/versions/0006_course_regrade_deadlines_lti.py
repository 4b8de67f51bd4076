"""A graded course: exercise versions on submissions, regrades, deadlines with extensions, LTI 1.3.

Existing submissions keep their reports; their `fingerprint` stays NULL (graded before versions were recorded,
so the class page counts them as from an older version). Downgrading drops the new tables and the column.

Revision ID: 0006_course
Revises: 0005_learner_tokens
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_course"
down_revision = "0005_learner_tokens"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def _fk(table: str, name: str, ondelete: str | None = "CASCADE") -> sa.ForeignKey:
    return sa.ForeignKey(table, name=name, ondelete=ondelete)


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("fingerprint", sa.String(64), nullable=True))

    op.create_table(
        "regrades",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("submission_id", sa.String(32), _fk("submissions.id", "fk_regrades_submission"), nullable=False),
        sa.Column("exercise_id", sa.String(128), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("requested_by", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("verdict", sa.String(32), nullable=True),
        sa.Column("report_json", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("finished_at", WHEN, nullable=True),
    )
    op.create_index("ix_regrades_submission_fingerprint", "regrades", ["submission_id", "fingerprint"], unique=True)
    op.create_index("ix_regrades_exercise", "regrades", ["exercise_id"])
    op.create_index("ix_regrades_status", "regrades", ["status"])

    op.create_table(
        "deadlines",
        sa.Column("class_id", sa.String(32), _fk("classes.id", "fk_deadlines_class"), primary_key=True),
        sa.Column("exercise_id", sa.String(128), primary_key=True),
        sa.Column("due_at", WHEN, nullable=False),
        sa.Column("refuse_late", sa.Boolean(), nullable=False, server_default="0"),
    )
    op.create_table(
        "deadline_extensions",
        sa.Column("class_id", sa.String(32), _fk("classes.id", "fk_extensions_class"), primary_key=True),
        sa.Column("exercise_id", sa.String(128), primary_key=True),
        sa.Column("learner_id", sa.String(64), _fk("learners.id", "fk_extensions_learner", None), primary_key=True),
        sa.Column("due_at", WHEN, nullable=False),
    )

    op.create_table(
        "lti_keys",
        sa.Column("kid", sa.String(64), primary_key=True),
        sa.Column("private_pem", sa.Text(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_table(
        "lti_platforms",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("issuer", sa.String(255), nullable=False),
        sa.Column("client_id", sa.String(255), nullable=False),
        sa.Column("auth_login_url", sa.String(1000), nullable=False),
        sa.Column("auth_token_url", sa.String(1000), nullable=False),
        sa.Column("jwks_url", sa.String(1000), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_index("ix_lti_platforms_issuer_client", "lti_platforms", ["issuer", "client_id"], unique=True)
    op.create_table(
        "lti_deployments",
        sa.Column("platform_id", sa.String(32), _fk("lti_platforms.id", "fk_lti_deployments_platform"),
                  primary_key=True),
        sa.Column("deployment_id", sa.String(255), primary_key=True),
        sa.Column("class_id", sa.String(32), _fk("classes.id", "fk_lti_deployments_class"), nullable=False),
    )
    op.create_table(
        "lti_states",
        sa.Column("state", sa.String(64), primary_key=True),
        sa.Column("nonce", sa.String(64), nullable=False),
        sa.Column("platform_id", sa.String(32), _fk("lti_platforms.id", "fk_lti_states_platform"), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("used_at", WHEN, nullable=True),
    )
    op.create_index("ix_lti_states_nonce", "lti_states", ["nonce"], unique=True)
    op.create_table(
        "lti_users",
        sa.Column("platform_id", sa.String(32), _fk("lti_platforms.id", "fk_lti_users_platform"), primary_key=True),
        sa.Column("sub", sa.String(255), primary_key=True),
        sa.Column("learner_id", sa.String(64), _fk("learners.id", "fk_lti_users_learner", None), nullable=False),
    )
    op.create_table(
        "lti_grades",
        sa.Column("platform_id", sa.String(32), _fk("lti_platforms.id", "fk_lti_grades_platform"), primary_key=True),
        sa.Column("lineitem", sa.String(1000), primary_key=True),
        sa.Column("sub", sa.String(255), primary_key=True),
        sa.Column("learner_id", sa.String(64), nullable=False),
        sa.Column("exercise_id", sa.String(128), nullable=False),
        sa.Column("sent_score", sa.Float(), nullable=True),
        sa.Column("sent_at", WHEN, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
    )
    op.create_index("ix_lti_grades_learner_exercise", "lti_grades", ["learner_id", "exercise_id"])


def downgrade() -> None:
    for table in ("lti_grades", "lti_users", "lti_states", "lti_deployments", "lti_platforms", "lti_keys",
                  "deadline_extensions", "deadlines", "regrades"):
        op.drop_table(table)
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("fingerprint")
