"""Replay (docs/replay.md): the upload of rrweb events, checked and redacted; the report that
takes it; reading it back; its end with the report, by retention and by erasure; the scripts
svc serves from npm's rrweb, and what happens where rrweb is not installed.

The recording and the player in Chromium are in tests/test_replay_browser.py; a replay on each
kind of object store in tests/test_storage.py.
"""

import gzip
import json
import re
from datetime import timedelta

import pytest

from harness.client import create_project, csrf, register
from svc import replay, storage
from svc.models.base import utcnow
from svc.services.reporting import retention
from tests.helpers import file_report, team_with_project

pytestmark = pytest.mark.any_database

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
EVENTS = [
    {"type": 4, "data": {"href": "https://shop.test/cart?token=abc&page=2", "width": 800,
                         "height": 600}, "timestamp": 1000},
    {"type": 2, "data": {"node": {"type": 0, "childNodes": [
        {"type": 3, "textContent": f"session {JWT}", "id": 2}], "id": 1},
        "initialOffset": {"left": 0, "top": 0}}, "timestamp": 1001},
    {"type": 3, "data": {"source": 0, "texts": [{"id": 2, "value": "Paid"}], "attributes": [],
                         "removes": [], "adds": []}, "timestamp": 1500},
]  # fmt: skip


@pytest.fixture
def project_owner(app):
    return team_with_project(app)


def send(project_owner, body: bytes, key=None):
    return project_owner.post(
        "/api/v1/upload/replay",
        data=body,
        headers={"X-API-Key": key or project_owner.key, "Content-Type": "application/gzip"},
    )


def packed(value) -> bytes:
    return gzip.compress(json.dumps(value).encode())


def events_of(project_owner, report: dict) -> list:
    answer = project_owner.get(report["replayUrl"])
    assert answer.status_code == 200
    assert answer.headers["Content-Encoding"] == "gzip" and answer.mimetype == "application/json"
    return json.loads(gzip.decompress(answer.data))


def test_a_replay_is_stored_redacted_and_read_back_with_its_report(project_owner, app):
    uploaded = send(project_owner, packed(EVENTS))
    assert uploaded.status_code == 201, uploaded.get_json()
    key = uploaded.get_json()["key"]
    assert re.fullmatch(r"[\w-]{32}\.json\.gz", key)
    report = file_report(project_owner, project_owner.key, replay_key=key).get_json()
    assert report["replayUrl"] == f"/api/v1/replays/{key}"

    events = events_of(
        project_owner, project_owner.get(f"/api/v1/reports/{report['id']}").get_json()
    )
    assert events[0]["data"]["href"] == "https://shop.test/cart?token=[redacted]&page=2"
    assert events[1]["data"]["node"]["childNodes"][0]["textContent"] == "session [redacted]"
    assert events[2] == EVENTS[2]
    # Listed reports leave it out, as they leave out the logs.
    assert "replayUrl" not in project_owner.get("/api/v1/reports").get_json()["items"][0]
    assert file_report(project_owner, project_owner.key).get_json()["replayUrl"] is None

    # Someone outside the project reads nothing; the widget's key reads nothing.
    stranger = app.test_client()
    register(stranger, email="eve@example.com")
    assert stranger.get(report["replayUrl"]).status_code == 404
    assert app.test_client().get(report["replayUrl"]).status_code == 401


def test_what_is_not_a_replay_is_refused_and_nothing_is_kept(project_owner, app):
    refusals = [
        (b"plain JSON, not gzip", 422),
        (gzip.compress(b"not json"), 422),
        (packed({"not": "an array"}), 422),
        (packed([1, 2]), 422),
        (packed([]), 422),
        (packed(EVENTS)[:-8], 422),  # cut short
        (gzip.compress(b"[" + b" " * (11 * 1024 * 1024) + b"]"), 413),  # 11 MiB inflated
    ]
    for body, status in refusals:
        answer = send(project_owner, body)
        assert answer.status_code == status, (body[:20], answer.get_json())
        assert "detail" in answer.get_json()
    with app.app_context():
        assert storage.current_store().is_empty()
    assert send(project_owner, packed(EVENTS), key="svc_pub_wrong").status_code == 401

    # A replay is a replay and a screenshot a screenshot; another project's is neither.
    key = send(project_owner, packed(EVENTS)).get_json()["key"]
    as_screenshot = file_report(project_owner, project_owner.key, screenshot_url=key)
    assert as_screenshot.status_code == 422
    assert "screenshot_url" in as_screenshot.get_json()["errors"]
    other = create_project(project_owner, "Other")
    elsewhere = file_report(project_owner, other["apiKey"], replay_key=key)
    assert elsewhere.status_code == 422 and "replay_key" in elsewhere.get_json()["errors"]


def stored(app, key: str) -> int | None:
    with app.app_context():
        return storage.current_store().size_of(key)


def test_a_replay_goes_with_its_report_by_deletion_retention_and_erasure(project_owner, app):
    keys = [send(project_owner, packed(EVENTS)).get_json()["key"] for _ in range(3)]
    reports = [
        file_report(
            project_owner,
            project_owner.key,
            replay_key=key,
            reporter_identifier=f"r{n}@example.com",
        ).get_json()
        for n, key in enumerate(keys)
    ]
    assert all(stored(app, key) for key in keys)

    assert (
        project_owner.delete(
            f"/api/v1/reports/{reports[0]['id']}", headers=csrf(project_owner)
        ).status_code
        == 204
    )
    assert stored(app, keys[0]) is None

    base = f"/api/v1/projects/{project_owner.project['id']}"
    who = {"reporter_identifier": "r1@example.com"}
    erased = project_owner.post(
        f"{base}/reporter-data/erase", json=who, headers=csrf(project_owner)
    )
    assert erased.status_code == 200 and stored(app, keys[1]) is None

    project_owner.patch(f"/api/v1/reports/{reports[2]['id']}", json={"status": "resolved"},
               headers=csrf(project_owner))  # fmt: skip
    changed = project_owner.patch(
        base, json={"settings": {"retention": {"days": 1}}}, headers=csrf(project_owner)
    )
    assert changed.status_code == 200
    with app.app_context():
        assert retention.apply_all(now=utcnow() + timedelta(days=3))
    assert stored(app, keys[2]) is None


def test_the_scripts_are_served_from_npms_rrweb(project_owner, client):
    script = client.get("/widget-replay.js")
    assert script.status_code == 200 and script.mimetype == "text/javascript"
    body = script.get_data(as_text=True)
    assert "startSvcReplay(rrweb.rrwebRecord)" in body and "rrwebRecord" in body
    assert script.headers["Access-Control-Allow-Origin"] == "*"
    again = client.get("/widget-replay.js", headers={"If-None-Match": script.headers["ETag"]})
    assert again.status_code == 304

    player = client.get("/replay/player")
    policy = player.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "img-src data: blob:" in policy
    assert "script-src http://localhost/replay/;" in policy
    with client.application.app_context():
        version = replay.rrweb_version()
    vendor = client.get(f"/replay/rrweb-replay-{version}.js")
    assert vendor.status_code == 200 and "immutable" in vendor.headers["Cache-Control"]
    assert client.get("/replay/anything-else.js").status_code == 404


def test_without_rrweb_svc_runs_and_replay_is_off_with_the_reason(make_app, tmp_path):
    app = make_app(SVC_NODE_MODULES=str(tmp_path / "no-node-modules"))
    owner = app.test_client()
    register(owner)
    project = create_project(owner)
    turned_on = owner.patch(f"/api/v1/projects/{project['id']}",
                            json={"settings": {"widget": {"enable_replay": True}}},
                            headers=csrf(owner))  # fmt: skip
    assert turned_on.status_code == 200
    config = owner.get("/api/v1/projects/widget-config", headers={"X-API-Key": project["apiKey"]})
    assert config.get_json()["enableReplay"] is False
    features = owner.get("/api/v1/features").get_json()["replay"]
    assert features["available"] is False and "rrweb is not installed" in features["reason"]
    refused = owner.get("/widget-replay.js")
    assert refused.status_code == 404
    assert refused.get_json()["detail"].startswith("Replay is unavailable: rrweb is not installed")
    assert owner.get("/replay/player").status_code == 404
