"""The analytics screen in a real browser: the SVG charts draw the figures created here
(bars, their values and days, the cap line), each chart's table opens, and the date-range
picker switches to 30 days."""

from __future__ import annotations

import pytest

from tests.browser import BROWSER_TEST
from tests.conftest import make_tenant

from .conftest import shot
from .test_analytics_views import day, seed

pytestmark = [*BROWSER_TEST, pytest.mark.django_db(transaction=True)]

BARS = """svg => Object.fromEntries([...svg.querySelectorAll('rect[data-series]')].map(
    r => [r.dataset.series + ' ' + r.dataset.day, Number(r.dataset.value)]))"""


def test_the_charts_draw_the_data_of_the_organization(page_as):
    tenant = make_tenant()
    seed(tenant.org)
    page = page_as(tenant.owner, tenant.org, "/dashboard/analytics/")

    def bars(chart: str) -> dict[str, float]:
        return page.locator(f"svg[data-chart={chart}]").evaluate(BARS)

    assert bars("messages-by-channel") == {
        f"sms {day(0)}": 4, f"whatsapp {day(0)}": 2, f"email {day(2)}": 1,
        f"sms {day(2)}": 1, f"sms {day(5)}": 1}
    assert bars("delivery-rate") == {f"delivery rate {day(0)}": 83.3,
                                     f"delivery rate {day(2)}": 50}
    assert bars("verify-conversion") == {f"verified {day(1)}": 2, f"not verified {day(1)}": 1,
                                         f"not verified {day(3)}": 1}
    assert bars("llm-spend") == {f"spend {day(0)}": 250, f"spend {day(1)}": 750}
    # Bars stack (whatsapp drawn on top of sms) and scale (4 sms draw twice 2 whatsapp).
    today = f"svg[data-chart=messages-by-channel] rect[data-day='{day(0)}']"
    sms, wa = (page.locator(f"{today}[data-series={s}]") for s in ("sms", "whatsapp"))
    height = float(sms.get_attribute("height"))
    assert height == pytest.approx(2 * float(wa.get_attribute("height")), abs=0.05)
    assert float(wa.get_attribute("y")) + float(wa.get_attribute("height")) == pytest.approx(
        float(sms.get_attribute("y")), abs=0.05)
    # The daily cap (6.00) line sits below the 7.50 day's bar top.
    cap_y = float(page.locator("svg[data-chart=llm-spend] line.reference").get_attribute("y1"))
    top = float(page.locator(f"svg[data-chart=llm-spend] rect[data-day='{day(1)}']")
                .get_attribute("y"))
    assert top < cap_y
    # Titles and the data table fallback.
    assert page.locator("#chart-verify-conversion h2").inner_text() == "Verify conversion"
    assert "50% converted (2 of 4)" in page.locator("#chart-verify-conversion").inner_text()
    table = page.locator("#chart-llm-spend details")
    assert not table.locator("table").is_visible()
    table.locator("summary").click()
    assert f"{day(1)}\t7.50" in table.locator("table").inner_text()
    assert page.locator("#month-cap").inner_text() == "100.00"
    shot(page, "analytics")

    page.select_option("#range", "30")
    page.click("#range-form button[type=submit]")
    page.wait_for_url("**/dashboard/analytics/?range=30")
    assert bars("messages-by-channel")[f"sms {day(9)}"] == 1
    assert page.locator("svg[data-chart=llm-spend] text.day").count() <= 9
