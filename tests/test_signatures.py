"""A report's signature (docs/api.md §8.9): the same bug reported by different people, with
their own order numbers, addresses and ids, gets one signature; another bug another. Made by
the fan-out, over HTTP here as the widget files reports; older reports by the backfill."""

from datetime import timedelta

import pytest
from sqlalchemy import delete, select, update

from harness.client import create_project
from svc.extensions import db
from svc.models import InstanceMarker, ReportSignature
from svc.models.base import utcnow
from svc.services.grouping import signatures
from tests.helpers import file_report


def error(message: str, stack: str | None = None) -> list[dict]:
    entry = {"level": "error", "message": message, "timestamp": 1}
    if stack:
        entry["stack"] = stack
    return [{"level": "log", "message": "loaded", "timestamp": 0}, entry]


def signed(title="Checkout fails", url="https://shop.example/checkout", console=(), network=()):
    return signatures.signature_of(title, {"url": url}, list(console), list(network))


CHROME = "TypeError: x\n    at pay (https://shop.example/assets/app.3f9a2c1b.js:12:34)"
FIREFOX = "pay@https://shop.example/assets/app.77e01d2f.js:12:34\n"


@pytest.mark.parametrize(
    "one, other",
    [
        # The same error, with another order's number, user's address, id and quoted value.
        (
            error("Cannot pay order 8812 for ada@example.com: 'card declined'", CHROME),
            error("Cannot pay order 17 for grace@example.org: 'insufficient funds'", FIREFOX),
        ),
        (
            error("Order 3fa85f64-5717-4562-b3fc-2c963f66afa6 not found (0xdeadbeef)"),
            error("Order 9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d not found (0x1f)"),
        ),
        (error("Timeout after 3000 ms"), error("timeout after 12.5 ms")),
    ],
)
def test_one_bug_reported_with_other_values_has_one_signature(one, other):
    assert signed(console=one) == signed(console=other)


def test_failed_requests_and_pages_are_signed_by_their_path_templates():
    first = [
        {"method": "post", "url": "https://shop.example/api/orders/5521/pay?x=1", "status": 500}
    ]
    second = [{"method": "POST", "url": "https://shop.example/api/orders/17/pay", "status": 500}]
    assert signed(network=first) == signed(network=second)
    assert signed(network=first) != signed(
        network=[{"method": "POST", "url": "https://shop.example/api/orders/17/pay", "status": 502}]
    )
    # No error, no failed request: the page and the title, ids and numbers aside.
    assert signed("Button dead on order 12", "https://shop.example/orders/12") == signed(
        "Button dead on order 99", "https://shop.example/orders/99?ref=mail"
    )


def test_other_bugs_have_other_signatures():
    kinds = {
        signed(console=error("TypeError: total is undefined")),
        signed(console=error("ReferenceError: cart is not defined")),
        signed(console=error("TypeError: total is undefined", CHROME)),  # another file
        signed(network=[{"method": "GET", "url": "https://shop.example/api/cart", "status": 404}]),
        signed("Checkout fails"),
        signed("Checkout fails", "https://shop.example/cart"),
        signed("Login is slow"),
    }
    assert len(kinds) == 7
    assert all(len(kind) <= 64 for kind in kinds)


@pytest.mark.any_database
def test_the_fan_out_signs_reports_and_the_list_groups_them(app, user_client):
    project = create_project(user_client)
    key = project["apiKey"]
    same = [
        file_report(user_client, key, console_logs=error(f"Cannot pay order {n}")).get_json()
        for n in (12, 8812)
    ]
    other = file_report(user_client, key, console_logs=error("Cart is empty")).get_json()
    shown = user_client.get(f"/api/v1/reports/{same[0]['trackingId']}").get_json()
    signature = shown["signature"]
    assert (
        signature
        and signature
        != user_client.get(f"/api/v1/reports/{other['trackingId']}").get_json()["signature"]
    )
    grouped = user_client.get("/api/v1/reports", query_string={"signature": signature})
    page = grouped.get_json()
    assert sorted(item["trackingId"] for item in page["items"]) == ["WS-1", "WS-2"]
    assert page["total"] == 2 and {item["signature"] for item in page["items"]} == {signature}

    # Reports filed before signatures were get theirs from the backfill, the same ones.
    with app.app_context():
        db.session.execute(delete(ReportSignature))
        db.session.commit()
        assert signatures.backfill(limit=2) == 3
        assert signatures.backfill() == 0
        # Once none is left, the job never searches every report again (a marker says so):
        # later reports are the fan-out's to sign.
        assert db.session.get(InstanceMarker, signatures.ALL_SIGNED) is not None
        db.session.execute(delete(ReportSignature))
        db.session.commit()
        assert signatures.backfill() == 0
        db.session.execute(delete(InstanceMarker))
        db.session.commit()
        assert signatures.backfill() == 3
    again = user_client.get("/api/v1/reports", query_string={"signature": signature})
    assert again.get_json()["total"] == 2


def test_groups_are_the_largest_of_the_last_days_with_their_reporters(app, user_client):
    """GET /reports/groups (docs/api.md §8.13): what the list's "Group by bug" and the
    overview's growing bugs show."""
    project = create_project(user_client)
    key = project["apiKey"]
    for n, reporter in enumerate(["a@example.com", "A@example.com", "b@example.com", None]):
        file_report(user_client, key, reporter_identifier=reporter,
                    console_logs=error(f"Cannot pay order {n}"))  # fmt: skip
    for _ in range(2):
        file_report(user_client, key, console_logs=error("Cart is empty"))
    file_report(user_client, key, console_logs=error("Once only"))
    other = create_project(user_client, name="Blog")
    file_report(user_client, other["apiKey"], console_logs=error("Cannot pay order 1"))

    def groups(**query):
        answer = user_client.get("/api/v1/reports/groups", query_string=query)
        assert answer.status_code == 200, answer.get_json()
        return [(g["label"], g["count"], g["reporterCount"], g["newest"]["trackingId"])
                for g in answer.get_json()["items"]]  # fmt: skip

    assert groups(project_id=project["id"]) == [
        ("console: cannot pay order <n>", 4, 3, "WS-4"),
        ("console: cart is empty", 2, 2, "WS-6"),
    ]
    assert [count for _, count, _, _ in groups()] == [4, 2]  # Blog's one report: no group
    assert len(groups(min_count=1, project_id=project["id"])) == 3
    assert len(groups(limit=1)) == 1
    # Only what was filed in the last days counts.
    with app.app_context():
        db.session.execute(update(ReportSignature).values(created_at=utcnow() - timedelta(days=8)))
        db.session.commit()
    assert groups() == [] and len(groups(days=9)) == 2
    assert user_client.get("/api/v1/reports/groups?days=0").status_code == 422


def test_a_report_as_markdown_says_what_it_shows_and_nothing_of_the_reporters_markup(
    user_client,
):
    """GET /reports/{ref}/markdown (docs/api.md §8.10): for a chat or an assistant; redacted as
    the report is, and the reporter's words are text, never a link or image of theirs."""
    project = create_project(user_client)
    filed = file_report(
        user_client,
        project["apiKey"],
        title="Pay ![x](https://evil.example/p.png) fails",
        description="# Hi\n[click](https://evil.example/)",
        console_logs=error("TypeError: total is undefined"),
        network_logs=[
            {
                "method": "POST",
                "url": "https://shop.example/api/pay?token=s3cr3t-t0ken",
                "status": 500,
                "timestamp": 2,
            }
        ],
        user_actions=[{"type": "click", "target": "button#pay", "timestamp": 3}],
        metadata={"url": "https://shop.example/checkout", "userAgent": "Firefox/140"},
    ).get_json()
    answer = user_client.get(f"/api/v1/reports/{filed['trackingId']}/markdown")
    assert answer.status_code == 200 and answer.mimetype == "text/markdown"
    text = answer.get_data(as_text=True)
    # Bare addresses in code spans: never a link, whatever autolinks (contract v6).
    assert text.startswith("# WS-1: Pay \\!\\[x\\]\\(`https://evil.example/p.png)` fails\n")
    assert "\\# Hi" in text and "\\[click\\]\\(`https://evil.example/)`" in text
    # Redacted when it was filed, as the report shows it.
    shown = user_client.get(f"/api/v1/reports/{filed['trackingId']}").get_json()
    assert "s3cr3t-t0ken" not in text
    assert f"POST {shown['networkLogs'][0]['url']} -> 500" in text
    for line in (
        "- **Status:** new",
        "- **Page:** `https://shop.example/checkout`",
        "[error] TypeError: total is undefined",
        "click button#pay",
    ):
        assert line in text, line
    other = user_client.application.test_client()
    assert other.get(f"/api/v1/reports/{filed['trackingId']}/markdown").status_code == 401


def test_what_a_reporter_wrote_on_one_line_stays_one_line_of_text_in_markdown(user_client):
    """A title with a line break and `===` made a setext heading; a
    `Reported by` with a line break forged a `- Status: resolved` line; bare URLs and @mentions
    went live. Each field is one line of text, in the export and in tracker bodies alike."""
    from svc.integrations import render

    project = create_project(user_client)
    filed = file_report(
        user_client,
        project["apiKey"],
        title="Broken\n===",
        reporter_identifier="Support\n- **Status:** resolved https://evil.example/login @admin",
        metadata={"url": "https://shop.example/\n# Owned", "userAgent": "UA\r\n+ item"},
    ).get_json()
    text = user_client.get(f"/api/v1/reports/{filed['trackingId']}/markdown").get_data(as_text=True)
    lines = text.splitlines()
    assert lines[0] == "# WS-1: Broken \\=\\=\\="
    assert [line for line in lines if line.startswith("- **Status")] == ["- **Status:** new"]
    [reported] = [line for line in lines if line.startswith("- **Reported by:**")]
    assert "`https://evil.example/login`" in reported and "`@admin`" in reported
    assert not any(line.startswith(("# Owned", "+ item", "===")) for line in lines)
    # The same rule is the tracker bodies' (render.markdown writes both).
    assert render.markdown_text("a\nb", single_line=True) == "a b"
    assert render.markdown_text("mail ann@corp.test or @bob") == "mail `ann@corp.test` or `@bob`"


# --- round 2: the app's own evidence, one wording, words alone (docs/api.md §8.9) ------------

PAGE = "https://shop.example/checkout"
APP_STACK = "    at pay (https://shop.example/assets/checkout.3f9a2c1b.js:812:17)"
NOISE = {
    "extension": {"message": "Uncaught Error: Extension context invalidated.",
                  "stack": "    at chrome-extension://kbfnb/src/Grammarly.js:2:1"},
    "moz-extension source": {"message": "TypeError: x is null",
                             "source": "moz-extension://2f1e7c3a/content.js:1:9"},
    "ResizeObserver": {"message": "ResizeObserver loop completed with undelivered notifications."},
    "Script error": {"message": "Script error."},
    "third party": {"message": "TypeError: Cannot read properties of null (reading 'x')",
                    "stack": "    at https://connect.facebook.net/en_US/fbevents.js:24:1"},
}  # fmt: skip
FOREIGN_REQUESTS = [
    {"method": "GET", "url": "https://www.google-analytics.com/g/collect?v=2", "status": 0},
    {"method": "POST", "url": "https://api-iam.intercom.io/messenger/web/ping", "status": 429},
]


def logged(*entries) -> list[dict]:
    return [{"level": "error", "timestamp": n, **entry} for n, entry in enumerate(entries)]


@pytest.mark.parametrize("noise", NOISE, ids=str)
def test_the_pages_noise_is_never_a_reports_evidence(noise):
    """An extension's error, the browser's benign messages and a third party's script's error
    before the app's own: the app's is the signature, as if the noise were not there."""
    bug = {"message": "TypeError: total is undefined", "stack": APP_STACK}
    assert signed(url=PAGE, console=logged(NOISE[noise], bug)) == signed(
        url=PAGE, console=logged(bug)
    )
    # Noise alone is no evidence: the report is signed by its page and words.
    assert signed(url=PAGE, console=logged(NOISE[noise])) == signed(url=PAGE)


def test_a_third_partys_failed_requests_are_not_the_apps():
    own = {"method": "POST", "url": "https://shop.example/api/orders/5/pay", "status": 500}
    assert signed(url=PAGE, network=[*FOREIGN_REQUESTS, own]) == signed(url=PAGE, network=[own])
    assert signed(url=PAGE, network=FOREIGN_REQUESTS) == signed(url=PAGE)
    # Relative addresses are the page's own; the project's allowed origins are the app's too.
    relative = {"method": "POST", "url": "/api/orders/6/pay", "status": 500}
    assert signed(url=PAGE, network=[relative]) == signed(url=PAGE, network=[own])
    api = [{"method": "GET", "url": "https://api.shop.example/v1/cart", "status": 503}]
    assert signatures.signature_of("t", {"url": PAGE}, [], api, ["https://api.shop.example"]) != (
        signatures.signature_of("t", {"url": PAGE}, [], api)
    )


def test_the_last_of_the_apps_errors_is_the_evidence():
    """What the reporter saw go wrong, not the first hiccup of the page's life."""
    early = {"message": "Warning: slow image", "stack": APP_STACK}
    bug = {"message": "TypeError: total is undefined", "stack": APP_STACK}
    assert signed(url=PAGE, console=logged(early, bug)) == signed(url=PAGE, console=logged(bug))
    label = signatures.source_of("t", signatures.evidence_of({"url": PAGE}, logged(early, bug), []))
    assert label == "console: typeerror: total is undefined @ /assets/checkout.<hash>.js"


@pytest.mark.parametrize(
    "chrome, firefox, safari",
    [
        (
            "TypeError: Cannot read properties of undefined (reading 'id')",
            'TypeError: can\'t access property "id", k3.paymentMethod is undefined',
            "TypeError: undefined is not an object (evaluating 'q7.paymentMethod.id')",
        ),
        (
            "Uncaught TypeError: Cannot read properties of null (reading 'quantity')",
            'TypeError: can\'t access property "quantity", e is null',
            "TypeError: null is not an object (evaluating 'n.quantity')",
        ),
        (
            "TypeError: k3.toFixed is not a function",
            "TypeError: b.toFixed is not a function",
            "TypeError: z9.toFixed is not a function. (In 'z9.toFixed(2)', 'z9.toFixed' is"
            " undefined)",
        ),
        (
            "ReferenceError: grecaptcha is not defined",
            "ReferenceError: grecaptcha is not defined",
            "ReferenceError: Can't find variable: grecaptcha",
        ),
        ("RangeError: Invalid time value", "RangeError: invalid date", "RangeError: Invalid Date"),
        (
            "Error: Request timed out after 23000ms",
            "Error: Request timed out after 30000ms",
            "Error: Request timed out after 2.5ms",
        ),
    ],
)
def test_three_engines_wordings_of_one_error_are_one_signature(chrome, firefox, safari):
    stacks = (APP_STACK, "pay@https://shop.example/assets/checkout.77e01d2f.js:815:3", None)
    made = {
        signed(url=PAGE, console=logged({"message": message, **({"stack": s} if s else {})}))
        for message, s in zip((chrome, firefox, safari), stacks, strict=True)
    }
    # Safari's stack names no file here: its signature differs by the frame alone.
    assert len(made) == 2
    keys = {
        signatures.parts_of(signatures.evidence_of({"url": PAGE}, logged({"message": m}), [])).error
        for m in (chrome, firefox, safari)
    }
    assert len(keys) == 1


def test_other_properties_and_other_errors_stay_apart():
    def key(message):
        found = signatures.evidence_of({"url": PAGE}, logged({"message": message}), [])
        return signatures.parts_of(found).error

    assert key("TypeError: Cannot read properties of undefined (reading 'id')") != key(
        "TypeError: Cannot read properties of undefined (reading 'total')"
    )
    assert key("TypeError: Cannot read properties of undefined (reading 'id')") != key(
        "TypeError: Cannot read properties of null (reading 'id')"
    )


@pytest.mark.parametrize(
    "one, other",
    [
        ("https://shop.example/api/invoices/INV-2024-00421/pdf", "/api/invoices/INV-2025-7/pdf"),
        ("https://shop.example/api/addresses/addr_8f3K2", "/api/addresses/addr_Q1w9z"),
        ("https://shop.example/de/checkout", "https://shop.example/checkout"),
        ("https://shop.example/fr-fr/products/red-shoes-41", "/products/blue-shirt-7"),
        ("https://shop.example/pt_BR/cart", "/cart"),
    ],
)
def test_ids_with_separators_and_language_prefixes_leave_one_template(one, other):
    assert signatures.path_template(one) == signatures.path_template(other)


def test_a_path_that_only_looks_like_a_language_keeps_its_segments():
    assert signatures.path_template("/my/orders") == "/my/orders"
    assert signatures.path_template("/api/v2/cart") == "/api/v2/cart"
    assert signatures.path_template("/de") == "/de"  # a page of its own, nothing after it


def test_words_are_stemmed_in_the_reporters_language():
    german = signatures.terms_of("Zahlungen schlagen fehl", "Die Zahlung schlug fehl", "de-AT")
    assert german.count("zahlung") == 1 and "zahlungen" not in german
    english = signatures.terms_of("Payments fail", "The payment failed", "en")
    assert english == ["payment", "fail"]
    # Japanese has no spaces: pairs of characters, so that one sentence is not one word.
    japanese = signatures.terms_of("ログインできません", "", "ja")
    assert "ログ" in japanese and "ログインできません" not in japanese


@pytest.mark.any_database
def test_reports_of_words_alone_join_the_group_of_an_earlier_one_that_says_the_same(
    app, user_client
):
    key = create_project(user_client)["apiKey"]
    page = {"url": "https://shop.example/account/settings"}

    def group_of(title, description=""):
        filed = file_report(user_client, key, title=title, description=description,
                            metadata=page).get_json()  # fmt: skip
        return user_client.get(f"/api/v1/reports/{filed['id']}").get_json()["signature"]

    first = group_of("Dark mode labels unreadable", "Grey settings labels on black.")
    assert group_of("Unreadable labels in dark mode", "settings, grey on black") == first
    assert group_of("Export button missing", "The CSV export is gone.") != first
    assert group_of("Dunkelmodus Text unlesbar") != first  # words in common: none


@pytest.mark.any_database
def test_rows_made_by_older_rules_are_made_again_once_and_counted_until_then(app, user_client):
    """After an upgrade the sign-reports job makes every row of older rules again, oldest
    first, in batches; /admin/health counts those left."""
    key = create_project(user_client)["apiKey"]
    noise, bug = logged(NOISE["extension"]), logged({"message": "Cart is empty"})
    for n in range(3):
        file_report(user_client, key, console_logs=[*noise, *bug], title=f"Empty {n}")
    with app.app_context():
        # As the first rules made them: the extension's error, the first, was the signature.
        old = signatures.signature_of("t", {}, noise, [])
        db.session.execute(update(ReportSignature).values(version=1, signature=old))
        db.session.commit()
    health = user_client.get("/api/v1/admin/health").get_json()
    assert health["outbox"]["signaturesOutdated"] == 3
    with app.app_context():
        assert signatures.backfill(limit=2) == 3
        assert signatures.backfill() == 0
        rows = db.session.scalars(select(ReportSignature)).all()
        assert {row.version for row in rows} == {signatures.VERSION}
        assert {row.label for row in rows} == {"console: cart is empty"}
    assert user_client.get("/api/v1/admin/health").get_json()["outbox"]["signaturesOutdated"] == 0
