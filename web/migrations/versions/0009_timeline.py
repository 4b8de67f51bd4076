"""A learner's timeline: `submission_facts` (what the judge measured, stored with the first report) and
`submissions.note` (the learner's one-line note on an attempt). Questions about an accepted file:
`submission_questions` (with the measured answer), `question_answers` (each distinct answer once) and
`question_rules` (a class's "solved needs the questions", per exercise).

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
    op.create_table(
        "submission_questions",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("submission_id", sa.String(32), sa.ForeignKey(
            "submissions.id", name="fk_submission_questions_submission", ondelete="CASCADE"), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("question_json", sa.Text(), nullable=False),
        sa.Column("wrong", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("solved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_submission_questions_number", "submission_questions", ["submission_id", "number"],
                    unique=True)
    op.create_table(
        "question_answers",
        sa.Column("question_id", sa.String(32), sa.ForeignKey(
            "submission_questions.id", name="fk_question_answers_question", ondelete="CASCADE"), primary_key=True),
        sa.Column("answer", sa.String(32), primary_key=True),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "question_rules",
        sa.Column("class_id", sa.String(32), sa.ForeignKey("classes.id", name="fk_question_rules_class",
                                                           ondelete="CASCADE"), primary_key=True),
        sa.Column("exercise_id", sa.String(128), primary_key=True),
        sa.Column("require_questions", sa.Boolean(), nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_table("question_rules")
    op.drop_table("question_answers")
    op.drop_table("submission_questions")
    op.drop_table("submission_facts")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("note")
