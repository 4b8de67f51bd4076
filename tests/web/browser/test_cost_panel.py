"""The report's cost section on the exercise page: a bar chart and a table, in Chinese and English, within the
page's CSP (the bars' widths are set through CSSOM, never a style attribute). Fixture course, a grader whose
report carries the cost section fuse-rmsnorm-silu's reference gets on torch 2.13."""

from __future__ import annotations

import pytest

from judge.reports.report import CompiledCost, CostFigures, CostSection, EagerCost, Report
from tests.web.browser.conftest import open_page
from tests.web.conftest import FakeGrader
from tests.web.live import LiveServer
from web.app import create_app

pytestmark = pytest.mark.browser

SCREENSHOTS = "/work/screenshots"


def section() -> CostSection:
    fused = CompiledCost(kernels=["cpp_fused_add_mean_mul_pow_rsqrt_silu_0"], bytes_estimate=4352)
    eager = EagerCost(ops=7, bytes_read=10592, bytes_written=8288)
    return CostSection(inputs="x: float32[8, 64], w: float32[64]", torch_version="2.13.0+cpu", figures=[
        CostFigures(who="learner", eager=eager, compiled=fused),
        CostFigures(who="reference", eager=eager, compiled=fused),
        CostFigures(who="starter", eager=eager, compiled=CompiledCost(kernels=["cpp_fused_silu_0"],
                                                                      bytes_estimate=4096, eager_ops_outside=6,
                                                                      eager_bytes_outside=14784))])


class CostGrader(FakeGrader):
    def __call__(self, submission, publish) -> Report:
        report = super().__call__(submission, publish)
        report.cost = section()
        return report


@pytest.fixture
def live(settings):
    with LiveServer(create_app(settings, grade=CostGrader())) as server:
        yield server


@pytest.mark.parametrize("lang, title, yours", [("zh", "编译的收益", "你的"), ("en", "What compiling bought", "yours")])
def test_cost_panel(browser, live, shots, page_errors, lang, title, yours):
    context, page = open_page(browser, page_errors, width=1100, height=900)
    page.goto(f"{live.url}/exercises/add-one?lang={lang}")
    page.wait_for_selector(".cm-content")
    page.click("#submit")  # the starter as it is: the grader's report carries the cost section either way
    panel = page.wait_for_selector(".cost-view", timeout=20000)
    assert title in panel.inner_text()
    rows = page.locator(".cost-table tbody tr")
    assert rows.count() == 3 and yours in rows.nth(0).inner_text() and "4.3 KiB" in rows.nth(0).inner_text()
    assert "4.3×" in rows.nth(0).inner_text() and "1 + 0 + 6" in rows.nth(2).inner_text()
    widths = page.eval_on_selector_all(".cost-bar", "bars => bars.map(b => b.style.width)")
    assert widths == ["100%", "23.1%", "23.1%", "100%"]  # yours eager, yours / reference / original compiled
    panel.scroll_into_view_if_needed()
    shots(page, f"cost-{lang}")
    panel.screenshot(path=f"{SCREENSHOTS}/cost-{lang}.png")
    assert not page_errors, page_errors
    context.close()
