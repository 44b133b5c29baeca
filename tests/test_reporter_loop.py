"""The reporter's loop (docs/reporter-updates.md): the person who filed a report gets a
receipt, the public comments and word of its resolution by mail (a real SMTP server on
loopback), follows it on its status page, replies there and reopens it."""

import re
import threading
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect
from werkzeug.serving import make_server

from harness.client import create_project, csrf, new_member, register
from svc.services.team import notifications
from tests.browser import save_screenshot
from tests.helpers import file_report, run_in_processes, send_due, text_of

STATUS_LINK = re.compile(r"https://bugs\.example\.com/status/([\w-]+)")
UNSUBSCRIBE = re.compile(r"<https://bugs\.example\.com/unsubscribe/(\S+)>")
HOSTILE = '<img src=x onerror="window.pwned=1">'


def reporter_updates(client, project, **settings):
    answer = client.patch(
        f"/api/v1/projects/{project['id']}",
        json={"settings": {"reporter_updates": settings}},
        headers=csrf(client),
    )
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()["settings"]["reporterUpdates"]


@pytest.fixture
def updating_shop(mail_app, smtp_server):
    """Ada owns Web Shop, which keeps reporters up to date; Grace is a member. The mail
    server starts empty."""
    ada = mail_app.test_client()
    ada.user = register(ada)
    project = create_project(ada)
    grace = new_member(mail_app, ada, project["id"], "grace@example.com", "Grace Hopper")
    assert reporter_updates(ada, project, enabled=True)["enabled"] is True
    send_due(mail_app)
    with smtp_server.lock:
        smtp_server.messages.clear()
    return SimpleNamespace(app=mail_app, ada=ada, grace=grace, project=project, smtp=smtp_server)


def file(updating_shop, reporter="rep@example.com", project=None, **fields) -> dict:
    project = project or updating_shop.project
    answer = file_report(
        updating_shop.ada, project["apiKey"], reporter_identifier=reporter, **fields
    )
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def mails_to(updating_shop, address="rep@example.com") -> list:
    """What reached the server for `address` since the last look (the scheduler's mail job
    run once first)."""
    send_due(updating_shop.app)
    with updating_shop.smtp.lock:
        # Addresses compare without case, as the mails count them (the local part is sent as
        # it was typed).
        mine = [m for m in updating_shop.smtp.messages if m["To"].lower() == address.lower()]
        updating_shop.smtp.messages.clear()
    return mine


def token_in(message) -> str:
    return STATUS_LINK.search(text_of(message))[1]


def comment(client, tracking_id, body, public):
    answer = client.post(
        f"/api/v1/reports/{tracking_id}/comments",
        json={"body": body, "public": public},
        headers=csrf(client),
    )
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def set_status(client, tracking_id, status, **more):
    answer = client.patch(
        f"/api/v1/reports/{tracking_id}", json={"status": status, **more}, headers=csrf(client)
    )
    assert answer.status_code == 200, answer.get_json()


def test_an_address_gets_at_most_its_daily_share_of_reporter_mails(updating_shop):
    """25 reports naming a stranger's address with a phishing title sent
    25 mails from the company's own sender. 3 a day per project, 10 per instance."""
    phishing = "Your account is locked: https://evil.example/unlock"
    for _ in range(25):
        file(updating_shop, reporter="victim@example.net", title=phishing)
    received = mails_to(updating_shop, "victim@example.net")
    assert len(received) == 3
    for message in received:
        assert "evil.example" not in text_of(message) + message["Subject"]
    for name in ("Blog", "Docs", "Store"):
        other = create_project(updating_shop.ada, name)
        reporter_updates(updating_shop.ada, other, enabled=True)
        for _ in range(3):
            file(updating_shop, reporter="Victim@Example.net", project=other)
    assert len(mails_to(updating_shop, "victim@example.net")) == 7
    assert mails_to(updating_shop, "victim@example.net") == []
    # Someone else's address is not held back by the victim's.
    file(updating_shop, reporter="rep@example.com")
    assert len(mails_to(updating_shop)) == 1
    health = updating_shop.ada.get("/api/v1/admin/health").get_json()
    assert health["outbox"]["reporterMailsLimited"] == 22 + 2


def test_the_daily_share_holds_across_processes(updating_shop):
    """Two processes mailing one address at once (a member's resolve in a web worker, the
    fan-out's receipt in the scheduler) still send 3 a day about one project, not 3 each."""
    project_id = updating_shop.project["id"]
    outputs = run_in_processes(
        updating_shop.app,
        f"""
        import uuid
        from svc.extensions import db
        from svc.services.reporters import reporter_mails
        sent = 0
        with app.app_context():
            for _ in range(5):
                sent += reporter_mails.queue(uuid.UUID("{project_id}"), "victim@example.net",
                                             "Hello", "Hello", {{}})
                db.session.commit()
        print(sent)
        """,
    )
    assert sum(int(out) for out in outputs) == 3, outputs
    assert len(mails_to(updating_shop, "victim@example.net")) == 3


def test_the_widget_says_receipts_go_to_the_address_it_asks_for(updating_shop):
    config = updating_shop.app.test_client().get(
        "/api/v1/projects/widget-config",
        headers={"X-API-Key": updating_shop.project["apiKey"]},
    )
    assert config.get_json()["mailsReporters"] is True


def test_the_reporter_hears_of_receipt_public_comments_and_resolution(updating_shop):
    filed = file(updating_shop)
    [receipt] = mails_to(updating_shop)
    assert receipt["Subject"] == "[Web Shop] We received your report WS-1"
    # No word the reporter wrote: anyone can name anyone's address.
    assert "We received it as WS-1." in text_of(receipt)
    assert "Checkout button does nothing" not in text_of(receipt)
    token = token_in(receipt)
    # The widget's answer links the same page.
    assert filed["statusUrl"] == f"https://bugs.example.com/status/{token}"
    assert UNSUBSCRIBE.match(receipt["List-Unsubscribe"])
    assert receipt["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    # The literal <https://...> on one line, as mail programs look for it: never RFC 2047's
    # encoded words, which Python's default folding made of the long link.
    [header] = re.findall(rb"^List-Unsubscribe: .*$", receipt.raw, re.MULTILINE)
    assert UNSUBSCRIBE.fullmatch(header.decode().split(": ", 1)[1].strip()), header

    comment(
        updating_shop.grace,
        "WS-1",
        "Internal: probably the payment provider",
        public=False,
    )
    assert mails_to(updating_shop) == []
    comment(
        updating_shop.grace,
        "WS-1",
        "Thanks, we can see it too. Which browser?",
        public=True,
    )
    [public] = mails_to(updating_shop)
    assert public["Subject"] == "[Web Shop] A reply about your report WS-1"
    assert "Grace Hopper wrote" in text_of(public) and "Which browser?" in text_of(public)
    assert "payment provider" not in text_of(public)

    set_status(updating_shop.grace, "WS-1", "in_progress")
    assert mails_to(updating_shop) == []
    set_status(updating_shop.grace, "WS-1", "resolved")
    [resolved] = mails_to(updating_shop)
    assert resolved["Subject"] == "[Web Shop] WS-1 is resolved"
    assert token_in(resolved) == token

    page = updating_shop.ada.get(f"/api/v1/status/{token}")
    assert page.status_code == 200 and page.headers["Cache-Control"] == "no-store"
    shown = page.get_json()
    assert (shown["trackingId"], shown["status"]) == ("WS-1", "resolved")
    assert [c["body"] for c in shown["comments"]] == ["Thanks, we can see it too. Which browser?"]
    assert shown["comments"][0]["author"] == "Grace Hopper"
    assert set(shown) == {
        "trackingId", "projectName", "title", "status", "merged", "reopened", "createdAt",
        "updatedAt", "comments",
    }  # fmt: skip


def test_a_duplicates_reporter_follows_the_report_it_was_merged_into(updating_shop):
    """docs/api.md §8.11: no mail at the merge; the duplicate's page follows its primary; the
    primary's public replies and resolution reach both reporters, each about their own report
    and page; the reporter of both gets one mail."""
    # No receipts: the day's share of mails to one address (3) is for what follows.
    reporter_updates(
        updating_shop.ada,
        updating_shop.project,
        events=["resolved", "public_comment"],
    )
    file(updating_shop, "first@example.com")
    token = file(updating_shop, "second@example.com", title="Pay button dead")["statusUrl"].split(
        "/"
    )[-1]
    file(updating_shop, "first@example.com")
    for duplicate in ("WS-2", "WS-3"):
        merged = updating_shop.grace.post(
            f"/api/v1/reports/{duplicate}/duplicate-of", json={"target": "WS-1"},
            headers=csrf(updating_shop.grace),
        )  # fmt: skip
        assert merged.status_code == 200, merged.get_json()
    assert mails_to(updating_shop, "second@example.com") == []
    page = updating_shop.ada.get(f"/api/v1/status/{token}").get_json()
    assert (page["trackingId"], page["status"], page["merged"]) == ("WS-2", "new", True)
    html = updating_shop.ada.get(f"/status/{token}").get_data(as_text=True)
    assert "same problem as another report" in html

    comment(updating_shop.grace, "WS-1", "A fix is on its way", public=True)
    send_due(updating_shop.app)
    with updating_shop.smtp.lock:
        to = [message["To"] for message in updating_shop.smtp.messages]
    assert sorted(to) == ["first@example.com", "second@example.com"]  # WS-1 and WS-3: one mail
    [reply] = mails_to(updating_shop, "second@example.com")
    assert reply["Subject"] == "[Web Shop] A reply about your report WS-2"
    assert "A fix is on its way" in text_of(reply) and token_in(reply) == token
    assert [
        c["body"] for c in updating_shop.ada.get(f"/api/v1/status/{token}").get_json()["comments"]
    ] == ["A fix is on its way"]

    set_status(updating_shop.grace, "WS-1", "resolved")
    [resolved] = mails_to(updating_shop, "second@example.com")
    assert resolved["Subject"] == "[Web Shop] WS-2 is resolved"
    assert "Pay button dead" in text_of(resolved)
    assert updating_shop.ada.get(f"/api/v1/status/{token}").get_json()["status"] == "resolved"
    # "Still happening?" on the duplicate's page opens what it follows.
    assert updating_shop.ada.post(f"/api/v1/status/{token}/reopen", json={}).status_code == 200
    assert updating_shop.ada.get("/api/v1/reports/WS-1").get_json()["status"] == "new"
    assert updating_shop.ada.get("/api/v1/reports/WS-2").get_json()["status"] == "closed"


def test_no_mail_when_the_setting_is_off_the_event_not_chosen_or_no_address(
    updating_shop,
):
    file(updating_shop, reporter="user-42")  # an identifier, not an address
    assert mails_to(updating_shop, "user-42") == [] and updating_shop.smtp.messages == []
    reporter_updates(updating_shop.ada, updating_shop.project, events=["resolved"])
    filed = file(updating_shop)
    assert mails_to(updating_shop) == []  # no receipt chosen
    set_status(updating_shop.grace, filed["trackingId"], "closed")
    [closed] = mails_to(updating_shop)
    assert closed["Subject"] == f"[Web Shop] {filed['trackingId']} is closed"
    reporter_updates(updating_shop.ada, updating_shop.project, enabled=False)
    filed = file(updating_shop)
    assert "statusUrl" not in filed
    set_status(updating_shop.grace, filed["trackingId"], "resolved")
    comment(updating_shop.grace, filed["trackingId"], "Fixed in 2.1", public=True)
    assert mails_to(updating_shop) == []


def test_unsubscribing_stops_the_mails_of_that_project_only(updating_shop):
    other = create_project(updating_shop.ada, name="Blog")
    reporter_updates(updating_shop.ada, other, enabled=True)
    file(updating_shop)
    blogged = file(updating_shop, project=other)["trackingId"]
    first, second = mails_to(updating_shop)
    shop_receipt = first if "Web Shop" in first["Subject"] else second
    link = UNSUBSCRIBE.match(shop_receipt["List-Unsubscribe"])
    # One click, as a mail program makes it (RFC 8058): a POST to the link, no session.
    done = updating_shop.app.test_client().post(
        f"/unsubscribe/{link[1]}",
        data="List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    assert done.status_code == 200, done.get_json()
    assert done.get_json() == {"email": "rep@example.com", "projectName": "Web Shop"}
    comment(updating_shop.grace, "WS-1", "Any news?", public=True)
    file(updating_shop)
    assert mails_to(updating_shop) == []
    comment(updating_shop.ada, blogged, "Looking into it", public=True)
    [blog] = mails_to(updating_shop)
    assert blog["Subject"] == f"[Blog] A reply about your report {blogged}"


def test_a_reply_is_the_reporters_and_still_happening_reopens_and_tells_the_assignee(
    updating_shop,
):
    file(updating_shop)
    token = token_in(mails_to(updating_shop)[0])
    visitor = updating_shop.app.test_client()
    assert "received, not yet looked at" in visitor.get(f"/status/{token}").get_data(as_text=True)
    assert visitor.get(f"/api/v1/status/{token}").get_json()["reopened"] is False
    grace_id = updating_shop.grace.user["id"]
    set_status(updating_shop.ada, "WS-1", "resolved", assignee_id=grace_id)
    mails_to(updating_shop, "grace@example.com")  # her assignment
    assert updating_shop.app.test_client().post(f"/api/v1/status/{token}/reopen").status_code == 200
    # Open again, not "not yet looked at".
    page = visitor.get(f"/status/{token}").get_data(as_text=True)
    assert "open again, waiting to be looked at" in page and "not yet looked at" not in page
    assert visitor.get(f"/api/v1/status/{token}").get_json()["reopened"] is True

    replied = updating_shop.app.test_client().post(
        f"/api/v1/status/{token}/replies", json={"body": "It happens on Firefox too"}
    )
    assert replied.status_code == 201
    assert replied.get_json()["author"] == "You" and replied.get_json()["fromReporter"] is True
    listed = updating_shop.ada.get("/api/v1/reports/WS-1/comments").get_json()
    assert [(c["body"], c["author"], c["public"], c["fromReporter"]) for c in listed] == [
        ("It happens on Firefox too", None, True, True)
    ]
    history = updating_shop.ada.get("/api/v1/reports/WS-1/activity").get_json()
    reopened = [entry for entry in history if entry["kind"] == "reopened"]
    assert len(reopened) == 1 and reopened[0]["via"] == "reporter" and reopened[0]["actor"] is None
    assert reopened[0]["changes"] == {"status": {"from": "resolved", "to": "new"}}
    said = [entry for entry in history if entry["kind"] == "commented"]
    assert said[0]["via"] == "reporter" and said[0]["actor"] is None
    assert updating_shop.ada.get("/api/v1/reports/WS-1").get_json()["status"] == "new"

    with updating_shop.app.app_context():
        notifications.send_due()
    told = [m["Subject"] for m in mails_to(updating_shop, "grace@example.com")]
    assert [subject for subject in told if "Reopened by its reporter" in subject] == [
        "[WS-1] Reopened by its reporter: Checkout button does nothing"
    ]
    # Open already: nothing to reopen.
    again = updating_shop.app.test_client().post(f"/api/v1/status/{token}/reopen")
    assert again.status_code == 409 and "resolved or closed" in again.get_json()["detail"]


def test_a_new_link_ends_the_old_one_and_no_other_token_opens_a_page(updating_shop):
    file(updating_shop)
    old = token_in(mails_to(updating_shop)[0])
    anyone = updating_shop.app.test_client()
    assert anyone.get(f"/api/v1/status/{old}").status_code == 200
    viewer = new_member(
        updating_shop.app,
        updating_shop.ada,
        updating_shop.project["id"],
        "vera@example.com",
        "Vera Rubin",
        "viewer",
    )
    assert viewer.post("/api/v1/reports/WS-1/status-link", headers=csrf(viewer)).status_code == 403
    made = updating_shop.grace.post(
        "/api/v1/reports/WS-1/status-link", headers=csrf(updating_shop.grace)
    )
    audited = updating_shop.ada.get(
        f"/api/v1/projects/{updating_shop.project['id']}/audit",
        query_string={"action": "status_link_renewed"},
    ).get_json()["items"]
    assert [entry["detail"]["trackingId"] for entry in audited] == ["WS-1"]
    assert made.status_code == 201
    new = urlsplit(made.get_json()["url"]).path.rsplit("/", 1)[1]
    assert new != old
    assert anyone.get(f"/api/v1/status/{old}").status_code == 404
    assert anyone.get(f"/status/{old}").status_code == 404
    assert anyone.post(f"/api/v1/status/{old}/replies", json={"body": "x"}).status_code == 404
    assert anyone.get(f"/api/v1/status/{new}").get_json()["trackingId"] == "WS-1"
    # Random, tampered, or spelled another way: 404 alike.
    for token in ("A" * 43, new[:-2] + ("AA" if new[-2:] != "AA" else "BB"), new + "=", "x"):
        answer = anyone.get(f"/api/v1/status/{token}")
        assert answer.status_code == 404, token
        assert answer.get_json() == {"detail": "This status page does not exist"}


def test_replies_and_reopenings_are_rate_limited_per_page(make_app, mail_settings, smtp_server):
    app = make_app(**mail_settings, SVC_RATE_LIMIT_STATUS="3/hour")
    ada = app.test_client()
    register(ada)
    project = create_project(ada)
    reporter_updates(ada, project, enabled=True)
    token = urlsplit(file_report(ada, project["apiKey"]).get_json()["statusUrl"]).path[8:]
    visitor = app.test_client()
    for _ in range(2):
        answer = visitor.post(f"/api/v1/status/{token}/replies", json={"body": "hi"})
        assert answer.status_code == 201
    assert visitor.post(f"/api/v1/status/{token}/reopen").status_code == 409  # counted too
    refused = visitor.post(f"/api/v1/status/{token}/replies", json={"body": "hi"})
    assert refused.status_code == 429 and "Retry-After" in refused.headers
    assert visitor.post(f"/api/v1/status/{token}/reopen").status_code == 429
    assert visitor.get(f"/api/v1/status/{token}").status_code == 200  # reading is not limited


def test_the_html_page_keeps_out_of_caches_indexes_and_referrers(updating_shop):
    file(updating_shop)
    token = token_in(mails_to(updating_shop)[0])
    page = updating_shop.app.test_client().get(f"/status/{token}")
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert page.headers["Cache-Control"] == "no-store"
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert page.headers["X-Robots-Tag"] == "noindex, nofollow"
    policy = page.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
    html = page.get_data(as_text=True)
    assert '<meta name="robots" content="noindex, nofollow">' in html
    # Nothing from another origin: every address in the page is this service's own.
    assert re.findall(r'(?:src|href)="(?!/)', html) == []
    missing = updating_shop.app.test_client().get("/status/nothing-here")
    assert missing.status_code == 404 and "does not exist" in missing.get_data(as_text=True)


@pytest.fixture
def served(updating_shop):
    server = make_server("127.0.0.1", 0, updating_shop.app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.port}"
    server.shutdown()
    thread.join(timeout=5)


@pytest.mark.browser
def test_the_mailed_link_opens_a_page_that_shows_only_what_the_reporter_may_see(
    updating_shop, served, browser
):
    file(
        updating_shop,
        title=f"Pay fails {HOSTILE}",
        metadata={"plan": "secret-plan-name"},
        console_logs=[{"level": "error", "message": "TypeError in checkout.js", "timestamp": 1}],
    )
    token = token_in(mails_to(updating_shop)[0])
    set_status(
        updating_shop.ada,
        "WS-1",
        "resolved",
        assignee_id=updating_shop.grace.user["id"],
    )
    comment(updating_shop.grace, "WS-1", f"Fixed, see {HOSTILE}", public=True)
    comment(updating_shop.grace, "WS-1", "Internal: it was the cache", public=False)
    mails_to(updating_shop)

    context = browser.new_context(base_url=served, locale="en-GB")
    tab = context.new_page()
    errors = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.goto(f"/status/{token}")
    expect(tab.get_by_role("heading", level=1)).to_contain_text(f"WS-1 Pay fails {HOSTILE}")
    expect(tab.locator("#status")).to_have_text("resolved")
    expect(tab.locator(".comments li")).to_have_count(1)
    expect(tab.locator(".comments")).to_contain_text(f"Fixed, see {HOSTILE}")
    body = tab.locator("body").inner_text()
    for hidden in ("Internal", "TypeError", "secret-plan-name", "Grace Hopper assigned", "grace@"):
        assert hidden not in body
    assert tab.locator("img").count() == 0 and tab.evaluate("window.pwned") is None

    tab.get_by_label("Anything the team should know").fill("Still broken on Firefox")
    tab.get_by_role("button", name="Send").click()
    expect(tab.locator(".comments li.yours")).to_contain_text("Still broken on Firefox")
    expect(tab.locator(".comments li.yours")).to_contain_text("You")
    tab.get_by_role("button", name="It still happens").click()
    expect(tab.locator("#status")).to_have_text("open again, waiting to be looked at")
    expect(tab.get_by_role("button", name="It still happens")).to_have_count(0)
    context.close()
    assert errors == []

    listed = updating_shop.ada.get("/api/v1/reports/WS-1/comments").get_json()
    assert listed[-1]["body"] == "Still broken on Firefox" and listed[-1]["fromReporter"] is True
    assert updating_shop.ada.get("/api/v1/reports/WS-1").get_json()["status"] == "new"


@pytest.mark.browser
def test_an_arabic_reporters_page_reads_right_to_left_in_their_words(
    updating_shop, served, browser
):
    """Contract v5 §22: the report's language, right to left for Arabic, seen in Chromium."""
    file(updating_shop, locale="ar-EG")
    [receipt] = mails_to(updating_shop)
    token = token_in(receipt)
    comment(updating_shop.grace, "WS-1", "Thanks, we are on it.", public=True)
    mails_to(updating_shop)
    context = browser.new_context(
        base_url=served, locale="ar", viewport={"width": 390, "height": 844}
    )
    tab = context.new_page()
    tab.goto(f"/status/{token}")
    assert tab.evaluate("[document.documentElement.lang, document.dir]") == ["ar", "rtl"]
    expect(tab.locator("#status")).to_have_text("تم الاستلام، لم يُراجع بعد")
    expect(tab.get_by_role("heading", name="المحادثة")).to_be_visible()
    # Mirrored: the headings start at the right edge, as the language reads.
    heading = tab.get_by_role("heading", name="المحادثة").bounding_box()
    text_end = tab.evaluate(
        "(() => { const r = document.createRange();"
        " r.selectNodeContents(document.getElementById('conversation-heading'));"
        " return r.getBoundingClientRect().right; })()"
    )
    assert abs(text_end - (heading["x"] + heading["width"])) < 2
    assert tab.evaluate("document.documentElement.scrollWidth") <= 390  # nothing cut off
    save_screenshot(tab, "status-page-ar")
    # Its unsubscribe page speaks the visitor's language (this browser's: Arabic too).
    tab.goto(urlsplit(UNSUBSCRIBE.search(receipt["List-Unsubscribe"])[0][1:-1]).path)
    assert tab.evaluate("document.dir") == "rtl"
    tab.get_by_role("button", name="إيقاف هذه الرسائل").click()
    expect(tab.locator("#said")).to_have_text(
        "تم: لن تصل بعد الآن إلى rep@example.com رسائل تتعلق بـ Web Shop."
    )
    context.close()


def test_erasing_a_reporter_cancels_the_mails_waiting_for_them(updating_shop):
    file(updating_shop)  # its receipt waits in the outbox
    erased = updating_shop.ada.post(
        f"/api/v1/projects/{updating_shop.project['id']}/reporter-data/erase",
        json={"reporter_identifier": "REP@example.com"},
        headers=csrf(updating_shop.ada),
    )
    assert erased.status_code == 200 and erased.get_json() == {"reports": 1}
    assert mails_to(updating_shop) == []


def test_turning_reporter_updates_off_closes_the_status_pages(updating_shop):
    """The owner's "off" stops the mails and the pages they linked (page, replies, reopening:
    404, as an unknown link); turned on again, the same links work again."""
    filed = file(updating_shop)
    token = filed["statusUrl"].rsplit("/", 1)[1]
    visitor = updating_shop.app.test_client()
    assert visitor.get(f"/api/v1/status/{token}").status_code == 200
    reporter_updates(updating_shop.ada, updating_shop.project, enabled=False)
    for answer in (
        visitor.get(f"/api/v1/status/{token}"),
        visitor.get(f"/status/{token}"),
        visitor.post(f"/api/v1/status/{token}/replies", json={"body": "Still broken"}),
        visitor.post(f"/api/v1/status/{token}/reopen"),
    ):
        assert answer.status_code == 404
    reporter_updates(updating_shop.ada, updating_shop.project, enabled=True)
    assert visitor.get(f"/api/v1/status/{token}").get_json()["trackingId"] == "WS-1"


def test_a_duplicates_page_never_shows_what_another_reporter_wrote(updating_shop):
    """Contract v6: a duplicate's page shows the team's public replies on its primary, never
    the primary's reporter's own replies (not as "You", not at all), in the API and the HTML
    page alike; its own reporter's replies stay "You" on its own page."""
    reporter_updates(
        updating_shop.ada,
        updating_shop.project,
        events=["resolved", "public_comment"],
    )
    vic = file(updating_shop, "vic@example.com")["statusUrl"].split("/")[-1]
    other = file(updating_shop, "other@example.com")["statusUrl"].split("/")[-1]
    private = "My name is Vic Vale, 12 Elm Street, +1 555 0100"
    assert (
        updating_shop.ada.post(f"/api/v1/status/{vic}/replies", json={"body": private}).status_code
        == 201
    )
    merged = updating_shop.grace.post("/api/v1/reports/WS-2/duplicate-of", json={"target": "WS-1"},
                             headers=csrf(updating_shop.grace))  # fmt: skip
    assert merged.status_code == 200, merged.get_json()
    comment(updating_shop.grace, "WS-1", "We are on it", public=True)
    own = updating_shop.ada.post(
        f"/api/v1/status/{other}/replies", json={"body": "Still broken here"}
    )
    assert own.status_code == 201

    shown = updating_shop.ada.get(f"/api/v1/status/{other}").get_json()["comments"]
    assert [(c["body"], c["author"]) for c in shown] == [
        ("We are on it", "Grace Hopper"),
        ("Still broken here", "You"),
    ]
    assert "Elm Street" not in updating_shop.ada.get(f"/status/{other}").get_data(as_text=True)
    # The primary's own page still shows its reporter her reply.
    assert private in [
        c["body"] for c in updating_shop.ada.get(f"/api/v1/status/{vic}").get_json()["comments"]
    ]
    mailed = mails_to(updating_shop, "other@example.com") + mails_to(
        updating_shop, "vic@example.com"
    )
    assert mailed and not any(
        "Elm Street" in text_of(m) or "Still broken" in text_of(m) for m in mailed
    )


def erase(client, project, identifier):
    erased = client.post(
        f"/api/v1/projects/{project['id']}/reporter-data/erase",
        json={"reporter_identifier": identifier},
        headers=csrf(client),
    )
    assert erased.status_code == 200, erased.get_json()
    return erased.get_json()


def test_an_erase_touches_only_the_mails_its_own_projects_reports_caused(updating_shop):
    """Contract v6: a new account erasing an address in its own empty project leaves Vic's
    pending password-reset mail alone, and erasing the word `reset-password` rewrites no one's
    reset link; the project's own receipt to that address still goes."""
    register(updating_shop.app.test_client(), "vic@corp.test", "Vic")
    forgot = updating_shop.app.test_client().post("/api/v1/auth/forgot-password",
                                         json={"email": "vic@corp.test"})  # fmt: skip
    assert forgot.status_code in (200, 202, 204), forgot.get_data(as_text=True)
    file(updating_shop, "vic@corp.test")  # Web Shop's receipt to Vic waits too
    mallory = updating_shop.app.test_client()
    register(mallory, "mallory@example.com", "Mallory")
    empty = create_project(mallory, "Nothing here")
    assert erase(mallory, empty, "vic@corp.test") == {"reports": 0}
    assert erase(mallory, empty, "reset-password") == {"reports": 0}
    mailed = mails_to(updating_shop, "vic@corp.test")
    subjects = sorted(message["Subject"] for message in mailed)
    assert len(mailed) == 2 and "[Web Shop] We received your report WS-1" in subjects
    [reset] = [message for message in mailed if "WS-1" not in message["Subject"]]
    assert "/reset-password/" in text_of(reset) and "[erased]" not in text_of(reset)


def test_an_erase_does_not_reset_the_reporter_mail_limits(updating_shop):
    """Rounds of three reports then an erase sent three receipts a round; the limits are
    counted apart from the mails an erase deletes."""
    for _ in range(4):
        for _ in range(3):
            file(updating_shop, "target@example.net")
        send_due(updating_shop.app)
        erase(updating_shop.ada, updating_shop.project, "target@example.net")
    with updating_shop.smtp.lock:
        sent = [m for m in updating_shop.smtp.messages if m["To"] == "target@example.net"]
    assert len(sent) == 3


def test_the_limits_count_an_address_without_its_tag_case_or_trailing_dot(updating_shop):
    for address in ("control+0@example.net", "Control+1@example.net", "control+x@example.net",
                    "control@EXAMPLE.net.", "control@example.net"):  # fmt: skip
        file(updating_shop, address)
    send_due(updating_shop.app)
    with updating_shop.smtp.lock:
        sent = [m["To"] for m in updating_shop.smtp.messages if "control" in m["To"].lower()]
    assert sorted(sent) == ["Control+1@example.net", "control+0@example.net",
                            "control+x@example.net"]  # fmt: skip
    health = updating_shop.ada.get("/api/v1/admin/health").get_json()
    assert health["outbox"]["reporterMailsLimited"] == 2


def test_an_identifier_that_is_no_address_is_kept_as_a_name_and_the_answer_says_no_receipt(
    updating_shop,
):
    named = file(updating_shop, reporter="ann@localhost")
    assert (named["receipt"], named["reporterIdentifier"]) == (False, "ann@localhost")
    # The local part as typed (a server may tell its cases apart), the domain in lower case.
    typed = file(updating_shop, reporter="Ann.Lee@Example.COM")
    assert typed["receipt"] is True
    [receipt] = mails_to(updating_shop, "ann.lee@example.com")
    assert receipt["To"] == "Ann.Lee@example.com"
    assert mails_to(updating_shop, "ann@localhost") == []
    # Unsubscribed in any case: the next answer says no receipt, and none comes.
    link = UNSUBSCRIBE.match(receipt["List-Unsubscribe"])
    done = updating_shop.app.test_client().post(
        f"/unsubscribe/{link[1]}",
        data="List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    assert done.get_json()["email"] == "ann.lee@example.com"
    again = file(updating_shop, reporter="ann.lee@EXAMPLE.com")
    assert again["receipt"] is False
    assert mails_to(updating_shop, "ann.lee@example.com") == []
    # A project that does not mail reporters: no receipt, whatever the address.
    reporter_updates(updating_shop.ada, updating_shop.project, enabled=False)
    assert file(updating_shop, reporter="rep@example.com")["receipt"] is False
