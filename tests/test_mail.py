"""Mail: the outbox and its SMTP sender against a real server on loopback (aiosmtpd, STARTTLS,
AUTH), and password reset end to end (docs/api.md §3)."""

import re
from datetime import timedelta

import pytest
from sqlalchemy import event

from harness.client import PASSWORD, create_pat, csrf, register
from harness.service import kill_service, sign_up, wait_until
from harness.smtp import Tarpit
from svc.config import ConfigError, load_settings
from svc.extensions import db
from svc.mail import outbox
from svc.models import OutgoingMail, PasswordReset, PasswordResetRequest
from svc.models.base import utcnow
from svc.models.mail import FAILED, PENDING, SENT
from tests.helpers import run_in_processes, send_due, wait_until_settled

RESET_LINK = re.compile(r"https://bugs\.example\.com/reset-password/(\w+)")


def queue_one(app, to="ada@example.com", subject="Hello", text="See https://example.com/x"):
    with app.app_context():
        outbox.queue(to, subject, text, {"List-Unsubscribe": "<https://example.com/u>"})
        db.session.commit()


def mails(app) -> list[OutgoingMail]:
    with app.app_context():
        rows = db.session.query(OutgoingMail).order_by(OutgoingMail.created_at).all()
        db.session.expunge_all()
        return rows


def test_a_queued_mail_reaches_the_server_with_text_html_and_headers(mail_app, smtp_server):
    queue_one(
        mail_app,
        text="Open <this> at https://bugs.example.com/x?a=1&b=2, not https://example.com/y",
    )
    assert send_due(mail_app) == [None]
    [message] = smtp_server.wait_for(1)
    assert message["To"] == "ada@example.com" and message["Subject"] == "Hello"
    assert message["From"] == "svc@bugs.example.com"
    assert message["List-Unsubscribe"] == "<https://example.com/u>"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert "Open <this> at https://bugs.example.com/x?a=1&b=2" in text
    assert "Open &lt;this&gt;" in html
    # The service's own addresses become links; anyone else's stays text.
    assert '<a href="https://bugs.example.com/x?a=1&amp;b=2">' in html
    assert "not https://example.com/y" in html and 'href="https://example.com' not in html
    [row] = mails(mail_app)
    assert (row.status, row.attempts) == (SENT, 1)
    assert message["Message-ID"] == f"<{row.id}@bugs.example.com>"
    # Handed over: what it said (its links) is gone from the table; address and outcome stay.
    assert (row.subject, row.text_body, row.html_body, row.headers) == ("", "", "", {})
    assert row.to_address == "ada@example.com" and row.sent_at


def test_a_mail_is_claimed_once(mail_app, smtp_server):
    queue_one(mail_app)
    with mail_app.app_context():
        first = outbox.claim_due(10, running={})
        second = outbox.claim_due(10, running={})
    assert len(first) == 1 and second == []


def test_a_server_that_is_down_gets_the_mail_later_exactly_once(mail_app, smtp_server):
    smtp_server.stop()
    queue_one(mail_app)
    [error] = send_due(mail_app)
    assert "Connection refused" in error or "ConnectionRefused" in error
    [row] = mails(mail_app)
    assert (row.status, row.attempts) == (PENDING, 1) and row.last_error
    # Its retry is due later, not now.
    assert send_due(mail_app) == []
    smtp_server.start()
    with mail_app.app_context():
        db.session.query(OutgoingMail).update({"next_attempt_at": row.created_at})
        db.session.commit()
    assert send_due(mail_app) == [None]
    assert len(smtp_server.wait_for(1)) == 1
    assert send_due(mail_app) == []
    assert len(smtp_server.messages) == 1


def test_a_mail_fails_after_its_last_retry(make_app, smtp_server, mail_settings):
    app = make_app(**mail_settings, SVC_MAIL_RETRY_DELAYS=(0.0,))
    smtp_server.stop()
    queue_one(app)
    assert send_due(app)[0]
    assert send_due(app)[0]
    [row] = mails(app)
    assert (row.status, row.attempts) == (FAILED, 2) and row.last_error
    assert (row.subject, row.text_body, row.html_body, row.headers) == ("", "", "", {})
    assert send_due(app) == []


def test_a_server_certificate_not_trusted_is_refused(make_app, smtp_server):
    app = make_app(SVC_SMTP_URL=smtp_server.url, SVC_PUBLIC_URL="https://bugs.example.com")
    queue_one(app)
    [error] = send_due(app)
    assert "CERTIFICATE_VERIFY_FAILED" in error
    assert smtp_server.messages == []


def test_with_mail_off_the_mail_is_logged_and_counts_as_sent(app, caplog):
    caplog.set_level("INFO", logger="svc.mail.outbox")
    queue_one(app, text="Your link: https://example.com/reset")
    assert send_due(app) == [None]
    assert "https://example.com/reset" in caplog.text
    [row] = mails(app)
    assert row.status == SENT and "reset" not in row.text_body + row.html_body


def every_text_in_the_database(app) -> str:
    """Every value of every table, as text: what a backup of it holds."""
    with app.app_context():
        return "\n".join(
            str(row)
            for table in db.metadata.sorted_tables
            for row in db.session.execute(table.select())
        )


def test_sent_links_work_from_the_mail_alone_and_old_rows_go(mail_app, smtp_server):
    """An invitation (owner role) and a reset link read from mail_outbox
    worked, beside tokens stored as SHA-256 only."""
    ada = mail_app.test_client()
    register(ada)
    project = ada.post("/api/v1/projects", json={"name": "Shop"}, headers=csrf(ada)).get_json()
    owner = {"email": "grace@example.com", "role": "owner"}
    invitations = f"/api/v1/projects/{project['id']}/invitations"
    invited = ada.post(invitations, json=owner, headers=csrf(ada))
    assert invited.status_code == 201, invited.get_json()
    assert forgot(mail_app.test_client(), "ada@example.com").status_code == 202
    assert send_due(mail_app) == [None, None]
    texts = [message.get_body(("plain",)).get_content() for message in smtp_server.wait_for(2)]
    link = re.compile(r"https://bugs\.example\.com/(?:invite|reset-password)/([\w-]+)")
    tokens = [found[1] for text in texts for found in [link.search(text)] if found]
    assert len(tokens) == 2, texts
    stored = every_text_in_the_database(mail_app)
    for token in tokens:
        assert token not in stored

    # SVC_MAIL_LOG_DAYS later the rows go; a mail still waiting stays however old.
    queue_one(mail_app)
    with mail_app.app_context():
        db.session.query(OutgoingMail).update({"created_at": utcnow() - timedelta(days=31)})
        db.session.commit()
        assert outbox.forget_done() == 2
    assert [row.status for row in mails(mail_app)] == [PENDING]


@pytest.fixture
def local_relay(certificate_authority):
    """A relay on this host without TLS or a password, as a local Postfix on port 25 is."""
    from harness.smtp import SmtpServer

    server = SmtpServer(certificate_authority[0], plain=True).start()
    yield server
    server.close()


def test_a_relay_on_this_host_takes_mail_without_tls(make_app, local_relay):
    app = make_app(SVC_SMTP_URL=local_relay.url, SVC_PUBLIC_URL="https://bugs.example.com")
    queue_one(app, to="grace@example.com")
    assert send_due(app) == [None]
    assert local_relay.wait_for(1)[0]["To"] == "grace@example.com"
    # Without starttls=off the same relay is refused: STARTTLS is never skipped unasked.
    strict = make_app(SVC_SMTP_URL=local_relay.url.split("?")[0],
                      SVC_PUBLIC_URL="https://bugs.example.com")  # fmt: skip
    queue_one(strict)
    [error] = send_due(strict)
    assert "STARTTLS" in error
    health = strict.test_client()
    register(health)
    outbox = health.get("/api/v1/admin/health").get_json()["outbox"]
    assert "STARTTLS" in outbox["lastMailError"] and outbox["lastMailErrorAt"]


@pytest.mark.parametrize(
    "url, said",
    [
        ("smtp://mail.example.com:25?starttls=off", "relay on this host only"),
        ("smtp://10.0.0.5:25?starttls=off", "relay on this host only"),
        ("smtps://localhost:465?starttls=off", "the one option"),
        ("smtp://localhost:25?tls=no", "the one option"),
    ],
)
def test_plain_smtp_anywhere_but_this_host_stops_the_start(url, said):
    with pytest.raises(ConfigError, match=said):
        load_settings(environ={"SVC_SMTP_URL": url, "SVC_PUBLIC_URL": "https://x.example"})
    for local in ("smtp://localhost:25?starttls=off", "smtp://[::1]:25?starttls=off",
                  "smtp://127.0.0.2?starttls=off"):  # fmt: skip
        assert load_settings(environ={"SVC_SMTP_URL": local, "SVC_PUBLIC_URL": "https://x.example"})


def test_smtp_without_a_public_url_stops_the_start():
    with pytest.raises(ConfigError, match="SVC_PUBLIC_URL"):
        load_settings(environ={"SVC_SMTP_URL": "smtp://mail.example.com"})
    with pytest.raises(ConfigError, match="SVC_SMTP_URL"):
        load_settings(environ={"SVC_SMTP_URL": "http://mail.example.com"})


# --- password reset -----------------------------------------------------------------------------


def forgot(client, email):
    return client.post("/api/v1/auth/forgot-password", json={"email": email})


def reset(client, token, password="a brand new password"):
    return client.post("/api/v1/auth/reset-password", json={"token": token, "password": password})


def test_password_reset_end_to_end(mail_app, smtp_server):
    ada = mail_app.test_client()
    register(ada)
    pat = create_pat(ada)["token"]
    other_browser = mail_app.test_client()
    other_browser.post(
        "/api/v1/auth/login", json={"email": "ada@example.com", "password": PASSWORD}
    )

    anonymous = mail_app.test_client()
    assert forgot(anonymous, "  ADA@example.com ").status_code == 202
    send_due(mail_app)
    [message] = smtp_server.wait_for(1)
    assert message["To"] == "ada@example.com"
    token = RESET_LINK.search(message.get_body(("plain",)).get_content())[1]

    assert reset(anonymous, token).status_code == 204
    # The new password works, the old one does not; every session and token has ended.
    login = anonymous.post(
        "/api/v1/auth/login", json={"email": "ada@example.com", "password": "a brand new password"}
    )
    assert login.status_code == 200
    old = mail_app.test_client().post(
        "/api/v1/auth/login", json={"email": "ada@example.com", "password": PASSWORD}
    )
    assert old.status_code == 401
    assert ada.get("/api/v1/auth/me").status_code == 401
    assert other_browser.get("/api/v1/auth/me").status_code == 401
    bearer = {"Authorization": f"Bearer {pat}"}
    assert mail_app.test_client().get("/api/v1/auth/me", headers=bearer).status_code == 401
    # The link works once.
    again = reset(anonymous, token, "yet another password")
    assert again.status_code == 400 and again.get_json()["detail"]


def test_an_unknown_address_gets_the_same_answer_and_no_mail(mail_app, smtp_server):
    response = forgot(mail_app.test_client(), "nobody@example.com")
    assert response.status_code == 202 and response.get_data() == b""
    assert send_due(mail_app) == []
    assert mails(mail_app) == []


def test_asking_does_the_same_work_for_an_address_without_an_account(mail_app):
    """The answer's time must not tell which addresses have accounts: the request runs the
    same statements for either (the link is made in the scheduler), so it cannot."""
    register(mail_app.test_client())
    client = mail_app.test_client()

    def statements_of(email) -> list[str]:
        seen = []

        def note(conn, cursor, statement, parameters, context, executemany):
            seen.append(statement)

        with mail_app.app_context():
            engine = db.engine
        event.listen(engine, "before_cursor_execute", note)
        try:
            assert forgot(client, email).status_code == 202
        finally:
            event.remove(engine, "before_cursor_execute", note)
        return seen

    known = statements_of("ada@example.com")
    assert known == statements_of("nobody@example.com")
    assert not any("users" in statement for statement in known)  # nobody looked them up


def test_two_schedulers_mail_each_asked_link_once(make_app, mail_settings, smtp_server):
    app = make_app(**mail_settings, SVC_RATE_LIMIT_AUTH="off")
    client = app.test_client()
    register(client)
    for _ in range(30):
        forgot(client, "ada@example.com")
    forgot(client, "nobody@example.com")
    printed = run_in_processes(
        app,
        """
        from svc.services.identity import password_resets
        with app.app_context():
            print(sum(password_resets.handle_requests(limit=3) for _ in range(20)))
        """,
    )
    handled = [int(output) for output in printed]
    assert sum(handled) == 31
    with app.app_context():
        assert db.session.query(PasswordReset).count() == 30
        assert db.session.query(OutgoingMail).count() == 30
        assert db.session.query(PasswordResetRequest).count() == 0


def test_an_expired_or_unknown_link_is_400(mail_app, smtp_server):
    client = mail_app.test_client()
    register(client)
    forgot(client, "ada@example.com")
    send_due(mail_app)
    token = RESET_LINK.search(smtp_server.wait_for(1)[0].get_body(("plain",)).get_content())[1]
    with mail_app.app_context():
        db.session.execute(db.text("UPDATE password_resets SET expires_at = created_at"))
        db.session.commit()
    assert reset(client, token).status_code == 400
    assert reset(client, "not-a-token").status_code == 400
    assert client.get("/api/v1/auth/me").status_code == 200  # nothing ended


def test_a_reset_or_a_password_change_spends_every_other_link(mail_app, smtp_server):
    """v4: a link mailed before the password changed cannot set it again."""
    client = mail_app.test_client()
    register(client)
    for _ in range(3):
        forgot(client, "ada@example.com")
    send_due(mail_app)
    first, second, third = (
        RESET_LINK.search(m.get_body(("plain",)).get_content())[1] for m in smtp_server.wait_for(3)
    )
    assert reset(client, first).status_code == 204
    assert reset(client, second, "the second new password").status_code == 400

    signed_in = mail_app.test_client()
    signed_in.post(
        "/api/v1/auth/login", json={"email": "ada@example.com", "password": "a brand new password"}
    )
    forgot(client, "ada@example.com")
    send_due(mail_app)
    fourth = RESET_LINK.search(smtp_server.wait_for(4)[3].get_body(("plain",)).get_content())[1]
    changed = signed_in.post(
        "/api/v1/auth/password",
        json={"current_password": "a brand new password", "new_password": "changed by hand"},
        headers=csrf(signed_in),
    )
    assert changed.status_code == 204
    assert [reset(client, link).status_code for link in (third, fourth)] == [400, 400]


def test_a_reset_password_follows_the_password_rules(mail_app):
    response = reset(mail_app.test_client(), "whatever", "short")
    assert response.status_code == 422 and "password" in response.get_json()["errors"]


def test_a_signed_in_user_can_still_ask(mail_app, smtp_server):
    client = mail_app.test_client()
    register(client)
    # Public, as login is: no CSRF header; and asking ends nothing.
    assert forgot(client, "ada@example.com").status_code == 202
    assert client.get("/api/v1/auth/me").status_code == 200


@pytest.mark.browser
def test_a_password_is_reset_from_the_sign_in_page(mail_app, smtp_server, browser):
    import threading

    from playwright.sync_api import expect
    from werkzeug.serving import make_server

    register(mail_app.test_client())
    server = make_server("127.0.0.1", 0, mail_app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.port}"
    context = browser.new_context(base_url=base_url)
    try:
        page = context.new_page()
        page.goto("/login")
        page.get_by_role("link", name="Forgot password?").click()
        page.get_by_label("E-mail").fill("ada@example.com")
        page.get_by_role("button", name="Send reset link").click()
        expect(page.get_by_role("status")).to_contain_text("on its way")
        send_due(mail_app)
        text = smtp_server.wait_for(1)[0].get_body(("plain",)).get_content()
        page.goto(f"/reset-password/{RESET_LINK.search(text)[1]}")
        page.get_by_role("textbox", name="New password").fill("a brand new password")
        page.get_by_role("button", name="Set password").click()
        expect(page.get_by_role("status")).to_contain_text("Your password is changed")
        page.get_by_role("link", name="Sign in").click()
        page.get_by_label("E-mail").fill("ada@example.com")
        page.get_by_label("Password").fill("a brand new password")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="Reports")).to_be_visible()
    finally:
        context.close()
        server.shutdown()


# --- through `make run` ---------------------------------------------------------------------------


@pytest.mark.server
def test_mail_through_make_run_loses_none_when_the_scheduler_dies_mid_send(
    app, service_env, services, smtp_server, mail_settings
):
    """Invitations made through two gunicorn workers reach the SMTP server from the scheduler;
    SIGKILL while its attempts hang in a server that never answers loses none and sends none
    twice once it is back."""
    env = {**service_env, **mail_settings, "SVC_MAIL_TIMEOUT": "20"}
    base_url, service = services(env)
    browser, csrf_header = sign_up(base_url)
    project = browser.post(
        f"{base_url}/api/v1/projects", json={"name": "Web Shop"}, headers=csrf_header
    ).json()

    def invite(email):
        response = browser.post(
            f"{base_url}/api/v1/projects/{project['id']}/invitations",
            json={"email": email},
            headers=csrf_header,
        )
        assert response.status_code == 201, response.text

    invite("first@example.com")
    assert smtp_server.wait_for(1)[0]["To"] == "first@example.com"

    smtp_server.stop()
    tarpit = Tarpit(smtp_server.port)
    try:
        for number in range(5):
            invite(f"colleague{number}@example.com")
        # The scheduler's two mail threads are each caught in an attempt.
        wait_until(lambda: tarpit.connections >= 2, message="attempts under way")
        kill_service(service)
    finally:
        tarpit.close()
    smtp_server.start()
    # Time passes: the killed attempts' leases end (what the scheduler would wait for).
    with app.app_context():
        db.session.execute(db.text("UPDATE mail_outbox SET next_attempt_at = created_at"))
        db.session.commit()

    services(env)
    expected = {"first@example.com", *(f"colleague{n}@example.com" for n in range(5))}
    arrived = smtp_server.wait_for(6)
    wait_until_settled(app, OutgoingMail, 6)
    assert sorted(m["To"] for m in smtp_server.messages) == sorted(expected)
    assert {m["To"] for m in arrived} == expected


def test_a_mail_that_cannot_be_built_fails_at_once(mail_app, smtp_server):
    """v4: a line break in a header (a name, before names were one line) makes a mail no
    retry can build: failed at the first attempt, not pending for ever."""
    queue_one(mail_app, subject="[WS-1] Assigned to you by Ada\r\nBcc: everyone@example.com")
    [error] = send_due(mail_app)
    assert error.startswith("cannot be built")
    [row] = mails(mail_app)
    assert (row.status, row.attempts, row.next_attempt_at) == ("failed", 1, None)
    assert send_due(mail_app) == []  # never claimed again
    assert smtp_server.messages == []


@pytest.mark.parametrize(
    ("path", "field"),
    [("/api/v1/auth/register", "name"), ("/api/v1/projects", "name"), ("/api/v1/tokens", "name")],
)
@pytest.mark.parametrize(
    "name", ["Ada\r\nBcc: everyone@example.com", "Tab\there", "\x85" + "a" * 100]
)
def test_names_are_one_line(app, user_client, path, field, name):
    """v4: names go into mail headers; a C1 control (U+0085, which strip() removes) counts too,
    so a 101-character name cannot pass as 100."""
    client = app.test_client() if "register" in path else user_client
    body = {field: name, "email": "grace@example.com", "password": PASSWORD}
    response = client.post(path, json=body, headers=csrf(client))
    assert response.status_code == 422, response.get_json()
    assert "One line" in response.get_json()["errors"][field][0]
