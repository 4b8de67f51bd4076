"""What the notebook says in its own words, in Chinese and English (each `T` carries both; the report's own
text comes translated from the judge). A message with fields is a function that fills them in."""

from judge.reports.i18n import T

HINTS = T("Hints (gentle to explicit)", zh="提示（由浅入深）")
LAST_HINT = T("That was the last hint; here it is again.", zh="这已经是最后一条提示，再显示一次。")
LOCAL_VERDICT = T("Graded on this machine: it does not count in a class (use --submit for that).",
                  zh="在本机评测：不计入班级成绩（要计入请加 --submit）。")
NEEDS_CELL = T("`%%practice EXERCISE` grades the cell below it: write your solution under that line.",
               zh="`%%practice EXERCISE` 评测它下面的单元格内容：把你的解答写在这一行下面。")
USAGE = T("usage: %%practice EXERCISE [--lang zh|en] [--submit [--note TEXT]] [--text|--json] over a cell; "
          "%practice list; %practice hint EXERCISE",
          zh="用法：在单元格首行写 %%practice EXERCISE [--lang zh|en] [--submit [--note TEXT]] [--text|--json]；"
             "%practice list；%practice hint EXERCISE")


def at_line(line: int) -> T:
    """Where in the cell: its own line numbers (the `%%practice` line is line 1)."""
    return T("cell line {line}", zh="单元格第 {line} 行", line=line)


def hint_n(number: int, count: int) -> T:
    return T("Hint {number}/{count}", zh="提示 {number}/{count}", number=number, count=count)


def no_hints(exercise: str) -> T:
    return T("{exercise} has no hints.", zh="{exercise} 没有提示。", exercise=exercise)


def grading(exercise: str) -> T:
    return T("Grading the cell against {exercise} in fresh processes (torch is compiling)…",
             zh="正在新进程中按 {exercise} 评测这个单元格（torch 正在编译）…", exercise=exercise)


def submitting(server: str, exercise: str) -> T:
    return T("Submitting the cell to {server} ({exercise}); the server grades it…",
             zh="正在把单元格提交到 {server}（{exercise}），由服务器评测…",
             server=server, exercise=exercise)


def progress(done: int, total: int, failed: int, name: str) -> T:
    return T("{done} of {total} checks done, {failed} failed; last: {name}",
             zh="已完成 {done}/{total} 项检查，失败 {failed} 项；最近：{name}",
             done=done, total=total, failed=failed, name=name)


def server_verdict(server: str) -> T:
    return T("Graded by {server}: this submission counts in your class.",
             zh="由 {server} 评测：这次提交计入你的班级。", server=server)
