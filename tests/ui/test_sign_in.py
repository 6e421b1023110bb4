"""Sign-in through Streamlit's [auth] settings in AppTest: no page and no uploader before it, the
signed-in name drawn as plain text, and the start-up line about it (ui/sign_in.py)."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from tests.ui.conftest import APP, RUN_TIMEOUT_S, shown
from ui.sign_in import OFF_LINE, start_up_line

AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "a-long-random-string-for-tests-only",
    "client_id": "capplan",
    "client_secret": "not-a-real-secret",
    "server_metadata_url": "https://idp.example.com/.well-known/openid-configuration",
}
PAGES = ("ui/plan.py", "ui/curves.py", "ui/runs.py", "ui/probe.py", "ui/models.py")
BEACON = "![x](http://127.0.0.1:9/beacon)"


def _app(user: dict[str, object]) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S)
    at.secrets["auth"] = AUTH
    at.user = user
    return at.run()


def test_before_sign_in_no_page_draws_an_uploader(store_url: str) -> None:
    at = _app({})
    for path in PAGES:
        at.switch_page(path).run()
        assert not at.exception, [e.value for e in at.exception]
        assert [t.value for t in at.title] == ["capplan"], path
        assert not at.get("file_uploader"), path
    assert [b.label for b in at.button] == ["Sign in"]


def test_a_signed_in_planner_gets_the_uploaders_and_a_viewer_none(store_url: str) -> None:
    at = _app({"is_logged_in": True, "name": "Ada", "email": "ada@example.com"})
    at.switch_page("ui/runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    # Nobody mapped: a viewer (the mapping's default), told why the uploaders are not there.
    assert not at.get("file_uploader")
    assert any("cannot import or probe runs" in c.value for c in at.caption)
    planner = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S)
    planner.secrets["auth"] = AUTH
    planner.secrets["roles"] = {"planners": ["Ada@Example.com"]}
    planner.user = {"is_logged_in": True, "name": "Ada", "email": "ada@example.com"}
    planner.run()
    planner.switch_page("ui/runs.py").run()
    assert not planner.exception, [e.value for e in planner.exception]
    assert len(planner.get("file_uploader")) == 2


def test_a_display_name_is_drawn_as_plain_text(store_url: str) -> None:
    at = _app({"is_logged_in": True, "name": f"Eve {BEACON} **bold**", "email": "e@x.example"})
    assert not at.exception, [e.value for e in at.exception]
    caption = at.sidebar.caption[0].value
    assert shown(caption) == f"Signed in as Eve {BEACON} **bold**"
    html = MarkdownIt().render(caption)
    assert "<img" not in html and "<strong>" not in html, html


def test_the_start_up_line_says_whether_sign_in_is_on() -> None:
    assert start_up_line(None) == OFF_LINE
    assert "anyone who can reach this port" in OFF_LINE
    assert start_up_line(AUTH) == "sign-in: on (provider from [auth])"
    named = {"redirect_uri": "x", "okta": {"client_id": "a"}, "google": {"client_id": "b"}}
    assert start_up_line(named) == "sign-in: on (provider google, okta)"


@pytest.mark.parametrize("markdown", [BEACON, "[link](https://evil.example)", "$x$ :red[y]"])
def test_plain_leaves_no_markdown_element(markdown: str) -> None:
    from ui.text import plain

    html = MarkdownIt().render(f"Signed in as {plain(markdown)}")
    assert "<img" not in html and "<a " not in html
