"""Roles in a real browser, signed in through a real OpenID Connect provider: the app runs with
an [auth] section (Streamlit's own st.login) pointing at oidc-provider-mock on a loopback port
and a [roles] mapping; a viewer, a planner and an admin each sign in on the provider's form in a
fresh browser context and see only the controls their role allows; the admin deletes a run,
undoes it, and the Audit page names them for both.

The app reads its own secrets file (STREAMLIT_SECRETS_FILES, Streamlit's `secrets.files`
option), never the repository's .streamlit/secrets.toml."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from oidc_provider_mock import User, run_server_in_thread  # type: ignore[import-untyped]
from playwright.sync_api import Browser, Locator, Page, expect

from tests.browser.app_server import AppStartError, RunningApp, running_app
from tests.browser.conftest import VIEWPORT
from tests.browser.pages import PAGE_TIMEOUT_MS, app_idle, data_frame, grid_rows, open_page
from tests.stores import Stores

pytestmark = [pytest.mark.browser, pytest.mark.alone]

CLIENT_ID = "capplan-browser-test"


@dataclass(frozen=True, slots=True)
class Person:
    """Someone the identity provider knows: the subject typed on its form and their claims."""

    sub: str
    email: str
    name: str
    role: str


# The provider gives e-mail addresses as their owners typed them; the mapping and the trail use
# them lower-cased (team/mapping.py), so the admin's is given in mixed case on purpose.
VIEWER = Person("u-vic", "vic@example.com", "Vic Viewer", "viewer")
PLANNER = Person("u-pat", "pat@example.com", "Pat Planner", "planner")
ADMIN = Person("u-ada", "Ada@Example.com", "Ada Admin", "admin")


def _secrets_toml(provider_port: int) -> str:
    """The app's secrets: sign-in at the mock provider (any client id and secret pass there),
    and the operator's role mapping; everyone else is a viewer."""
    return f"""
[auth]
redirect_uri = "http://127.0.0.1:{{port}}/oauth2callback"
cookie_secret = "{secrets.token_hex(32)}"
client_id = "{CLIENT_ID}"
client_secret = "{secrets.token_hex(16)}"
server_metadata_url = "http://127.0.0.1:{provider_port}/.well-known/openid-configuration"

[roles]
admins = ["ada@example.com"]
planners = ["{PLANNER.email}"]
default = "viewer"
"""


@pytest.fixture(scope="module")
def signed_in_app(
    tmp_path_factory: pytest.TempPathFactory, chromium_executable: str, stores: Stores
) -> Iterator[RunningApp]:
    """The real app on a demo store, sign-in on, behind a mock OpenID provider on a free port."""
    folder = tmp_path_factory.mktemp("browser-team")
    users = [
        User(sub=person.sub, claims={"email": person.email, "name": person.name})
        for person in (VIEWER, PLANNER, ADMIN)
    ]
    with run_server_in_thread(port=0, user_claims=users) as provider:
        secrets_file = folder / "secrets.toml"
        secrets_file.write_text(_secrets_toml(provider.server_port), encoding="utf-8")
        with pytest.MonkeyPatch.context() as patch:
            # Read by Streamlit's command line as --secrets.files: the repository's own
            # .streamlit/secrets.toml (and ~/.streamlit's) are not read at all.
            patch.setenv("STREAMLIT_SECRETS_FILES", str(secrets_file))
            try:
                with running_app(stores.demo("browser-team"), folder / "streamlit.log") as app:
                    patch.delenv("STREAMLIT_SECRETS_FILES")
                    # The server says so once it runs: these secrets, and sign-in, are on.
                    assert _wait_for_line(app.log, "sign-in: on (provider from [auth])")
                    yield app
            except AppStartError as exc:
                pytest.fail(str(exc), pytrace=False)


def _wait_for_line(log: Path, text: str, timeout_s: float = 60.0) -> bool:
    """True once the app's log holds text (the start-up line is printed after the health check
    may already answer)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if text in log.read_text(encoding="utf-8", errors="replace"):
            return True
        time.sleep(0.25)
    return False


def _visible(locator: Locator) -> None:
    """Wait for locator as long as a page may take to draw (a loaded 2-core box is slow)."""
    expect(locator).to_be_visible(timeout=PAGE_TIMEOUT_MS)


def _sign_in(page: Page, app: RunningApp, person: Person) -> None:
    """From the app's sign-in screen through the provider's form (the subject typed in) and
    back, signed in as person."""
    page.goto(app.url)
    main = page.get_by_test_id("stMain")
    _visible(main.get_by_text("This capplan needs you to sign in"))
    # No page is drawn before sign-in: no menu, no uploader.
    expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)
    main.get_by_role("button", name="Sign in", exact=True).click()
    _visible(page.get_by_role("heading", name="Authorize Client"))
    _visible(page.get_by_text(CLIENT_ID, exact=True))
    page.get_by_placeholder("sub").fill(person.sub)
    page.get_by_role("button", name="Authorize", exact=True).click()
    sidebar = page.get_by_test_id("stSidebar")
    _visible(sidebar.get_by_text(f"Signed in as {person.name}", exact=True))
    assert page.url.startswith(app.url), page.url


def _role_shown(page: Page, person: Person) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    _visible(sidebar.get_by_text(re.compile(rf"^Role: {person.role} \(")))


def _refused(page: Page, role: str, action: str) -> None:
    line = f"Your role ({role}) cannot {action}: that needs"
    _visible(page.get_by_test_id("stMain").get_by_text(line))


def _no_button(page: Page, name: str | re.Pattern[str]) -> None:
    expect(page.get_by_test_id("stMain").get_by_role("button", name=name)).to_have_count(0)


DELETE_BUTTON = re.compile(r"^Delete run \d+$")


def _prices_read_only(page: Page, app: RunningApp, person: Person, shots: Path) -> None:
    open_page(page, app.url, "prices")
    _role_shown(page, person)
    _refused(page, person.role, "change or restore the price catalog")
    _no_button(page, "Save catalog")
    _no_button(page, "Restore shipped catalog")
    page.screenshot(path=shots / f"{person.role}-prices.png", full_page=True)


def test_viewer_sees_no_write_controls(
    signed_in_app: RunningApp, browser: Browser, tmp_path: Path
) -> None:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        _sign_in(page, signed_in_app, VIEWER)
        open_page(page, signed_in_app.url, "runs")
        _role_shown(page, VIEWER)
        _refused(page, "viewer", "import or probe runs")
        _refused(page, "viewer", "delete runs")  # the page's last line: it is all drawn
        expect(page.get_by_test_id("stFileUploader")).to_have_count(0)
        _no_button(page, DELETE_BUTTON)
        _no_button(page, "Import")
        page.screenshot(path=tmp_path / "viewer-runs.png", full_page=True)
        _prices_read_only(page, signed_in_app, VIEWER, tmp_path)
    finally:
        context.close()


def test_planner_may_import_but_not_delete(
    signed_in_app: RunningApp, browser: Browser, tmp_path: Path
) -> None:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        _sign_in(page, signed_in_app, PLANNER)
        open_page(page, signed_in_app.url, "runs")
        _role_shown(page, PLANNER)
        main = page.get_by_test_id("stMain")
        _visible(main.get_by_role("heading", name="Upload results", exact=True))
        _visible(page.get_by_test_id("stFileUploader").first)
        _refused(page, "planner", "delete runs")  # the page's last line: it is all drawn
        expect(main.get_by_text("cannot import or probe runs")).to_have_count(0)
        _no_button(page, DELETE_BUTTON)
        page.screenshot(path=tmp_path / "planner-runs.png", full_page=True)
        _prices_read_only(page, signed_in_app, PLANNER, tmp_path)
    finally:
        context.close()


def _flash(page: Page, text: str) -> None:
    alert = page.get_by_test_id("stMain").get_by_test_id("stAlertContentSuccess")
    expect(alert.filter(has_text=text)).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    app_idle(page)


def _delete_and_undo(page: Page, shots: Path) -> int:
    """Tick the confirmation, delete the inspected run, undo it; the run's id."""
    main = page.get_by_test_id("stMain")
    confirm = main.get_by_text(re.compile(r"^Yes, delete run \d+ \(to the trash"))
    _visible(confirm)
    found = re.search(r"delete run (\d+)", confirm.inner_text())
    assert found, confirm.inner_text()
    run_id = int(found.group(1))
    delete = main.get_by_role("button", name=f"Delete run {run_id}", exact=True)
    expect(delete).to_be_disabled()
    confirm.click()
    app_idle(page)
    expect(delete).to_be_enabled(timeout=PAGE_TIMEOUT_MS)
    delete.click()
    _flash(page, f"run {run_id} deleted (in the trash)")
    undo = main.get_by_role("button", name=f"Undo: bring run {run_id} back", exact=True)
    _visible(undo)
    page.screenshot(path=shots / "admin-deleted.png", full_page=True)
    undo.click()
    _flash(page, f"run {run_id} is back")
    expect(undo).to_have_count(0, timeout=PAGE_TIMEOUT_MS)
    return run_id


def _audit_rows(page: Page, run_id: int) -> list[list[str]]:
    """The Audit page's trail rows about the run (who, role, kind, what), opened from the menu."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Audit").click()
    main = page.get_by_test_id("stMain")
    _visible(main.get_by_role("heading", name="Changes", exact=True))
    _visible(main.get_by_text("Nothing deleted is waiting in the trash."))
    app_idle(page)
    frame = data_frame(page, "who")
    frame.locator("tbody [role=row]").first.wait_for(state="attached", timeout=PAGE_TIMEOUT_MS)
    rows = [dict(zip(AUDIT_COLUMNS, row, strict=False)) for row in grid_rows(frame)]
    return [
        [row["who"], row["role"], row["kind"], row["what"]]
        for row in rows
        if row.get("target") == f"run {run_id}"
    ]


AUDIT_COLUMNS = ("entry", "when (UTC)", "who", "role", "kind", "what", "target", "summary")


def test_admin_deletes_a_run_undoes_it_and_the_trail_names_them(
    signed_in_app: RunningApp, browser: Browser, tmp_path: Path
) -> None:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        _sign_in(page, signed_in_app, ADMIN)
        open_page(page, signed_in_app.url, "prices")
        _role_shown(page, ADMIN)
        _visible(page.get_by_role("button", name="Save catalog", exact=True))
        _visible(page.get_by_role("button", name="Restore shipped catalog", exact=True))
        open_page(page, signed_in_app.url, "runs")
        _role_shown(page, ADMIN)
        _visible(page.get_by_test_id("stFileUploader").first)
        _visible(page.get_by_role("button", name=DELETE_BUTTON))  # the page's last control
        expect(page.get_by_test_id("stMain").get_by_text("Your role (")).to_have_count(0)
        run_id = _delete_and_undo(page, tmp_path)
        page.screenshot(path=tmp_path / "admin-runs.png", full_page=True)
        trail = _audit_rows(page, run_id)
        page.screenshot(path=tmp_path / "admin-audit.png", full_page=True)
        # Newest first: the undo, then the delete, both by the admin as the mapping names them
        # (lower-cased); older rows are the demo data's import, by nobody signed in here.
        assert trail[:2] == [
            ["ada@example.com", "admin", "run", "undeleted"],
            ["ada@example.com", "admin", "run", "deleted"],
        ], trail
        assert all(row[0] != "ada@example.com" for row in trail[2:]), trail
        print(f"screenshots in {tmp_path}")
    finally:
        context.close()
