"""The UI's words in both languages of the course (zh is the book's language and the default)."""

from __future__ import annotations

LANGS = ("zh", "en")
DEFAULT_LANG = "zh"

STRINGS: dict[str, dict[str, str]] = {
    "app_title": {"zh": "torch.compile 练习", "en": "torch.compile practice"},
    "exercises": {"zh": "练习", "en": "Exercises"},
    "title": {"zh": "标题", "en": "Title"},
    "difficulty": {"zh": "难度", "en": "Difficulty"},
    "tags": {"zh": "标签", "en": "Tags"},
    "state": {"zh": "状态", "en": "State"},
    "state_not_started": {"zh": "未开始", "en": "not started"},
    "state_attempted": {"zh": "已尝试", "en": "attempted"},
    "state_solved": {"zh": "已解决", "en": "solved"},
    "switch_lang": {"zh": "English", "en": "中文"},
    "statement": {"zh": "题目", "en": "Statement"},
    "your_code": {"zh": "你的代码", "en": "Your code"},
    "submit": {"zh": "提交", "en": "Submit"},
    "submit_hint": {"zh": "Ctrl/⌘+Enter 提交 · Tab 缩进 · Esc 然后 Tab 离开编辑器",
                    "en": "Ctrl/⌘+Enter submits · Tab indents · Esc then Tab leaves the editor"},
    "reset": {"zh": "恢复初始代码", "en": "Reset to starter"},
    "reset_confirm": {"zh": "用初始代码替换你的代码？你的草稿将丢失。",
                      "en": "Replace your code with the starter? Your draft will be lost."},
    "hints": {"zh": "提示", "en": "Hints"},
    "show_hint": {"zh": "显示下一条提示", "en": "Show next hint"},
    "no_more_hints": {"zh": "没有更多提示了", "en": "No more hints"},
    "no_hints": {"zh": "这道题没有提示。", "en": "This exercise has no hints."},
    "reference": {"zh": "参考答案", "en": "Reference solution"},
    "reference_locked": {"zh": "通过之后可以查看参考答案。", "en": "The reference solution unlocks after an accepted submission."},
    "history": {"zh": "提交记录", "en": "Submissions"},
    "no_history": {"zh": "还没有提交。", "en": "No submissions yet."},
    "result": {"zh": "评测结果", "en": "Result"},
    "idle": {"zh": "写好代码后点击提交。", "en": "Write your code, then Submit."},
    "queued": {"zh": "排队中…", "en": "Queued…"},
    "running": {"zh": "评测中…", "en": "Running…"},
    "checks_done": {"zh": "已完成检查", "en": "checks finished"},
    "raw_output": {"zh": "原始输出", "en": "Raw output"},
    "self_checked": {"zh": "自检练习：部分结论依据你的代码进程自己报告的结果，不能完全排除伪造。",
                     "en": "Self-checked exercise: part of this verdict rests on what your code's own process "
                           "reported, so it cannot rule out forgery."},
    "truncated": {"zh": "（已截断）", "en": "(truncated)"},
    "line": {"zh": "第 {n} 行", "en": "line {n}"},
    "graph_break_at": {"zh": "图中断", "en": "Graph break"},
    "dynamo_reason": {"zh": "Dynamo 给出的原因", "en": "Dynamo's reason"},
    "case": {"zh": "输入", "en": "Input case"},
    "max_abs_error": {"zh": "最大绝对误差", "en": "max abs error"},
    "max_rel_error": {"zh": "最大相对误差", "en": "max rel error"},
    "mismatched": {"zh": "不一致的元素", "en": "mismatched elements"},
    "index": {"zh": "下标", "en": "index"},
    "expected": {"zh": "期望", "en": "expected"},
    "actual": {"zh": "实际", "en": "actual"},
    "compiles": {"zh": "编译次数", "en": "compiles"},
    "traceback": {"zh": "调用栈", "en": "Traceback"},
    "error": {"zh": "出错了", "en": "Something went wrong"},
    "too_many": {"zh": "提交太频繁，请 {s} 秒后再试。", "en": "Too many submissions; try again in {s} s."},
    "view": {"zh": "查看", "en": "View"},
    "load_code": {"zh": "载入这份代码", "en": "Load this code"},
    "load_confirm": {"zh": "用这次提交的代码替换编辑器内容？", "en": "Replace the editor's code with this submission?"},
    "back": {"zh": "← 全部练习", "en": "← All exercises"},
    "api_docs": {"zh": "API 文档", "en": "API docs"},
    "not_found": {"zh": "没有这道练习。", "en": "No such exercise."},
    "chapter": {"zh": "章节", "en": "Chapter"},
    "draft_saved": {"zh": "草稿已保存在本浏览器", "en": "Draft saved in this browser"},
    "passed": {"zh": "通过", "en": "passed"},
    "failed": {"zh": "未通过", "en": "failed"},
}

VERDICTS: dict[str, dict[str, str]] = {
    "ACCEPTED": {"zh": "通过", "en": "Accepted"},
    "WRONG_ANSWER": {"zh": "答案错误", "en": "Wrong answer"},
    "GRAPH_BREAK": {"zh": "图中断", "en": "Graph break"},
    "RECOMPILE": {"zh": "重新编译", "en": "Recompile"},
    "COMPILE_ERROR": {"zh": "编译错误", "en": "Compile error"},
    "RUNTIME_ERROR": {"zh": "运行错误", "en": "Runtime error"},
    "LOAD_ERROR": {"zh": "加载错误", "en": "Load error"},
    "FORBIDDEN": {"zh": "禁止的操作", "en": "Forbidden"},
    "TIME_LIMIT": {"zh": "超时", "en": "Time limit exceeded"},
    "MEMORY_LIMIT": {"zh": "内存超限", "en": "Memory limit exceeded"},
    "OUTPUT_LIMIT": {"zh": "输出超限", "en": "Output limit exceeded"},
    "INTERNAL_ERROR": {"zh": "评测系统错误", "en": "Internal error"},
}


def pick_lang(value: str | None) -> str:
    return value if value in LANGS else DEFAULT_LANG


def strings(lang: str) -> dict[str, str]:
    """Every UI string in `lang`, for templates and for the page's script."""
    table = {key: texts[lang] for key, texts in STRINGS.items()}
    table.update({f"verdict_{v}": texts[lang] for v, texts in VERDICTS.items()})
    return table
