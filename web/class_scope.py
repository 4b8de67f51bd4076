"""Which submissions a class sees of its members: what each did while in that class.

One learner may be in several classes (one account, one course). A class's instructors see a member's
submissions made since the member joined that class; the learner's first class also sees what they
submitted before joining any class (the anonymous work that joining kept). So the instructor of a class
joined later never sees what the learner did before it, in another class or alone. A submission made while
the learner is in several classes is seen by each of them: it was made in all of them.
"""

from __future__ import annotations

from sqlalchemy import Select, func, or_, select

from web.tables import MemberRow, SubmissionRow


def in_class(query: Select, class_id: str) -> Select:
    """`query` (over `submissions`) joined with the class's members and kept to what each did in the class."""
    first = (select(MemberRow.learner_id, func.min(MemberRow.joined_at).label("first_joined"))
             .group_by(MemberRow.learner_id).subquery())
    return query.join(MemberRow, MemberRow.learner_id == SubmissionRow.learner_id).join(
        first, first.c.learner_id == SubmissionRow.learner_id).where(
        MemberRow.class_id == class_id,
        or_(SubmissionRow.created_at >= MemberRow.joined_at, MemberRow.joined_at == first.c.first_joined))
