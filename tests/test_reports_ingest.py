"""Report creation with the project API key: docs/api.md §8.1 (create) and §10 (CORS)."""

import copy
import json
import threading

import pytest
from sqlalchemy import event, func, select

from harness.client import create_project, csrf, register
from svc.extensions import db
from svc.models import Report, ReportDetail
from tests.helpers import (
    FULL_FIELDS,
    REPORT,
    capture_network_details,
    file_report,
    migrated_sqlite_app,
    writer_holding_the_lock,
)


@pytest.fixture
def project(user_client):
    """Web Shop, capturing requests' headers and bodies (off by default: then none is kept)."""
    project = create_project(user_client, "Web Shop")
    capture_network_details(user_client, project["id"])
    return project


@pytest.fixture
def api_key(project):
    return project["apiKey"]


def count_reports(app) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(Report))


# --- the created report -------------------------------------------------------------------------


def test_create_returns_the_full_report(client, project, api_key):
    response = file_report(client, api_key, reporter_identifier="user@shop.example")
    assert response.status_code == 201
    report = response.get_json()
    # The widget's answer alone says whether a receipt will be mailed (none: mail is off here).
    assert set(report) == FULL_FIELDS | {"receipt"} and report["receipt"] is False
    assert response.headers["Location"] == f"/api/v1/reports/{report['id']}"
    assert report["projectId"] == project["id"]
    assert report["trackingId"] == "WS-1"
    assert report["status"] == "new"
    assert (report["title"], report["severity"], report["category"]) == (
        REPORT["title"],
        "high",
        "bug",
    )
    assert report["reporterIdentifier"] == "user@shop.example"
    assert report["screenshotUrl"] is None and report["assigneeId"] is None
    assert report["consoleLogs"] == report["networkLogs"] == report["userActions"] == []
    assert report["metadata"] == {}
    assert report["createdAt"] == report["updatedAt"] and report["createdAt"].endswith("Z")


def test_every_value_is_stored_exactly_as_sent(client, user_client, api_key):
    # Integers past 64 bits, the float closest to 0.1, any script: orjson reads the first as a
    # float, so svc.json_codec hands such bodies to the standard library.
    metadata = {
        "orderId": 123456789012345678901234567890,
        "negative": -98765432109876543210,
        "ratio": 0.1,
        "small": 5e-324,
        "name": "Zoë 東京 🐛",
    }
    actions = [{"type": "input", "data": {"value": "naïve\u2028line"}, "timestamp": 2**63 - 1}]
    created = file_report(client, api_key, metadata=metadata, user_actions=actions)
    stored = user_client.get(f"/api/v1/reports/{created.get_json()['id']}").get_json()
    for report in (created.get_json(), stored):
        assert report["metadata"] == metadata
        assert type(report["metadata"]["orderId"]) is int
        assert report["userActions"] == actions


def test_the_api_key_check_does_not_wait_for_a_writer(tmp_path):
    """On SQLite the look-up reads without the write lock, so that a report's key is checked
    while another worker stores one (it used to queue behind it)."""
    from svc.auth import api_keys

    app = migrated_sqlite_app(tmp_path)
    client = app.test_client()
    register(client)
    api_key = create_project(client)["apiKey"]
    with writer_holding_the_lock(tmp_path / "svc.sqlite3"), app.app_context():
        # With BEGIN IMMEDIATE this waits out the busy timeout, then fails: database locked.
        project = api_keys.for_api_key(api_key)
        db.session.commit()
        assert project is not None and project.api_key == api_key
        db.engine.dispose()


def test_tracking_numbers_count_per_project(client, user_client, api_key):
    other = create_project(user_client, "Backend")
    ids = [file_report(client, api_key).get_json()["trackingId"] for _ in range(3)]
    ids.append(file_report(client, other["apiKey"]).get_json()["trackingId"])
    assert ids == ["WS-1", "WS-2", "WS-3", "BAC-1"]


def test_title_is_trimmed(client, api_key):
    assert file_report(client, api_key, title="  Broken  ").get_json()["title"] == "Broken"


def test_logs_and_metadata_are_kept_as_sent(client, api_key):
    console = [
        {
            "level": "error",
            "message": "TypeError: x is undefined",
            "timestamp": 1763805600123,
            "stack": "at pay (app.js:10:5)",
        }
    ]
    network = [
        {
            "method": "POST",
            "url": "https://shop.example/api/pay?cart=12",
            "status": 500,
            "duration": 182,
            "timestamp": 1763805600100,
            "requestHeaders": {"Content-Type": "application/json"},
        }
    ]
    actions = [
        {
            "type": "click",
            "target": "button#pay",
            "timestamp": 1763805599000,
            "data": {"x": 10, "y": 20},
        }
    ]
    metadata = {
        "viewport": {"width": 1280, "height": 720},
        "performance": {"memory": {"used": 1.5, "limits": {"heap": {"max": 4}}}},
        "browser": "Firefox",
        "build": 1204,
        "beta": True,
        "referrer": None,
    }
    report = file_report(
        client,
        api_key,
        console_logs=console,
        network_logs=network,
        user_actions=actions,
        metadata=metadata,
    ).get_json()
    assert report["consoleLogs"] == console
    assert report["networkLogs"] == network
    assert report["userActions"] == actions
    assert report["metadata"] == metadata


def test_unknown_top_level_fields_are_ignored(client, api_key):
    response = file_report(client, api_key, widget_version="9.9", future_field={"a": 1})
    assert response.status_code == 201
    assert "widgetVersion" not in response.get_json()


def test_captured_arrays_are_stored_apart_from_the_report(app, client, api_key):
    file_report(client, api_key, console_logs=[{"level": "log", "message": "hi"}])
    with app.app_context():
        detail = db.session.scalar(select(ReportDetail))
        assert detail.console_logs == [{"level": "log", "message": "hi"}]
        assert "console_logs" not in Report.__table__.columns


# --- validation ---------------------------------------------------------------------------------


def _nested(depth: int):
    value = 1
    for _ in range(depth - 1):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"title": None}, "title"),
        ({"title": ""}, "title"),
        ({"title": "   "}, "title"),
        ({"title": "x" * 201}, "title"),
        ({"title": 12}, "title"),
        ({"description": None}, "description"),
        ({"description": "x" * 20_001}, "description"),
        ({"severity": "urgent"}, "severity"),
        ({"severity": "HIGH"}, "severity"),
        ({"category": "feature"}, "category"),
        ({"reporter_identifier": "x" * 321}, "reporter_identifier"),
        ({"console_logs": "not a list"}, "console_logs"),
        ({"console_logs": ["just a string"]}, "console_logs.0"),
        ({"network_logs": [{"ok": 1}, 5]}, "network_logs.1"),
        ({"user_actions": [{}] * 1001}, "user_actions"),
        ({"metadata": ["not", "an", "object"]}, "metadata"),
        ({"metadata": {f"k{i}": i for i in range(101)}}, "metadata"),
        ({"metadata": {"k" * 65: 1}}, "metadata"),
        ({"metadata": {"": 1}}, "metadata"),
        ({"metadata": {"a": _nested(6)}}, "metadata"),  # 6 levels
        ({"metadata": {"blob": "x" * (64 * 1024)}}, "metadata"),
        ({"title": "nul \u0000 inside"}, "title"),
        ({"metadata": {"deep": {"er": "lone \udc00"}}}, "metadata.deep.er"),
        ({"console_logs": [{"message": "\u0000"}]}, "console_logs.0.message"),
        ({"screenshot_url": "not-an-uploaded-key.png"}, "screenshot_url"),
        ({"annotated_screenshot_url": "../../etc/passwd"}, "annotated_screenshot_url"),
    ],
)
def test_validation(app, client, api_key, change, field):
    body = {**REPORT, **change}
    for name, value in change.items():
        if value is None:
            body.pop(name)
    response = client.post(
        "/api/v1/reports",
        headers={"X-API-Key": api_key},
        data=json.dumps(body),
        content_type="application/json",
    )
    assert response.status_code == 422, response.get_json()
    errors = response.get_json()["errors"]
    assert errors.get(field)
    assert count_reports(app) == 0


def test_limits_are_inclusive(client, api_key):
    response = file_report(
        client,
        api_key,
        title="x" * 200,
        description="y" * 20_000,
        reporter_identifier="z" * 320,
        user_actions=[{}] * 1000,
        metadata={**{f"k{i}": i for i in range(99)}, "k" * 64: 1},
    )
    assert response.status_code == 201, response.get_json()
    # The metadata object is level 1, so the example of docs/api.md §8.1 is the deepest allowed.
    deepest = {"a": {"b": {"c": {"d": {"e": 1}}}}}
    assert file_report(client, api_key, metadata=deepest).status_code == 201
    assert (
        file_report(
            client, api_key, metadata={"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}}
        ).status_code
        == 422
    )


def test_failed_validation_leaves_no_gap_in_tracking_numbers(client, api_key):
    assert file_report(client, api_key).get_json()["trackingId"] == "WS-1"
    assert file_report(client, api_key, screenshot_url="nope.png").status_code == 422
    assert file_report(client, api_key).get_json()["trackingId"] == "WS-2"


def test_body_over_5_mib_is_413(app, client, api_key):
    body = json.dumps({**REPORT, "description": "x" * (5 * 1024 * 1024)})
    response = client.post(
        "/api/v1/reports",
        headers={"X-API-Key": api_key},
        data=body,
        content_type="application/json",
    )
    assert response.status_code == 413
    assert count_reports(app) == 0


# --- redaction ----------------------------------------------------------------------------------

SECRET_HEADERS = [
    "Authorization",
    "Proxy-Authorization",
    "Cookie",
    "Set-Cookie",
    "X-API-Key",
    "X-Auth-Token",
    "X-Access-Token",
    "X-CSRF-Token",
]
SECRET_PARAMETERS = [
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "code",
    "password",
    "secret",
    "client_secret",
    "api_key",
    "apikey",
    "key",
    "signature",
    "sig",
    # The widget's names the server lacked.
    "pwd",
    "passwd",
    "session",
    "sessionid",
    "auth",
    "authorization",
    "jwt",
]
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"


@pytest.mark.parametrize("header", SECRET_HEADERS)
@pytest.mark.parametrize("field", ["requestHeaders", "responseHeaders", "headers"])
def test_secret_headers_are_redacted(client, api_key, header, field):
    entry = {
        "method": "GET",
        "url": "https://shop.example/",
        "status": 200,
        field: {header.upper(): "secret-value", "Accept": "text/html"},
    }
    stored = file_report(client, api_key, network_logs=[entry]).get_json()["networkLogs"][0]
    assert stored[field] == {header.upper(): "[redacted]", "Accept": "text/html"}
    assert {k: v for k, v in stored.items() if k != field} == {
        k: v for k, v in entry.items() if k != field
    }


def test_headers_given_as_a_list_are_redacted(client, api_key):
    entry = {
        "url": "https://shop.example/",
        "requestHeaders": [
            {"name": "cookie", "value": "sid=1"},
            {"name": "Accept", "value": "*/*"},
            ["Authorization", "Basic x"],
        ],
    }
    stored = file_report(client, api_key, network_logs=[entry]).get_json()["networkLogs"][0]
    assert stored["requestHeaders"] == [
        {"name": "cookie", "value": "[redacted]"},
        {"name": "Accept", "value": "*/*"},
        ["Authorization", "[redacted]"],
    ]


@pytest.mark.parametrize("parameter", SECRET_PARAMETERS)
def test_secret_query_parameters_are_redacted(client, api_key, parameter):
    url = f"https://shop.example/cb?page=2&{parameter.upper()}=s3cr3t&q=token#top"
    report = file_report(
        client, api_key, network_logs=[{"url": url}], metadata={"url": url, "other": url}
    ).get_json()
    expected = f"https://shop.example/cb?page=2&{parameter.upper()}=[redacted]&q=token#top"
    assert report["networkLogs"][0]["url"] == expected
    assert report["metadata"]["url"] == expected
    assert report["metadata"]["other"] == expected  # any URL in metadata (docs/api.md §8.1.1)


def test_jwts_are_redacted_in_network_entries_and_console_messages(client, api_key):
    report = file_report(
        client,
        api_key,
        network_logs=[
            {
                "url": "https://api.example/me",
                "responseBody": f'{{"jwt": "{JWT}"}}',
                "requestHeaders": {"X-Session": f"Bearer {JWT}"},
            }
        ],
        console_logs=[{"level": "log", "message": f"token is {JWT} ok", "stack": "s"}],
        user_actions=[{"type": "input", "data": {"value": "eyJ not a token"}}],
    ).get_json()
    assert report["networkLogs"][0]["responseBody"] == '{"jwt": "[redacted]"}'
    assert report["networkLogs"][0]["requestHeaders"] == {"X-Session": "Bearer [redacted]"}
    assert report["consoleLogs"][0] == {
        "level": "log",
        "message": "token is [redacted] ok",
        "stack": "s",
    }
    assert report["userActions"][0]["data"]["value"] == "eyJ not a token"


def test_jwts_are_redacted_in_console_stacks_and_arguments(client, api_key):
    entry = {
        "level": "error",
        "message": "failed",
        "stack": f"Error: bad token {JWT}\n    at login (app.js:1:2)",
        "args": ["token", JWT, {"nested": [f"Bearer {JWT}"]}],
    }
    stored = file_report(client, api_key, console_logs=[entry]).get_json()["consoleLogs"][0]
    assert stored == {
        "level": "error",
        "message": "failed",
        "stack": "Error: bad token [redacted]\n    at login (app.js:1:2)",
        "args": ["token", "[redacted]", {"nested": ["Bearer [redacted]"]}],
    }


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # Fragments that carry parameters, as OAuth's implicit flow and hash routers write them.
        (
            "https://app.example/cb#access_token=s3cr3t&state=xyz",
            "https://app.example/cb#access_token=[redacted]&state=xyz",
        ),
        (
            "https://app.example/#/login?token=s3cr3t&next=%2Fhome",
            "https://app.example/#/login?token=[redacted]&next=%2Fhome",
        ),
        (
            "https://app.example/cb?code=abc&page=1#id_token=s3cr3t",
            "https://app.example/cb?code=[redacted]&page=1#id_token=[redacted]",
        ),
        ("https://app.example/docs#section-2", "https://app.example/docs#section-2"),
        # Percent-encoded names count as they decode.
        (
            "https://app.example/?acc%65ss_token=s3cr3t&p%61ssword=hunter2",
            "https://app.example/?acc%65ss_token=[redacted]&p%61ssword=[redacted]",
        ),
        # Credentials in the authority.
        (
            "https://deploy:hunter2@git.example/repo.git?x=1",
            "https://deploy:[redacted]@git.example/repo.git?x=1",
        ),
        ("ssh://git@git.example/repo.git", "ssh://git@git.example/repo.git"),
        # What the client masked already stays as it sent it.
        ("https://app.example/?token=[REDACTED]", "https://app.example/?token=[REDACTED]"),
        ("https://app.example/?token=%5BREDACTED%5D", "https://app.example/?token=%5BREDACTED%5D"),
        ("https://app.example/#access_token=***", "https://app.example/#access_token=***"),
        ("https://deploy:***@git.example/", "https://deploy:***@git.example/"),
    ],
)
def test_urls_lose_their_secrets_wherever_they_hide(client, api_key, url, expected):
    report = file_report(
        client,
        api_key,
        network_logs=[{"url": url}],
        metadata={"url": url, "page": {"referrer": url, "history": [url]}, "note": "no url"},
    ).get_json()
    assert report["networkLogs"][0]["url"] == expected
    assert report["metadata"] == {
        "url": expected,
        "page": {"referrer": expected, "history": [expected]},
        "note": "no url",
    }


def test_secret_keys_inside_json_bodies_are_redacted(client, api_key):
    request_body = json.dumps({"email": "ada@example.com", "password": "hunter2", "remember": True})
    entry = {
        "url": "https://api.example/login",
        "requestBody": request_body,
        "responseBody": {
            "user": {"id": 7, "name": "Ada"},
            "accessToken": "opaque-1",
            "refresh_token": "opaque-2",
            "session": {"clientSecret": "opaque-3", "expires": 60},
            "Authorization": "[REDACTED]",
        },
        "body": "password=hunter2 is not JSON",
    }
    stored = file_report(client, api_key, network_logs=[entry]).get_json()["networkLogs"][0]
    assert json.loads(stored["requestBody"]) == {
        "email": "ada@example.com",
        "password": "[redacted]",
        "remember": True,
    }
    assert stored["responseBody"] == {
        "user": {"id": 7, "name": "Ada"},
        "accessToken": "[redacted]",
        "refresh_token": "[redacted]",
        # A name the widget redacts (`session`) is a secret wherever it stands: whole.
        "session": "[redacted]",
        "Authorization": "[REDACTED]",
    }
    assert stored["body"] == "password=hunter2 is not JSON"


def test_card_numbers_and_their_names_are_redacted_in_bodies(client, api_key):
    """Names of card fields, and any Luhn-valid run of 13 to 19 digits."""
    body = {"card": "4242", "cvv": "123", "card_number": "x", "cc": "y", "pan": "z",
            "IBAN": "DE89370400440532013000", "cardCvc": "1", "note": "card 4111 1111 1111 1111",
            "amex": 378282246310005, "order": 4111111111111112, "phone": "+44 20 7946 0958",
            "account": "fine", "company": "fine"}  # fmt: skip
    entry = {"url": "https://pay.example/?pan=4111111111111111&page=2",
             "requestBody": json.dumps(body), "responseBody": "paid with 5555-5555-5555-4444.",
             "body": {"list": ["6011111111111117", "1234567890123"]}}  # fmt: skip
    stored = file_report(client, api_key, network_logs=[entry]).get_json()["networkLogs"][0]
    assert json.loads(stored["requestBody"]) == {
        "card": "[redacted]", "cvv": "[redacted]", "card_number": "[redacted]",
        "cc": "[redacted]", "pan": "[redacted]", "IBAN": "[redacted]", "cardCvc": "[redacted]",
        "note": "card [redacted]", "amex": "[redacted]", "order": 4111111111111112,
        "phone": "+44 20 7946 0958", "account": "fine", "company": "fine",
    }  # fmt: skip
    assert stored["responseBody"] == "paid with [redacted]."
    assert stored["body"] == {"list": ["[redacted]", "1234567890123"]}
    assert stored["url"] == "https://pay.example/?pan=[redacted]&page=2"


def test_headers_and_bodies_are_dropped_when_the_project_does_not_capture_them(
    client, user_client, project, api_key
):
    """The setting held in the widget only; a script sent them anyway."""
    entry = {"method": "POST", "url": "https://a.example/x", "status": 500,
             "requestHeaders": {"X-Note": "a"}, "responseHeaders": [["X-B", "b"]],
             "headers": {"X-C": "c"}, "requestBody": "{}", "responseBody": "no",
             "body": "b", "request_body": "r", "response_body": "s"}  # fmt: skip
    off = {"settings": {"widget": {"capture_network_details": False}}}
    changed = user_client.patch(f"/api/v1/projects/{project['id']}", json=off,
                                headers=csrf(user_client))  # fmt: skip
    assert changed.status_code == 200
    stored = file_report(client, api_key, network_logs=[entry]).get_json()["networkLogs"][0]
    assert stored == {"method": "POST", "url": "https://a.example/x", "status": 500}


def test_control_characters_leave_captured_header_names_and_values(client, api_key):
    entry = {"url": "https://a.example/",
             "requestHeaders": {"X-\x1b[2KNote\r\n": "a\x01b\x9b\x07c", "Accept": "*/*"},
             "responseHeaders": [{"name": "X-\nB", "value": "1\x7f2"},
                                 ["X-\x03C", "\u0085d"]]}  # fmt: skip
    stored = file_report(client, api_key, network_logs=[entry]).get_json()["networkLogs"][0]
    assert stored["requestHeaders"] == {"X-[2KNote": "abc", "Accept": "*/*"}
    assert stored["responseHeaders"] == [{"name": "X-B", "value": "12"}, ["X-C", "d"]]


def test_headers_the_client_masked_stay_as_sent(client, api_key):
    entry = {"url": "https://a.example/", "requestHeaders": {"Authorization": "[REDACTED]"}}
    stored = file_report(client, api_key, network_logs=[entry]).get_json()["networkLogs"][0]
    assert stored["requestHeaders"] == {"Authorization": "[REDACTED]"}


def test_nothing_else_is_touched(client, api_key):
    network = [
        {
            "method": "GET",
            "url": "https://shop.example/search?q=keyboard&tokens=5",
            "status": 200,
            "duration": 12,
            "requestHeaders": {"Accept": "application/json", "X-Request-Id": "abc"},
        }
    ]
    console = [{"level": "warn", "message": "slow: 1200ms", "timestamp": 1}]
    report = file_report(
        client,
        api_key,
        network_logs=copy.deepcopy(network),
        console_logs=copy.deepcopy(console),
        metadata={"url": "https://shop.example/?page=1"},
    ).get_json()
    assert report["networkLogs"] == network
    assert report["consoleLogs"] == console
    assert report["metadata"] == {"url": "https://shop.example/?page=1"}


def test_operator_names_are_redacted_too(make_app):
    client = make_app(SVC_REDACT_NAMES="X-Session-Id,ticket").test_client()
    register(client)
    project = create_project(client)
    capture_network_details(client, project["id"])
    report = file_report(
        client,
        project["apiKey"],
        network_logs=[
            {
                "url": "https://a.example/?ticket=9&x=1",
                "requestHeaders": {"x-session-id": "abc", "Accept": "*/*"},
            }
        ],
    ).get_json()
    assert report["networkLogs"][0] == {
        "url": "https://a.example/?ticket=[redacted]&x=1",
        "requestHeaders": {"x-session-id": "[redacted]", "Accept": "*/*"},
    }


def test_secrets_never_reach_the_database(app, client, api_key):
    file_report(
        client,
        api_key,
        network_logs=[
            {
                "url": "https://a.example/?access_token=SECRET1",
                "requestHeaders": {"Authorization": "SECRET2"},
            }
        ],
        console_logs=[{"message": JWT}],
    )
    with app.app_context():
        stored = json.dumps(
            [
                db.session.scalar(select(ReportDetail.network_logs)),
                db.session.scalar(select(ReportDetail.console_logs)),
            ]
        )
    assert "SECRET1" not in stored and "SECRET2" not in stored and JWT not in stored


# --- credentials --------------------------------------------------------------------------------


def test_missing_or_wrong_api_key_is_401(app, client, api_key):
    assert client.post("/api/v1/reports", json=REPORT).status_code == 401
    assert file_report(client, "svc_pub_" + "x" * 40).status_code == 401
    assert file_report(client, api_key[:-1]).status_code == 401
    assert count_reports(app) == 0


def test_session_or_pat_cannot_file_reports(user_client):
    from harness.client import create_pat

    pat = create_pat(user_client)["token"]
    assert (
        user_client.post("/api/v1/reports", json=REPORT, headers=csrf(user_client)).status_code
        == 401
    )
    assert (
        user_client.post(
            "/api/v1/reports", json=REPORT, headers={"Authorization": f"Bearer {pat}"}
        ).status_code
        == 401
    )


def test_rotated_api_key_fails_at_once(client, user_client, project, api_key):
    assert file_report(client, api_key).status_code == 201
    rotated = user_client.post(
        f"/api/v1/projects/{project['id']}/rotate-api-key", headers=csrf(user_client)
    ).get_json()
    old = file_report(client, api_key)
    assert old.status_code == 401
    assert old.get_json()["detail"] == "Invalid API key"
    assert file_report(client, rotated["apiKey"]).status_code == 201


# The ingest files against the project as its process last read it for the key
# (svc.auth.api_keys); each test below first files a report, so that the project is remembered.


def test_a_key_rotated_after_a_report_answers_401_before_the_body_is_checked(
    client, user_client, project, api_key
):
    assert file_report(client, api_key).status_code == 201
    rotate = user_client.post(
        f"/api/v1/projects/{project['id']}/rotate-api-key", headers=csrf(user_client)
    )
    assert rotate.status_code == 200
    assert file_report(client, api_key, severity="nope").status_code == 401


def test_an_origin_removed_after_a_report_answers_403(app, client, user_client, project, api_key):
    shop = {"Origin": "https://shop.example"}
    assert file_report(client, api_key, headers=shop).status_code == 201
    user_client.patch(
        f"/api/v1/projects/{project['id']}",
        headers=csrf(user_client),
        json={"settings": {"allowed_origins": ["https://other.example"]}},
    )
    assert file_report(client, api_key, headers=shop).status_code == 403
    assert file_report(client, api_key, headers=shop, severity="nope").status_code == 403
    assert count_reports(app) == 1


def test_a_deleted_projects_key_answers_401(client, user_client, project, api_key):
    assert file_report(client, api_key).status_code == 201
    deleted = user_client.delete(f"/api/v1/projects/{project['id']}", headers=csrf(user_client))
    assert deleted.status_code == 204
    assert file_report(client, api_key).status_code == 401
    assert file_report(client, api_key, headers={"Idempotency-Key": "k1"}).status_code == 401


def test_a_repeated_idempotency_key_checks_the_project_too(client, user_client, project, api_key):
    once = {"Idempotency-Key": "first-try"}
    assert file_report(client, api_key, headers=once).status_code == 201
    user_client.post(f"/api/v1/projects/{project['id']}/rotate-api-key", headers=csrf(user_client))
    assert file_report(client, api_key, headers=once).status_code == 401


def test_a_project_that_changes_at_every_try_answers_503_and_stores_nothing(app, client, api_key):
    """The key is checked afresh and the report filed once more; a project changed again
    meanwhile (here: by each numbering itself) answers 503, nothing stored."""
    assert file_report(client, api_key).status_code == 201

    def change_the_project(connection, cursor, statement, *_):
        if "UPDATE projects SET last_report_number" in statement:  # PostgreSQL: in a WITH
            cursor.execute("UPDATE projects SET version = version + 1")

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", change_the_project)
    try:
        answer = file_report(client, api_key)
    finally:
        event.remove(engine, "before_cursor_execute", change_the_project)
    assert answer.status_code == 503 and answer.headers["Retry-After"] == "1"
    assert "nothing was stored" in answer.get_json()["detail"]
    assert count_reports(app) == 1
    assert file_report(client, api_key).status_code == 201


def test_a_report_alone_commits_with_its_one_statement(app, client, api_key):
    """On PostgreSQL a creation that writes nothing but its one statement runs it without a
    transaction of its own (no BEGIN, no COMMIT: the statement is atomic); one that also keeps
    an Idempotency-Key runs in a transaction. Every connection goes back to the pool
    transactional. SQLite's four statements always share a transaction."""
    autocommitting, returned = [], []

    def numbering(connection, cursor, statement, *_):
        if "UPDATE projects SET last_report_number" in statement:
            driver = connection.connection.driver_connection
            if connection.dialect.name == "postgresql":
                autocommitting.append(driver.autocommit)
            else:
                autocommitting.append(not driver.in_transaction)

    def checked_in(dbapi_connection, _record):
        returned.append(getattr(dbapi_connection, "autocommit", False))

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", numbering)
    event.listen(engine.pool, "checkin", checked_in)
    try:
        assert file_report(client, api_key).status_code == 201
        assert file_report(client, api_key, headers={"Idempotency-Key": "k1"}).status_code == 201
    finally:
        event.remove(engine, "before_cursor_execute", numbering)
        event.remove(engine.pool, "checkin", checked_in)
    assert autocommitting == [engine.dialect.name == "postgresql", False]
    assert returned and not any(returned)
    assert count_reports(app) == 2


def test_401_comes_before_validation(client):
    response = client.post(
        "/api/v1/reports", json={"title": ""}, headers={"X-API-Key": "svc_pub_nope"}
    )
    assert response.status_code == 401


# --- CORS and allowed origins -------------------------------------------------------------------


def test_preflight(client):
    for path in ("/api/v1/reports", "/api/v1/upload/screenshot"):
        response = client.options(
            path,
            headers={
                "Origin": "https://shop.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, x-api-key, idempotency-key",
            },
        )
        assert response.status_code in (200, 204)
        headers = response.headers
        assert headers["Access-Control-Allow-Origin"] == "*"
        allowed = {h.strip().lower() for h in headers["Access-Control-Allow-Headers"].split(",")}
        assert allowed >= {"content-type", "x-api-key", "idempotency-key"}
        assert "POST" in headers["Access-Control-Allow-Methods"]
        exposed = {h.strip() for h in headers["Access-Control-Expose-Headers"].split(",")}
        assert exposed >= {"Location", "Retry-After"}


def test_created_and_error_responses_carry_cors_headers(client, api_key):
    created = file_report(client, api_key, headers={"Origin": "https://shop.example"})
    assert created.headers["Access-Control-Allow-Origin"] == "*"
    assert "Location" in created.headers["Access-Control-Expose-Headers"]
    for failed in (
        file_report(client, "svc_pub_wrong", headers={"Origin": "https://x.example"}),
        file_report(client, api_key, severity="nope"),
    ):
        assert failed.status_code in (401, 422)
        assert failed.headers["Access-Control-Allow-Origin"] == "*"


def test_no_other_endpoint_sends_cors_headers(client, user_client):
    for response in (
        user_client.get("/api/v1/reports", headers={"Origin": "https://x.example"}),
        client.options("/api/v1/auth/login"),
        client.get("/healthz"),
        user_client.get("/api/v1/projects"),
    ):
        assert "Access-Control-Allow-Origin" not in response.headers


def test_allowed_origins_are_enforced(app, client, user_client, project, api_key):
    user_client.patch(
        f"/api/v1/projects/{project['id']}",
        headers=csrf(user_client),
        json={"settings": {"allowed_origins": ["https://shop.example"]}},
    )
    listed = file_report(client, api_key, headers={"Origin": "https://shop.example"})
    assert listed.status_code == 201
    assert listed.headers["Access-Control-Allow-Origin"] == "https://shop.example"
    assert "Origin" in listed.headers["Vary"]
    other = file_report(client, api_key, headers={"Origin": "https://evil.example"})
    assert other.status_code == 403
    assert "evil.example" in other.get_json()["detail"]
    assert other.headers["Access-Control-Allow-Origin"] == "*"  # so the widget can read why
    # Server-side integrations send no Origin and are not affected.
    assert file_report(client, api_key).status_code == 201
    assert count_reports(app) == 2


# --- idempotency --------------------------------------------------------------------------------


def test_repeated_idempotency_key_returns_the_first_report(app, client, api_key):
    headers = {"Idempotency-Key": "widget-retry-7f3a"}
    first = file_report(client, api_key, headers=headers)
    again = file_report(client, api_key, headers=headers)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.get_json() == first.get_json()
    assert again.headers["Location"] == first.headers["Location"]
    assert count_reports(app) == 1
    assert file_report(client, api_key, headers={"Idempotency-Key": "another"}).status_code == 201
    assert count_reports(app) == 2


def test_same_key_with_a_different_body_is_422(app, client, api_key):
    headers = {"Idempotency-Key": "k1"}
    file_report(client, api_key, headers=headers)
    response = file_report(client, api_key, headers=headers, title="Something else")
    assert response.status_code == 422
    assert "Idempotency-Key" in response.get_json()["errors"]
    assert count_reports(app) == 1


def test_idempotency_keys_are_per_project(client, user_client, api_key):
    other = create_project(user_client, "Backend")["apiKey"]
    headers = {"Idempotency-Key": "shared"}
    assert file_report(client, api_key, headers=headers).status_code == 201
    assert file_report(client, other, headers=headers).status_code == 201


@pytest.mark.parametrize("key", ["", "x" * 256, "tab\there", "caf\u00e9"])
def test_malformed_idempotency_key_is_422(client, api_key, key):
    response = file_report(
        client, api_key, headers={"Idempotency-Key": key.encode().decode("latin-1")}
    )
    assert response.status_code == 422


# --- concurrency --------------------------------------------------------------------------------


def test_tracking_numbers_stay_unique_and_gapless_under_concurrency(app, api_key):
    creations = 32
    barrier = threading.Barrier(creations)
    results: list = []

    def create():
        client = app.test_client()
        barrier.wait()
        response = file_report(client, api_key)
        results.append((response.status_code, response.get_json().get("trackingId")))

    threads = [threading.Thread(target=create) for _ in range(creations)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(status for status, _ in results) == [201] * creations
    numbers = sorted(int(tracking_id.split("-")[1]) for _, tracking_id in results)
    assert numbers == list(range(1, creations + 1))


def test_concurrent_repeats_of_one_idempotency_key_create_one_report(app, api_key):
    attempts = 8
    barrier = threading.Barrier(attempts)
    results: list = []

    def create():
        client = app.test_client()
        barrier.wait()
        response = file_report(client, api_key, headers={"Idempotency-Key": "same"})
        results.append((response.status_code, response.get_json()["id"]))

    threads = [threading.Thread(target=create) for _ in range(attempts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(status for status, _ in results) == [200] * (attempts - 1) + [201]
    assert len({report_id for _, report_id in results}) == 1
    assert count_reports(app) == 1


@pytest.mark.parametrize(
    "parameter",
    [
        "X-Amz-Signature",
        "X-Amz-Credential",
        "X-Amz-Security-Token",
        "X-Goog-Signature",
        "access-token",
        "Access_Token",
        "accessToken",
        "api-key",
        "auth_token",
        "private_token",
        "sessionToken",
    ],
)
def test_names_are_compared_without_case_dashes_or_underscores(client, api_key, parameter):
    """v4: a presigned URL is a working download link; names are spelt many ways."""
    url = f"https://bucket.example/shot.png?X-Amz-Date=20261125&{parameter}=s3cr3t"
    report = file_report(
        client,
        api_key,
        network_logs=[{"url": url, "requestHeaders": {parameter: "s3cr3t"}}],
        metadata={"url": url},
    ).get_json()
    expected = f"https://bucket.example/shot.png?X-Amz-Date=20261125&{parameter}=[redacted]"
    assert report["networkLogs"][0]["url"] == expected
    assert report["metadata"]["url"] == expected
    if parameter.lower().startswith("x-"):
        assert report["networkLogs"][0]["requestHeaders"] == {parameter: "[redacted]"}


def test_user_actions_are_redacted_as_console_entries_are(client, api_key):
    actions = [
        {"type": "navigation", "target": "https://shop.example/cb?access_token=s3cr3t&page=2"},
        {"type": "click", "target": "code#jwt", "data": {"text": f"copy {JWT}"}},
        {"type": "navigation", "target": "/reset#token=s3cr3t", "data": {"via": "pushState"}},
    ]
    stored = file_report(client, api_key, user_actions=actions).get_json()["userActions"]
    assert stored[0]["target"] == "https://shop.example/cb?access_token=[redacted]&page=2"
    assert stored[1]["data"]["text"] == "copy [redacted]"
    assert stored[2]["target"] == "/reset#token=[redacted]"
    assert "s3cr3t" not in json.dumps(stored)


@pytest.mark.any_database
@pytest.mark.parametrize(
    "sent, header, kept",
    [
        ("de-AT", "fr", "de-AT"),
        ("pt_br", None, "pt-BR"),
        ("zh-hans-cn", None, "zh-Hans-CN"),
        (None, "de-AT,de;q=0.9,en;q=0.5", "de-AT"),
        ("not a tag", "fr;q=0.4, ar;q=0.8", "ar"),
        ("x" * 40, None, "en"),
        (12, "*", "en"),
        (None, None, "en"),
    ],
)
def test_a_report_keeps_its_reporters_language(user_client, sent, header, kept):
    """docs/api.md §8.1: the widget's tag, else the request's Accept-Language, else "en";
    anything that is no BCP 47 tag is never refused, only not used."""
    project = create_project(user_client)
    extra = {} if sent is None else {"locale": sent}
    headers = {"Accept-Language": header} if header else {}
    answer = file_report(user_client, project["apiKey"], headers=headers, **extra)
    assert answer.status_code == 201, answer.get_json()
    filed = answer.get_json()
    assert filed["locale"] == kept
    assert user_client.get(f"/api/v1/reports/{filed['id']}").get_json()["locale"] == kept
