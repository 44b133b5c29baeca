"""Reproductions (docs/repro-kit.md, "The runner"; contract v6 §25): a report's steps run by
Playwright's test runner in Debian's Chromium against a staging site in the tests whose checkout
is broken on purpose, and what the report gets of it.

The runner's tests need Chromium and Node's @playwright/test (make test installs both).
"""

import io
import json
import subprocess
import sys
import zipfile

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from harness.client import csrf, register
from svc.extensions import db
from svc.models import Reproduction, WebhookDelivery
from svc.services.reproductions import browser as repro_browser
from svc.services.reproductions import runs
from tests.helpers import fan_out, team_with_project
from tests.host_site.checkout import CheckoutSite

pytestmark = pytest.mark.skipif(
    repro_browser.browser_path("auto") is None, reason="no Chromium on this machine"
)
T0 = 1_767_225_600_000
PAY_ERROR = "Uncaught TypeError: Cannot read properties of undefined (reading 'id')"


def set_repro(owner, **repro):
    return owner.patch(
        f"/api/v1/projects/{owner.project['id']}",
        json={"settings": {"repro": repro}},
        headers=csrf(owner),
    )


def file_checkout_report(owner, page_url: str, **more) -> dict:
    """A report as the widget files it after a failed Pay on `page_url`."""
    body = {
        "title": "Pay does nothing",
        "description": "I pressed Pay and nothing happened",
        "severity": "high",
        "category": "bug",
        "metadata": {"url": page_url},
        "user_actions": [
            {"type": "click", "target": "button#pay", "timestamp": T0 + 1000,
             "locator": {"role": "button", "name": "Pay now"}},
        ],
        "console_logs": [
            {"level": "error", "message": PAY_ERROR, "timestamp": T0 + 1100,
             "stack": f"TypeError: x\n    at {page_url}:30:50"},
        ],
        "network_logs": [
            {"method": "POST", "url": page_url.rsplit("/", 1)[0] + "/api/pay", "status": 500,
             "timestamp": T0 + 1050},
        ],
        **more,
    }  # fmt: skip
    response = owner.post("/api/v1/reports", json=body, headers={"X-API-Key": owner.key})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def run_queued(app) -> list:
    """What the scheduler's runner does: every queued run, one at a time; their ids."""
    done = []
    with app.app_context():
        while (run_id := runs.run_next()) is not None:
            done.append(run_id)
    return done


def reproduce(owner, reference: str) -> dict:
    response = owner.post(f"/api/v1/reports/{reference}/reproductions", headers=csrf(owner))
    assert response.status_code == 202, response.get_json()
    assert response.get_json()["status"] == "queued"
    return response.get_json()


def test_a_broken_checkout_is_reproduced_and_its_fix_is_not(app):
    owner = team_with_project(app)
    with CheckoutSite() as site:
        report = file_checkout_report(owner, "https://shop.example/checkout")
        # No staging origin: nothing is run.
        refused = owner.post("/api/v1/reports/WS-1/reproductions", headers=csrf(owner))
        assert refused.status_code == 409
        assert "staging origin" in refused.get_json()["detail"]
        assert set_repro(owner, origin=site.url, timeout_seconds=30).status_code == 200

        first = reproduce(owner, "WS-1")
        assert run_queued(app)
        [run] = owner.get("/api/v1/reports/WS-1/reproductions").get_json()["items"]
        assert site.hits.get("/checkout") == 1, json.dumps(run)
        assert run["id"] == first["id"] and run["status"] == "done", run
        assert run["verdict"] == "reproduced", run
        assert run["evidence"] == [
            "console: typeerror: cannot read property id of undefined",
            "request: POST /api/pay -> 500",
        ]
        assert run["failedStep"] is None and run["stepsRun"] == 2
        assert run["requestedBy"]["name"] == "Ada Lovelace" and run["auto"] is False
        assert site.hits.get("/api/pay") == 1

        # The trace opens: a zip of Playwright's, whose actions include the click on Pay.
        trace = owner.get(run["traceUrl"])
        assert trace.status_code == 200
        with zipfile.ZipFile(io.BytesIO(trace.get_data())) as archive:
            names = archive.namelist()
            actions = "".join(
                archive.read(name).decode(errors="replace")
                for name in names
                if name.endswith(".trace")
            )
        assert "test.trace" in names and "Pay now" in actions, names
        shot = owner.get(run["screenshotUrl"])
        assert shot.status_code == 200 and shot.get_data()[:8] == b"\x89PNG\r\n\x1a\n"

        # The fix: run again, not reproduced.
        site.broken = False
        reproduce(owner, "WS-1")
        run_queued(app)
        latest, earlier = owner.get("/api/v1/reports/WS-1/reproductions").get_json()["items"]
        assert (latest["verdict"], earlier["verdict"]) == ("not_reproduced", "reproduced")
        assert latest["evidence"] == [] and latest["stepsRun"] == 2
    full = owner.get("/api/v1/reports/WS-1").get_json()
    assert full["lastReproduction"]["id"] == latest["id"]
    listed = owner.get("/api/v1/reports?reproduced=false").get_json()["items"]
    assert [item["trackingId"] for item in listed] == ["WS-1"]
    assert owner.get("/api/v1/reports?reproduced=true").get_json()["items"] == []
    kinds = owner.get("/api/v1/reports/WS-1/activity").get_json()
    said = [entry["changes"]["verdict"] for entry in kinds if entry["kind"] == "reproduced"]
    assert said == [{"from": None, "to": "reproduced"}, {"from": "reproduced",
                                                        "to": "not_reproduced"}]  # fmt: skip
    assert report["lastReproduction"] is None
