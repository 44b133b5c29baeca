"""`make run` as the README shows it: gunicorn with several workers, over real HTTP."""

import os
import signal
import socket
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from sqlalchemy import update

from svc.extensions import db
from svc.models import Screenshot
from svc.models.base import utcnow
from tests.helpers import create_project, png_bytes, register, upload

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_serving(base_url: str, process: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"make run exited early:\n{process.stdout.read()}")
        try:
            if requests.get(f"{base_url}/healthz", timeout=1).ok:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.2)
    raise AssertionError("make run did not answer /healthz in time")


@pytest.fixture
def service_env(database_url, tmp_path) -> dict:
    return {
        "SVC_WORKERS": "2",
        "SVC_DATABASE_URL": database_url,
        "SVC_INSTANCE_PATH": str(tmp_path / "instance"),
        "SVC_UPLOAD_DIR": str(tmp_path / "uploads"),
    }


@pytest.fixture
def served(app, service_env):
    """The service as `make run` starts it: gunicorn and the scheduler. `app` provides the table
    clean-up afterwards."""
    port = free_port()
    env = {**os.environ, **service_env, "SVC_BIND": f"127.0.0.1:{port}"}
    process = subprocess.Popen(
        ["make", "--no-print-directory", "run"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base_url, process)
        yield base_url, process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_readme_round_trip_over_real_http(served):
    base_url, _ = served
    browser = requests.Session()
    register = browser.post(
        f"{base_url}/api/v1/auth/register",
        json={"name": "Ada", "email": "ada@example.com", "password": "correct horse battery"},
    )
    assert register.status_code == 201
    login = browser.post(
        f"{base_url}/api/v1/auth/login",
        json={"email": "ada@example.com", "password": "correct horse battery"},
    )
    assert login.status_code == 200
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


def test_stops_cleanly_on_sigterm(served):
    _, process = served
    os.killpg(process.pid, signal.SIGTERM)
    output, _ = process.communicate(timeout=30)
    assert "Shutting down: Master" in output
    assert "scheduler: stopped" in output
    # No worker is left behind in the process group.
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)


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
