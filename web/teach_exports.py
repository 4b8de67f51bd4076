"""A class's downloads for its instructors: the progress table, every attempt's timeline and the verdicts regrades
changed, each as CSV in UTF-8 with a byte-order mark (spreadsheets then read Chinese)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import Response

from web.pages import lang_of
from web.progress import cell_text, changes_csv, csv_text
from web.teach import table_rows, taught_class
from web.timeline import class_timelines, timeline_csv

router = APIRouter(include_in_schema=False)


def csv_download(text: str, name: str, class_name: str) -> Response:
    """`text` as a download named `name`, or `<class>-<name>` where the browser takes a UTF-8 file name."""
    return Response("\ufeff" + text, media_type="text/csv; charset=utf-8", headers={
        "Content-Disposition": f"attachment; filename=\"{name}\"; filename*=UTF-8''{quote(class_name + '-' + name)}",
        "Cache-Control": "no-store"})


@router.get("/teach/classes/{class_id}/progress.csv")
def class_csv(request: Request, class_id: str) -> Response:
    """The table as shown (same learner order), one line per learner and exercise; exercise titles in the page's
    language."""
    _, class_ = taught_class(request, class_id)
    exercises, _, rows, _, _ = table_rows(request, class_)
    lang = lang_of(request)
    return csv_download(csv_text(rows, [(e.id, e.order, e.title.get(lang)) for e in exercises]), "progress.csv",
                        class_.name)


@router.get("/teach/classes/{class_id}/timeline.csv")
def timeline_csv_route(request: Request, class_id: str) -> Response:
    """Every attempt the class's members made in it, one line each, with the facts the judge measured, lines
    changed and the learner's note (web/timeline.py: CSV_HEAD)."""
    _, class_ = taught_class(request, class_id)
    names = {m.learner_id: m.display_name for m in request.app.state.classes.members(class_.id)}
    order = [e.id for e in request.app.state.course.all()]
    text = timeline_csv(class_timelines(request.app.state.store.engine, class_.id), names, order, cell_text)
    return csv_download(text, "timeline.csv", class_.name)


@router.get("/teach/classes/{class_id}/regrades.csv")
def regrades_csv(request: Request, class_id: str) -> Response:
    """Every verdict of the class that a regrade changed, newest first."""
    _, class_ = taught_class(request, class_id)
    names = {m.learner_id: m.display_name for m in request.app.state.classes.members(class_.id)}
    return csv_download(changes_csv(request.app.state.regrades.changes(class_id=class_.id), names), "regrades.csv",
                        class_.name)
