"""Where a learner stands in their classes: their deadlines (on time, late) and the verdicts a regrade changed."""

from __future__ import annotations

from fastapi import Request

from web.deadlines import timing


def learner_course(request: Request, learner_id: str) -> dict:
    """What a learner reads of their course: their deadlines (on time / late) and their regraded verdicts."""
    state = request.app.state
    classes = {c.id: c for c, _ in state.classes.memberships(learner_id)}
    solved = state.store.first_solved(learner_id, state.regrades.newest_done(learner_id=learner_id))
    deadlines = [{"class_": classes[class_id], "exercise": state.course.get(exercise_id), "due_at": due,
                  "refuse_late": refuse, "timing": timing(due, solved.get(exercise_id))}
                 for class_id, exercise_id, due, refuse in state.deadlines.of_learner(learner_id)
                 if class_id in classes and state.course.get(exercise_id) is not None]
    deadlines.sort(key=lambda d: d["due_at"])
    return {"deadlines": deadlines, "changes": state.regrades.changes(learner_id=learner_id), "course": state.course}

