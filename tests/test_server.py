"""`make run` as the README shows it: gunicorn with several workers, over real HTTP."""

import base64
import contextlib
import json
import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from sqlalchemy import update

from harness.client import create_project, register
from harness.service import (
    ROOT,
    delivery_log,
    descendants,
    file,
    kill_service,
    set_up_project,
    sign_up,
    wait_until,
)
from svc.extensions import db
from svc.models import Screenshot, WebhookDelivery
from svc.models.base import utcnow
from tests.helpers import png_bytes, reports_in_file_alone, upload, wait_until_settled

pytestmark = pytest.mark.server


@pytest.fixture
def served(app, service_env, services):
    """The service as `make run` starts it: gunicorn and the scheduler. `app` provides the table
    clean-up afterwards."""
    return services(service_env)


def test_readme_round_trip_over_real_http(served):
    base_url, service = served
    browser = requests.Session()
    register = browser.post(
        f"{base_url}/api/v1/auth/register",
        json={"name": "Ada", "email": "ada@example.com", "password": "correct horse battery"},
    )
    assert register.status_code == 201
    login = browser.post(
        f"{base_url}/api/v1/auth/login",
        json={"email": "ada@example.com", "password": "correct horse battery"},
        # A loopback client's word is not a proxy's: with SVC_TRUSTED_PROXIES=0 the request came
        # over plain HTTP, and its cookies are not Secure (gunicorn trusted it from loopback).
        headers={"X-Forwarded-Proto": "https", "X-Forwarded-Ssl": "on"},
    )
    assert login.status_code == 200
    assert not any("Secure" in c for c in login.raw.headers.getlist("Set-Cookie")), login.headers
    created = browser.post(
        f"{base_url}/api/v1/tokens",
        json={"name": "laptop"},
        headers={"X-CSRF-Token": browser.cookies["svc_csrf_token"]},
    )
    assert created.status_code == 201
    me = requests.get(
        f"{base_url}/api/v1/auth/me", headers={"Authorization": f"Bearer {created.json()['token']}"}
    )
    assert me.status_code == 200
    assert me.json()["email"] == "ada@example.com"
    assert requests.get(f"{base_url}/readyz").json() == {"status": "ok"}
    assert "warning: Python" not in service.output  # this interpreter is one the suite ran on
    # gunicorn's and the app's logs show the requests, never the credentials in them.
    wait_until(lambda: "/api/v1/auth/me" in service.output, message="the access log")
    assert created.json()["token"] not in service.output


def test_every_worker_files_against_the_project_as_changed_through_another(served):
    """Each worker remembers projects by API key (svc.auth.api_keys): a change made through any
    worker applies to the next report in every worker. 16 requests at once keep both busy."""
    base_url, _ = served
    browser, headers = sign_up(base_url)
    project = browser.post(f"{base_url}/api/v1/projects", json={"name": "Shop"}, headers=headers)
    url, key = f"{base_url}/api/v1/projects/{project.json()['id']}", project.json()["apiKey"]

    def file_many(api_key: str) -> list[requests.Response]:
        body = {"title": "t", "description": "d", "severity": "low", "category": "bug"}
        with ThreadPoolExecutor(8) as pool:
            return list(
                pool.map(
                    lambda _: requests.post(
                        f"{base_url}/api/v1/reports",
                        json={**body, "locale": "fr"},
                        headers={"X-API-Key": api_key},
                    ),
                    range(16),
                )
            )

    assert {answer.json()["locale"] for answer in file_many(key)} == {"fr"}
    german = {"settings": {"widget": {"locale": "de"}}}
    assert browser.patch(url, json=german, headers=headers).status_code == 200
    assert {answer.json()["locale"] for answer in file_many(key)} == {"de"}
    rotated = browser.post(f"{url}/rotate-api-key", headers=headers)
    assert {answer.status_code for answer in file_many(key)} == {401}
    assert {answer.status_code for answer in file_many(rotated.json()["apiKey"])} == {201}


@pytest.mark.any_database  # gunicorn's own doing: the database cannot change it
def test_the_access_log_keeps_no_query_string_referer_or_basic_auth_user(served):
    base_url, service = served
    response = requests.get(
        f"{base_url}/api/v1/reports?search=quarterly-layoffs&access_token=s3cr3t",
        headers={
            "Referer": "https://intranet.example/hr/plans",
            "Authorization": "Basic " + base64.b64encode(b"mallory:pw").decode(),
        },
    )
    assert response.status_code == 401
    line = wait_until(
        lambda: next((x for x in service.lines if '"GET /api/v1/reports HTTP' in x), None),
        seconds=10,
        message="the access log line",
    )
    assert " 401 " in line
    for secret in ("quarterly-layoffs", "s3cr3t", "intranet.example", "mallory"):
        assert secret not in service.output


@pytest.mark.any_database  # gunicorn's own doing: the database cannot change it
def test_the_access_log_keeps_no_token_of_a_link(served):
    """Invitation, reset and status-page links carry their token in the path (docs/api.md §3),
    and so does the status page's API."""
    base_url, service = served
    for page in ("invite", "reset-password", "status", "api/v1/status", "unsubscribe"):
        requests.get(f"{base_url}/{page}/T0kenOfALink{page.replace('/', '')}")
        wait_until(
            lambda page=page: f'"GET /{page}/[token] HTTP' in service.output,
            seconds=10,
            message="the access log line",
        )
    requests.post(f"{base_url}/api/v1/status/T0kenOfALinkReply/replies", json={"body": "x"})
    wait_until(
        lambda: '"POST /api/v1/status/[token]/replies HTTP' in service.output,
        seconds=10,
        message="the access log line",
    )
    assert "T0kenOfALink" not in service.output


@pytest.mark.any_database  # make run's own check: the database cannot change it
@pytest.mark.any_database
def test_what_the_service_creates_is_its_users_alone(tmp_path, services):
    """instance/ and the SQLite files were created world-readable."""
    instance = tmp_path / "instance"
    base_url, _ = services({"SVC_WORKERS": "1", "SVC_INSTANCE_PATH": str(instance),
                            "SVC_UPLOAD_DIR": str(tmp_path / "uploads")})  # fmt: skip
    sign_up(base_url)  # something written
    made = [instance, *instance.iterdir()]
    assert instance / "svc.sqlite3" in made, made
    for path in made:
        assert path.stat().st_mode & 0o077 == 0, (path, oct(path.stat().st_mode))


def test_python_older_than_the_tested_release_is_warned_about(app, service_env, services):
    base_url, service = services({**service_env, "PYTHON_TESTED": "3.99.0"})
    assert requests.get(f"{base_url}/healthz").ok
    assert "warning: Python " in service.output and "older than 3.99.0" in service.output


def test_stops_cleanly_on_sigterm_and_ran_no_control_socket(app, service_env, services, tmp_path):
    home, runtime = tmp_path / "home", tmp_path / "run"
    home.mkdir(), runtime.mkdir()
    _, service = services({**service_env, "HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)})
    children = descendants(service.process.pid)
    os.killpg(service.process.pid, signal.SIGTERM)
    output = service.wait(timeout=30)
    assert "Shutting down: Master" in output
    assert "scheduler: stopped" in output
    # gunicorn's control socket is one path per user: a second installation on the host would
    # replace the first's, and stopping either deletes it. svc runs none.
    assert "Control socket" not in output
    assert list(home.iterdir()) == [] and list(runtime.iterdir()) == []

    # No process is left behind: not gunicorn, its workers, nor the scheduler. On a loaded host
    # one may still be on its way out when make has exited (a CI run saw three at 0.5 s).
    def alive() -> list[str]:
        found = []
        for pid in children:
            with contextlib.suppress(OSError):
                if "zombie" not in Path(f"/proc/{pid}/status").read_text():
                    found.append(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"))
        return found

    deadline = time.monotonic() + 10
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive() == []


# How each signal reaches `make run`: a supervisor's SIGTERM and a kill -9 go to make's process
# alone; Ctrl-C (SIGINT) and a closed terminal (SIGHUP) go to its process group, as a terminal
# sends them (GNU make passes a SIGTERM on to its command, and on SIGINT or SIGHUP waits for it
# to end, the terminal having told it too).
HOW_SENT = [(signal.SIGTERM, os.kill), (signal.SIGKILL, os.kill), (signal.SIGINT, os.killpg),
            (signal.SIGHUP, os.killpg)]  # fmt: skip


@pytest.mark.any_database
@pytest.mark.parametrize("signum, send", HOW_SENT, ids=lambda value: getattr(value, "name", ""))
def test_make_run_stops_every_process_however_it_is_stopped(service_env, services, signum, send):
    """SIGTERM to make left gunicorn and the scheduler running, the port bound. Now every
    process of the service ends within 10 s, however make is stopped."""
    base_url, service = services({**service_env, "SVC_WORKERS": "1"})
    started = [service.process.pid, *descendants(service.process.pid)]
    assert len(started) >= 5  # make, the supervisor, gunicorn and its worker, the scheduler
    send(service.process.pid, signum)

    def gone() -> bool:
        for pid in started:
            with contextlib.suppress(OSError):
                if "zombie" not in Path(f"/proc/{pid}/status").read_text():
                    return False
        return True

    wait_until(gone, seconds=10, message="every process of make run to end",
               output=lambda: service.output)  # fmt: skip
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{base_url}/healthz", timeout=2)


def test_the_scheduler_sweeps_orphaned_uploads(make_app, service_env, request):
    """An upload no report took for a day is gone soon after the service starts."""
    app = make_app(SVC_UPLOAD_DIR=service_env["SVC_UPLOAD_DIR"])
    client = app.test_client()
    register(client)
    key = upload(client, create_project(client)["apiKey"], png_bytes()).get_json()["key"]
    with app.app_context():
        db.session.execute(update(Screenshot).values(created_at=utcnow() - timedelta(days=2)))
        db.session.commit()
    files = list(Path(service_env["SVC_UPLOAD_DIR"]).rglob(key))
    assert len(files) == 1
    request.getfixturevalue("served")
    deadline = time.monotonic() + 30
    while files[0].exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not files[0].exists()


def test_the_scheduler_copies_sqlite_log_into_the_database_file(tmp_path, services):
    """Reports filed are in the database file itself, not only in SQLite's write-ahead log,
    within seconds: the scheduler checkpoints once a second, where no request would for these
    few (svc.database.SQLITE_WAL_AUTOCHECKPOINT_PAGES)."""
    database = tmp_path / "svc.sqlite3"
    base_url, service = services(
        {
            "SVC_WORKERS": "2",
            "SVC_DATABASE_URL": f"sqlite:///{database}",
            "SVC_INSTANCE_PATH": str(tmp_path / "instance"),
            "SVC_UPLOAD_DIR": str(tmp_path / "uploads"),
        }
    )
    _, project = set_up_project(base_url, None)
    for n in range(20):
        file(base_url, project["apiKey"], title=f"Report {n}")
    wait_until(
        lambda: reports_in_file_alone(database, tmp_path / "copy.sqlite3") == 20,
        seconds=15,
        message="the reports in the database file",
    )
    # A job that ran and had nothing to say is not logged: four jobs a second would bury the
    # request log.
    assert "Running job" not in service.output and "executed successfully" not in service.output
    assert "sweep: removed 0" not in service.output


# --- webhooks against the real processes ---------------------------------------------------------


def test_pending_retry_survives_sigkill_of_everything(app, webhook_env, services, receiver):
    base_url, service = services(webhook_env)
    browser, project = set_up_project(base_url, receiver.url)
    receiver.script(500)
    file(base_url, project["apiKey"])
    receiver.wait_for(1)
    wait_until(
        lambda: delivery_log(browser, base_url, project)[0]["lastStatusCode"] == 500,
        message="the failed first attempt to be recorded",
    )
    kill_service(service)
    time.sleep(3.5)  # the retry falls due while nothing runs

    base_url, _ = services(webhook_env)
    requests_seen = receiver.wait_for(2, timeout=30)
    wait_until_settled(app, WebhookDelivery, 1)
    assert len(receiver.received) == 2
    assert len({r.headers["X-Svc-Delivery"] for r in requests_seen}) == 1
    logged = delivery_log(browser, base_url, project)[0]
    assert (logged["status"], logged["attempts"], logged["lastStatusCode"]) == ("succeeded", 2, 200)


def test_four_workers_deliver_each_event_exactly_once(app, webhook_env, services, receiver):
    base_url, _ = services({**webhook_env, "SVC_WORKERS": "4"})
    _, project = set_up_project(base_url, receiver.url)
    for index in range(50):
        file(base_url, project["apiKey"], title=f"report {index}")
    received = receiver.wait_for(50, timeout=60)
    wait_until_settled(app, WebhookDelivery, 50)
    assert len(receiver.received) == 50
    assert len({r.headers["X-Svc-Delivery"] for r in received}) == 50
    assert sorted(r.json()["data"]["title"] for r in received) == sorted(
        f"report {index}" for index in range(50)
    )


def test_make_run_installs_what_the_service_needs_and_make_test_the_rest(tmp_path):
    """`make run` is the production entry point: no test tools in its .venv (393 MB with them)."""

    def planned(target: str) -> str:
        made = subprocess.run(
            ["make", "--dry-run", "--no-print-directory", target, f"VENV={tmp_path / 'venv'}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return made.stdout

    run, test = planned("run"), planned("test")
    assert "pip install --quiet -e .\n" in run and "[dev]" not in run
    assert "pip install --quiet -e .\n" in test and "pip install --quiet -e '.[dev]'" in test


def _raw(base_url: str, request: bytes) -> tuple[str, dict, bytes]:
    """Send bytes as they are; the status line, headers and body of the answer."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin1").split("\r\n")
    headers = {name.lower(): value for name, _, value in (line.partition(": ") for line in lines)}
    return status, headers, body


@pytest.mark.any_database  # gunicorn's own doing: the database cannot change it
def test_what_gunicorn_refuses_is_json_too(served):
    """Finding 12: a URL past 4,094 bytes got gunicorn's own HTML 414."""
    base_url, _ = served
    long_line = b"GET /api/v1/reports/export?search=" + b"a" * 5000 + b" HTTP/1.1\r\n"
    big_header = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n"
    for request, code in (
        (long_line + b"Host: x\r\n\r\n", "414"),
        (big_header, "431"),
        (b"NOT A REQUEST LINE\r\n\r\n", "400"),
    ):
        status, headers, body = _raw(base_url, request)
        assert status.split(" ")[1] == code, status
        assert headers["content-type"] == "application/json"
        assert json.loads(body)["detail"], body
    assert requests.get(f"{base_url}/healthz").ok  # the worker serves on
