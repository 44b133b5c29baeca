"""What the service does for the widget (docs/api.md §8.1 and §7.3): the script itself, the
widget's settings and the endpoints it reads with the API key, the honeypot, an empty
description. The widget in a browser: tests/test_widget_browser.py."""

import gzip
from pathlib import Path

import pytest

from harness.client import add_to_project, create_project, csrf
from svc.widget import SCRIPT
from tests.helpers import REPORT, WIDGET_DEFAULTS, file_report

ORIGIN = {"Origin": "https://shop.example.com"}
DEFAULTS = WIDGET_DEFAULTS
BUDGET_BYTES = 25 * 1024
WIDGET_READS = ["/api/v1/projects/widget-config", "/api/v1/projects/console-log-quota"]


@pytest.fixture
def project(user_client):
    return create_project(user_client)


def set_widget(client, project, **settings):
    return client.patch(
        f"/api/v1/projects/{project['id']}",
        json={"settings": {"widget": settings}},
        headers=csrf(client),
    )


def config(client, api_key, headers=None):
    return client.get(
        "/api/v1/projects/widget-config", headers={"X-API-Key": api_key, **(headers or {})}
    )


def test_the_script_is_public_cacheable_and_revalidated(client):
    response = client.get("/widget.js")
    assert response.status_code == 200
    assert response.mimetype == "text/javascript"
    assert response.data == Path(SCRIPT).read_bytes()
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "public" in response.headers["Cache-Control"]
    assert "max-age=86400" in response.headers["Cache-Control"]
    etag = response.headers["ETag"]
    again = client.get("/widget.js", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b""
    assert client.get("/widget.js", headers={"If-None-Match": '"other"'}).status_code == 200


def test_the_script_stays_within_its_size_budget():
    size = len(gzip.compress(Path(SCRIPT).read_bytes(), compresslevel=9))
    print(f"widget.js: {size} bytes gzipped of a {BUDGET_BYTES} byte budget")
    assert size <= BUDGET_BYTES


def test_the_widgets_words_come_beside_the_script_in_the_language_that_serves_a_tag(client):
    """docs/widget.md, "Languages": one small JSON per language, cached as the script is."""
    german = client.get("/widget-de-AT.json")
    assert german.status_code == 200 and german.mimetype == "application/json"
    words = german.get_json()
    assert (words["locale"], words["dir"]) == ("de", "ltr")
    assert words["messages"]["Send report"] == "Meldung senden"
    assert words["plurals"]["Console messages: {count} entry"] == {
        "one": "Konsolenmeldungen: {count} Eintrag",
        "other": "Konsolenmeldungen: {count} Einträge",
    }
    assert german.headers["Access-Control-Allow-Origin"] == "*"
    assert "max-age=86400" in german.headers["Cache-Control"]
    again = client.get("/widget-de.json", headers={"If-None-Match": german.headers["ETag"]})
    assert again.status_code == 304
    # Polish and Arabic: every plural category the browser's Intl.PluralRules can name.
    polish = client.get("/widget-pl.json").get_json()["plurals"]
    assert polish["Network requests: {count} request"]["few"].endswith("{count} żądania")
    assert polish["Network requests: {count} request"]["many"].endswith("{count} żądań")
    arabic = client.get("/widget-ar.json").get_json()
    assert arabic["dir"] == "rtl"
    assert set(arabic["plurals"]["Console messages: {count} entry"]) == {
        "zero", "one", "two", "few", "many", "other"
    }  # fmt: skip
    # A language svc does not speak is English; what is not a tag is not found.
    english = client.get("/widget-xx.json").get_json()
    assert english["locale"] == "en" and english["messages"]["Send report"] == "Send report"
    refused = client.get("/widget-%3Cscript%3E.json")
    assert refused.status_code == 404 and refused.get_json() == {"detail": "Not a language tag"}


def test_config_has_the_defaults_and_the_upload_limit(client, project):
    response = config(client, project["apiKey"], ORIGIN)
    assert response.status_code == 200
    assert response.get_json() == {
        **DEFAULTS,
        "maxScreenshotBytes": 10 * 1024 * 1024,
        "mailsReporters": False,
    }
    assert response.headers["Access-Control-Allow-Origin"] == "*"


def test_config_follows_the_owners_settings_merged(user_client, client, project):
    changed = set_widget(
        user_client,
        project,
        primary_color="#FF0066",
        button_text="  Feedback  ",
        position="top-left",
    )
    assert changed.status_code == 200
    assert changed.get_json()["settings"]["widget"] == {
        **DEFAULTS,
        "primaryColor": "#ff0066",
        "buttonText": "Feedback",
        "position": "top-left",
    }
    # Keys not sent keep their values, here as for the other settings.
    set_widget(
        user_client, project, capture_console=False, logo_url="https://cdn.example.com/l.png"
    )
    user_client.patch(
        f"/api/v1/projects/{project['id']}", json={"name": "Renamed"}, headers=csrf(user_client)
    )
    assert config(client, project["apiKey"]).get_json() == {
        **DEFAULTS,
        "primaryColor": "#ff0066",
        "buttonText": "Feedback",
        "position": "top-left",
        "captureConsole": False,
        "logoUrl": "https://cdn.example.com/l.png",
        "maxScreenshotBytes": 10 * 1024 * 1024,
        "mailsReporters": False,
    }
    set_widget(user_client, project, logo_url=None)
    assert config(client, project["apiKey"]).get_json()["logoUrl"] is None


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"primary_color": "blue"}, "primary_color"),
        ({"primary_color": "#12345"}, "primary_color"),
        ({"button_text": ""}, "button_text"),
        ({"button_text": "   "}, "button_text"),
        ({"modal_title": "x" * 61}, "modal_title"),
        ({"position": "middle"}, "position"),
        ({"logo_url": "javascript:alert(1)"}, "logo_url"),
        ({"logo_url": "/relative.png"}, "logo_url"),
        ({"enable_screenshot": "yes"}, "enable_screenshot"),
        ({"capture_network": 1}, "capture_network"),
        ({"primaryColor": "#ffffff"}, "primaryColor"),
    ],
)
def test_bad_widget_settings_are_refused_and_change_nothing(
    user_client, client, project, settings, field
):
    response = set_widget(user_client, project, **settings)
    assert response.status_code == 422
    assert f"settings.widget.{field}" in response.get_json()["errors"]
    assert config(client, project["apiKey"]).get_json() == {
        **DEFAULTS,
        "maxScreenshotBytes": 10 * 1024 * 1024,
        "mailsReporters": False,
    }


def test_members_see_the_widget_settings_but_cannot_change_them(user_client, other_client, project):
    add_to_project(user_client, project["id"], other_client, "grace@example.com")
    seen = other_client.get(f"/api/v1/projects/{project['id']}").get_json()
    assert seen["settings"]["widget"] == DEFAULTS
    assert set_widget(other_client, project, button_text="Mine").status_code == 403


@pytest.mark.parametrize(
    "path", ["/api/v1/projects/widget-config", "/api/v1/projects/console-log-quota"]
)
def test_widget_reads_need_the_key_and_an_allowed_origin(user_client, client, project, path):
    missing = client.get(path, headers=ORIGIN)
    assert missing.status_code == 401
    assert missing.headers["Access-Control-Allow-Origin"] == "*"  # the widget can read why
    assert client.get(path, headers={"X-API-Key": "svc_pub_wrong"}).status_code == 401
    assert client.get(path, headers={"Authorization": "Bearer svc_pat_x"}).status_code == 401
    user_client.patch(
        f"/api/v1/projects/{project['id']}",
        json={"settings": {"allowed_origins": ["https://app.example.com"]}},
        headers=csrf(user_client),
    )
    refused = client.get(path, headers={"X-API-Key": project["apiKey"], **ORIGIN})
    assert refused.status_code == 403
    allowed = client.get(
        path, headers={"X-API-Key": project["apiKey"], "Origin": "https://app.example.com"}
    )
    assert allowed.status_code == 200
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://app.example.com"


@pytest.mark.parametrize(
    "path", ["/api/v1/projects/widget-config", "/api/v1/projects/console-log-quota"]
)
def test_widget_reads_answer_their_preflight(client, path):
    preflight = client.options(
        path,
        headers={
            **ORIGIN,
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "x-api-key",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert preflight.headers["Access-Control-Allow-Methods"] == "GET, OPTIONS"
    assert "X-API-Key" in preflight.headers["Access-Control-Allow-Headers"]


def test_the_reports_preflight_still_allows_only_post(client):
    preflight = client.options(
        "/api/v1/reports", headers={**ORIGIN, "Access-Control-Request-Method": "POST"}
    )
    assert preflight.headers["Access-Control-Allow-Methods"] == "POST, OPTIONS"


def test_console_log_quota_is_unlimited(client, project):
    response = client.get(
        "/api/v1/projects/console-log-quota", headers={"X-API-Key": project["apiKey"]}
    )
    assert response.get_json() == {"allowed": True, "remaining": None, "limit": None}


@pytest.mark.parametrize("field", ["hp_field", "hpField"])
def test_a_filled_honeypot_is_rejected_and_stores_nothing(user_client, client, project, field):
    user_client.patch(
        f"/api/v1/projects/{project['id']}",
        json={"settings": {"webhook_url": "https://hooks.example.com/svc"}},
        headers=csrf(user_client),
    )
    # Even with fields that would fail validation: a bot learns nothing from field errors.
    for body in ({field: "https://spam.example"}, {field: "x", "severity": "urgent"}):
        response = file_report(client, project["apiKey"], **body)
        assert response.status_code == 400
        assert response.get_json() == {"detail": "Rejected"}
    assert user_client.get("/api/v1/reports").get_json()["total"] == 0
    deliveries = user_client.get(f"/api/v1/projects/{project['id']}/webhook-deliveries")
    assert deliveries.get_json()["total"] == 0


def test_an_empty_honeypot_files_the_report(user_client, client, project):
    response = file_report(client, project["apiKey"], hp_field="")
    assert response.status_code == 201
    assert user_client.get("/api/v1/reports").get_json()["total"] == 1


def test_an_empty_description_is_accepted_but_not_a_missing_one(user_client, client, project):
    filed = file_report(client, project["apiKey"], description="")
    assert filed.status_code == 201 and filed.get_json()["description"] == ""
    body = {key: value for key, value in REPORT.items() if key != "description"}
    missing = client.post("/api/v1/reports", json=body, headers={"X-API-Key": project["apiKey"]})
    assert missing.status_code == 422 and "description" in missing.get_json()["errors"]
    cleared = user_client.patch(
        f"/api/v1/reports/{filed.get_json()['trackingId']}",
        json={"description": ""},
        headers=csrf(user_client),
    )
    assert cleared.status_code == 200
