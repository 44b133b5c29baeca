"""The `svc` command line (docs/cli.md), run as a subprocess against `make run` with a real
personal access token: every command, its --json parsed, each exit code."""

import csv
import io
import json
import os
import stat
import subprocess
import sys
import threading
import time
import uuid
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from sqlalchemy import update

from harness.service import ROOT, kill_service, set_up_project, start_service
from svc.extensions import db
from svc.models import PersonalAccessToken
from svc.models.base import utcnow
from tests.helpers import REPORT

# A client over HTTP: the database cannot change its answer, SQLite alone (tests/conftest.py).
pytestmark = [pytest.mark.server, pytest.mark.any_database]
SVC = str(Path(sys.executable).with_name("svc"))
CAPTURED = {
    "console_logs": [
        {"level": "error", "message": "TypeError", "timestamp": 1},
        {"level": "info", "message": "booted", "timestamp": 2},
    ],
    "network_logs": [
        {"method": "GET", "url": "https://shop.example/a", "status": 500, "duration": 3},
        {"method": "GET", "url": "https://shop.example/b", "status": 200, "duration": 3},
    ],
    "user_actions": [{"type": "click", "target": "button#pay", "timestamp": 1}],
}


@pytest.fixture(scope="module")
def service(database_url, tmp_path_factory, certificate_authority):
    """One `make run` for the whole file: each test begins on emptied tables (`app`) and sets
    up its own account and project, so no test sees another's. It may call a local tracker."""
    folder = tmp_path_factory.mktemp("cli-service")
    base_url, running = start_service(
        {
            "SVC_WORKERS": "2",
            "SVC_DATABASE_URL": database_url,
            "SVC_INSTANCE_PATH": str(folder / "instance"),
            "SVC_UPLOAD_DIR": str(folder / "uploads"),
            "SVC_RATE_LIMIT_AUTH": "off",  # every test signs up from this address
            "SVC_WEBHOOK_ALLOW_PRIVATE": "true",
            "SVC_WEBHOOK_CA_BUNDLE": certificate_authority[1],
            # Three reports are more than one answer holds: `reports export` takes a job's way;
            # and more than a search counts.
            "SVC_EXPORT_SYNC_LIMIT": "2",
            "SVC_SEARCH_COUNT_LIMIT": "2",
        }
    )
    yield base_url
    kill_service(running)


@pytest.fixture
def served(app, service, tmp_path):
    """Web Shop with three reports on the running svc; Ada's browser session and a PAT."""
    browser, project = set_up_project(service, webhook_url=None)
    csrf = {"X-CSRF-Token": browser.cookies["svc_csrf_token"]}
    for title, severity in (("Checkout fails", "critical"), ("Typo", "low"), ("Slow", "high")):
        filed = browser.post(
            f"{service}/api/v1/reports",
            json={**REPORT, **CAPTURED, "title": title, "severity": severity},
            headers={"X-API-Key": project["apiKey"]},
        )
        assert filed.status_code == 201
    token = browser.post(f"{service}/api/v1/tokens", json={"name": "cli"}, headers=csrf).json()
    return {
        "url": service,
        "token": token,
        "project": project,
        "browser": browser,
        "csrf": csrf,
        "home": tmp_path,
    }


def svc(served, *arguments, stdin=None, **env):
    """Run `svc` with its own configuration directory; (exit code, stdout, stderr)."""
    process = subprocess.run(
        [SVC, *arguments],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "XDG_CONFIG_HOME": str(served["home"]), **env},
    )
    assert "Traceback" not in process.stderr, process.stderr
    return process.returncode, process.stdout, process.stderr


def signed_in(served):
    code, out, _ = svc(served, "login", "--url", served["url"], "--token", served["token"]["token"])
    assert code == 0, out


def test_an_unreachable_service_is_said_in_a_few_words(tmp_path):
    """urllib3's chain of wrapped errors was the CLI's one line."""
    process = subprocess.run(
        [SVC, "login", "--url", "http://127.0.0.1:9", "--token", "svc_pat_x"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)},
    )  # fmt: skip
    assert process.returncode != 0
    [line] = process.stderr.strip().splitlines()
    assert "connection refused (is svc running there?)" in line, line
    assert "Caused by" not in line and "HTTPConnectionPool" not in line


class Unsteady(BaseHTTPRequestHandler):
    """A service that cannot answer just now: a 503 (Retry-After: 1) for its first `/auth/me`
    and for every `/projects` and change; `seen` keeps (method, path, when)."""

    seen: list = []

    def answer(self, status: int, body: dict) -> None:
        Unsteady.seen.append((self.command, self.path, time.monotonic()))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 503:
            self.send_header("Retry-After", "1")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/api/v1/auth/me" and len(Unsteady.seen) > 0:
            self.answer(200, {"name": "Ada", "email": "ada@example.com"})
        else:
            self.answer(503, {"detail": "Service unavailable: try again shortly"})

    def do_PATCH(self):
        self.answer(503, {"detail": "Service unavailable: try again shortly"})

    def log_message(self, *_):
        pass


def test_a_read_is_asked_again_after_a_503_and_a_change_is_not(tmp_path):
    """docs/cli.md, "Exit codes": a GET the service answered 503 is asked again after its
    Retry-After, three times at most; a PATCH is sent once."""
    Unsteady.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Unsteady)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    home = {"home": tmp_path}
    try:
        code, out, err = svc(home, "login", "--url", url, "--token", "svc_pat_x")
        assert code == 0 and "Signed in" in out, (code, out, err)
        [(_, _, first), (_, _, second)] = Unsteady.seen
        assert second - first >= 1.0  # its Retry-After
        Unsteady.seen = [("login", "", 0)]
        code, _, err = svc(home, "projects", "list")
        assert code == 1 and "Service unavailable: try again shortly" in err, err
        assert [path for _, path, _ in Unsteady.seen[1:]] == ["/api/v1/projects"] * 4
        code, _, err = svc(home, "reports", "update", "WS-1", "--status", "resolved")
        assert code == 1 and "Service unavailable" in err, err
        assert [method for method, _, _ in Unsteady.seen[5:]] == ["PATCH"]
    finally:
        server.shutdown()
        server.server_close()


def test_login_whoami_and_a_refused_token(served):
    code, _, err = svc(served, "whoami")
    assert code == 3 and "svc login" in err
    code, _, err = svc(served, "login", "--url", served["url"], "--token", "svc_pat_nonsense")
    assert code == 3 and "Invalid personal access token" in err
    # The token asked for, not echoed, when not given.
    code, out, err = svc(
        served, "login", "--url", served["url"], stdin=served["token"]["token"] + "\n"
    )
    assert code == 0 and "Signed in" in out and "Ada" in out
    assert "Warning" not in err  # getpass's GetPassWarning, when the token comes from a pipe
    saved = served["home"] / "svc" / "credentials.json"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert json.loads(saved.read_text())["token"] == served["token"]["token"]
    code, out, _ = svc(served, "whoami", "--json")
    assert code == 0 and json.loads(out)["email"] == "ada@example.com"
    # SVC_URL / SVC_TOKEN win over what was saved.
    code, _, err = svc(served, "whoami", SVC_TOKEN="svc_pat_nonsense")
    assert code == 3 and "Invalid" in err
    code, out, _ = svc(served, "logout")
    assert code == 0 and not saved.exists()
    assert svc(served, "whoami")[0] == 3


def test_projects_and_tokens(served, app):
    signed_in(served)
    code, out, _ = svc(served, "projects", "list", "--json")
    assert code == 0 and [p["name"] for p in json.loads(out)] == ["Web Shop"]
    code, out, _ = svc(served, "projects", "list")
    assert code == 0 and out.splitlines()[0].split() == ["ID", "PREFIX", "NAME", "ROLE"]
    code, out, _ = svc(served, "projects", "show", "ws", "--json")
    assert code == 0 and json.loads(out)["id"] == served["project"]["id"]
    code, _, err = svc(served, "projects", "show", "Nope")
    assert code == 4 and "Nope" in err

    code, out, _ = svc(served, "tokens", "list", "--json")
    assert [t["id"] for t in json.loads(out)] == [served["token"]["id"]]
    assert "value" not in out and served["token"]["token"] not in out
    # An expired token is marked so in the table.
    old = served["browser"].post(f"{served['url']}/api/v1/tokens", json={"name": "old"},
                                 headers=served["csrf"]).json()  # fmt: skip
    with app.app_context():
        db.session.execute(
            update(PersonalAccessToken)
            .where(PersonalAccessToken.id == uuid.UUID(old["id"]))
            .values(expires_at=utcnow() - timedelta(days=1))
        )
        db.session.commit()
    code, out, _ = svc(served, "tokens", "list")
    [old_line] = [line for line in out.splitlines() if line.startswith(old["id"])]
    [cli_line] = [line for line in out.splitlines() if line.startswith(served["token"]["id"])]
    assert old_line.endswith("(expired)") and "(expired)" not in cli_line
    code, _, err = svc(served, "tokens", "revoke", "00000000-0000-4000-8000-000000000000")
    assert code == 4 and err
    code, out, _ = svc(served, "tokens", "revoke", served["token"]["id"])
    assert code == 0
    code, _, err = svc(served, "whoami")
    assert code == 3 and "revoked" in err


def test_reports_list_show_update(served):
    signed_in(served)
    code, out, _ = svc(served, "reports", "list", "--json")
    assert code == 0 and [r["trackingId"] for r in json.loads(out)] == ["WS-3", "WS-2", "WS-1"]
    code, out, _ = svc(served, "reports", "list", "--severity", "critical,high", "--json")
    assert [r["title"] for r in json.loads(out)] == ["Slow", "Checkout fails"]
    code, out, _ = svc(served, "reports", "list", "--limit", "2")
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["ID", "STATUS"] and "2 of 3" in lines[-1]
    code, out, _ = svc(served, "reports", "list", "--all", "--sort", "severity", "--json")
    assert [r["severity"] for r in json.loads(out)] == ["low", "high", "critical"]

    code, out, _ = svc(served, "reports", "show", "ws-1")
    assert code == 0
    assert "Console: 2 entries, 1 error\n" in out and "Network: 2 requests, 1 failed" in out
    code, _, err = svc(served, "reports", "show", "WS-99")
    assert code == 4 and "Report not found" in err

    code, out, _ = svc(
        served,
        "reports",
        "update",
        "WS-1",
        "--status",
        "in_progress",
        "--assignee",
        "ada@example.com",
        "--json",
    )
    assert code == 0
    updated = json.loads(out)
    assert updated["status"] == "in_progress" and updated["assigneeId"]
    code, out, _ = svc(served, "reports", "list", "--assignee", "me", "--json")
    assert [r["trackingId"] for r in json.loads(out)] == ["WS-1"]
    # A usage error is 2; an API refusal prints its detail and is 1.
    assert svc(served, "reports", "update", "WS-1")[0] == 2
    assert svc(served, "reports", "update", "WS-1", "--status", "done")[0] == 2
    code, _, err = svc(served, "reports", "update", "WS-1", "--title", "")
    assert code == 1 and "title" in err


def test_a_search_past_its_count_limit_is_said_and_read_past(served):
    """The CLI reads 100 reports a page: past SVC_SEARCH_COUNT_LIMIT (2 here) and that page,
    the list's total is a lower bound (docs/api.md §8.2)."""
    for number in range(101):
        filed = served["browser"].post(
            f"{served['url']}/api/v1/reports",
            json={**REPORT, "title": f"Zebra {number}"},
            headers={"X-API-Key": served["project"]["apiKey"]},
        )
        assert filed.status_code == 201
    signed_in(served)
    code, out, _ = svc(served, "reports", "list", "--search", "zebra", "--limit", "1")
    assert code == 0 and out.splitlines()[-1].startswith("1 of more than 100 "), out
    code, out, err = svc(served, "reports", "list", "--search", "zebra", "--all", "--json")
    assert code == 0 and len(json.loads(out)) == 101, (code, out, err)


def test_reports_export(served, tmp_path):
    """One answer for a few reports; a job (docs/api.md §8.3.1) for more than the service sends
    in one, followed to its file with its progress on stderr."""
    signed_in(served)
    code, out, err = svc(served, "reports", "export", "--format", "ndjson")
    assert code != 0 and "give --project to export a project's reports as a job" in err, err
    code, out, err = svc(served, "reports", "export", "--format", "ndjson", "--project",
                         served["project"]["id"])  # fmt: skip
    assert code == 0, err
    assert "Exported 3 reports." in err
    assert [json.loads(line)["trackingId"] for line in out.splitlines()] == ["WS-3", "WS-2", "WS-1"]
    target = tmp_path / "low.csv"
    code, _, _ = svc(served, "reports", "export", "--severity", "low", "-o", str(target))
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert [row["title"] for row in rows] == ["Typo"]


def test_reports_har_and_repro(served, tmp_path):
    signed_in(served)
    code, out, _ = svc(served, "reports", "har", "WS-1")
    assert code == 0
    har = json.loads(out)
    assert [entry["request"]["url"] for entry in har["log"]["entries"]] == [
        "https://shop.example/a", "https://shop.example/b",
    ]  # fmt: skip
    target = tmp_path / "ws1.spec.ts"
    code, _, _ = svc(served, "reports", "repro", "WS-1", "-o", str(target))
    assert code == 0
    assert 'await page.locator("button#pay").click();' in target.read_text()
    code, _, err = svc(served, "reports", "har", "WS-99")
    assert code != 0 and "Report not found" in err


def test_reports_watch(served):
    signed_in(served)
    watcher = subprocess.Popen(
        [SVC, "reports", "watch", "--project", "WS", "--interval", "0.3", "--count", "2", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "XDG_CONFIG_HOME": str(served["home"])},
    )
    # Its first look (what exists already is not new) is done when it says it watches.
    assert watcher.stderr.readline().startswith("Watching for new reports")
    for title in ("First new", "Second new"):
        served["browser"].post(
            f"{served['url']}/api/v1/reports",
            json={**REPORT, "title": title},
            headers={"X-API-Key": served["project"]["apiKey"]},
        )
    out, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 0, err
    assert [json.loads(line)["title"] for line in out.splitlines()] == ["First new", "Second new"]


def test_every_command_has_help(tmp_path):
    served = {"home": tmp_path}  # no service: help is written by the command line alone
    for command in (
        [],
        ["login"],
        ["reports"],
        ["reports", "list"],
        ["reports", "export"],
        ["reports", "har"],
        ["reports", "repro"],
        ["reports", "watch"],
        ["reports", "issue"],
        ["projects", "show"],
        ["tokens", "revoke"],
    ):
        code, out, _ = svc(served, *command, "--help")
        assert code == 0 and "Usage: svc" in out
    assert svc(served, "no-such-command")[0] == 2
    code, out, _ = svc(served, "--version")
    assert code == 0 and out.startswith("svc ") and out.strip() != "svc"


# An OSC 52 clipboard write, a window title, a line overwrite, and C1's CSI (8-bit ESC [).
HOSTILE = "Pay\x1b]52;c;ZXZpbA==\x07 fails\x1b]0;pwned\x07\r\x1b[2K\x9b2J now"


def under_a_terminal(served, *arguments) -> bytes:
    """What `svc` writes to a pseudo-terminal, as a person's shell would show it."""
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [SVC, *arguments],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "XDG_CONFIG_HOME": str(served["home"])},
        close_fds=True,
    )
    os.close(follower)
    written = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command is done
            break
        if not chunk:
            break
        written += chunk
    os.close(leader)
    assert process.wait(timeout=30) == 0, written
    return written


def test_report_text_reaches_a_terminal_without_its_control_characters(served):
    signed_in(served)
    captured = {
        "console_logs": [{"level": "error", "message": f"{HOSTILE} \u202e", "timestamp": 1}],
        "network_logs": [{"method": "GET", "url": f"https://shop.example/{HOSTILE}",
                          "status": 500, "requestBody": HOSTILE}],
    }  # fmt: skip
    filed = (
        served["browser"]
        .post(
            f"{served['url']}/api/v1/reports",
            json={**REPORT, **captured, "title": HOSTILE, "description": f"Steps\n{HOSTILE}"},
            headers={"X-API-Key": served["project"]["apiKey"]},
        )
        .json()
    )
    code, _, err = svc(served, "reports", "update", filed["trackingId"], "--assignee", "me")
    assert code == 0, err
    for command in (
        ("reports", "list"),
        ("reports", "show", filed["trackingId"]),
        ("reports", "show", filed["trackingId"], "--json"),
        ("reports", "list", "--json"),
        ("reports", "repro", filed["trackingId"]),
        ("reports", "har", filed["trackingId"]),
    ):
        written = under_a_terminal(served, *command)
        assert b"\x1b" not in written and b"\xc2\x9b" not in written, command
        assert "\u202e".encode() not in written, command
        assert b"Pay" in written, command
    shown = under_a_terminal(served, "reports", "show", filed["trackingId"]).decode()
    # What a person reads, not the API's keys.
    assert "Assignee  Ada <ada@example.com>" in shown
    assert "Reporter  none" in shown  # filed without one
    assert "assigneeId" not in shown and "reporterIdentifier" not in shown
    # --json stays the API's answer: the characters are there, escaped.
    _, out, _ = svc(served, "reports", "show", filed["trackingId"], "--json")
    assert json.loads(out)["title"] == HOSTILE


def this_machines_address() -> str:
    """An address of this machine that is not loopback (plain http:// to it leaves the host)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: it only picks the route
        return probe.getsockname()[0]


def test_a_token_goes_over_plain_http_to_this_machine_only(tmp_path):
    """Finding 10: plain http:// carries the token in clear to anyone on the way."""
    import http.server
    import threading

    heard = []

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            heard.append(self.headers.get("Authorization"))
            body = json.dumps({"name": "Ada", "email": "ada@example.com"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        away = f"http://{this_machines_address()}:{server.server_port}"
        served = {"home": tmp_path}
        code, _, err = svc(served, "login", "--url", away, "--token", "svc_pat_secret")
        assert code == 2 and "plain http://" in err and heard == []
        insecure = svc(served, "--insecure", "login", "--url", away, "--token", "svc_pat_secret")
        assert insecure[0] == 0 and heard == ["Bearer svc_pat_secret"]
        local = f"http://127.0.0.1:{server.server_port}"
        assert svc(served, "login", "--url", local, "--token", "svc_pat_local")[0] == 0
    finally:
        server.shutdown()


def test_reports_issue_creates_the_issue_in_the_tracker(
    app, service, certificate_authority, tmp_path
):
    from harness.trackers import TOKEN, FakeTrackers

    trackers = FakeTrackers(certificate_authority[0]).start()
    try:
        base_url = service
        browser, project = set_up_project(base_url, webhook_url=None)
        csrf = {"X-CSRF-Token": browser.cookies["svc_csrf_token"]}
        connected = browser.post(
            f"{base_url}/api/v1/projects/{project['id']}/integrations",
            json={
                "kind": "gitlab",
                "name": "Shop repository",
                "config": {"project": "acme/shop", "api_url": f"{trackers.base}/api/v4"},
                "token": TOKEN,
            },
            headers=csrf,
        )
        assert connected.status_code == 201, connected.text
        browser.post(
            f"{base_url}/api/v1/reports",
            json={**REPORT, **CAPTURED, "title": "Checkout fails"},
            headers={"X-API-Key": project["apiKey"]},
        )
        token = browser.post(f"{base_url}/api/v1/tokens", json={"name": "cli"}, headers=csrf)
        served = {"url": base_url, "token": token.json(), "home": tmp_path}
        signed_in(served)
        code, out, err = svc(served, "reports", "issue", "WS-1", "--integration", "nothing")
        assert code == 4 and "Shop repository" in err
        code, out, _ = svc(served, "reports", "issue", "ws-1", "--integration", "shop repository")
        assert code == 0, out
        assert out.startswith("Created #") and "/acme/shop/-/issues/" in out
        assert trackers.requests[-1].json()["title"] == "[WS-1] Checkout fails"
        code, out, err = svc(served, "reports", "issue", "WS-1", "--integration", "Shop repository")
        assert code == 1 and "already has an issue" in err
        code, out, _ = svc(served, "reports", "show", "WS-1")
        assert "Issue: #" in out and "(gitlab, open)" in out
    finally:
        trackers.stop()
