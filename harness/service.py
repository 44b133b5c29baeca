"""The service as `make run` starts it, in a subprocess of the tests or a benchmark: start it,
watch its output, kill every process of it; and the few HTTP steps taken against it."""

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import requests

from harness.client import PASSWORD
from harness.ports import AddressInUse, said_address_in_use, start_on_a_port

ROOT = Path(__file__).resolve().parent.parent


class Service:
    """A running `make run`: its process and everything it printed so far (read by a thread,
    so the pipe never fills)."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait(self, timeout: float) -> str:
        """Wait for the process to end; everything it printed."""
        self.process.wait(timeout=timeout)
        self._reader.join(timeout=5)
        return self.output


def answers_health(base_url: str) -> bool:
    """Whether /healthz answers OK now. Not listening yet, or a worker still starting on a busy
    machine (slower than the second we give it), count as not yet."""
    try:
        return requests.get(f"{base_url}/healthz", timeout=1).ok
    except (requests.ConnectionError, requests.Timeout):
        return False


def wait_until_serving(base_url: str, service: Service, seconds: float = 60) -> None:
    """Until gunicorn answers and the scheduler has installed its signal handlers. AddressInUse
    as soon as gunicorn says another process holds its port (it would try for 5 s, then exit)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if said_address_in_use(service.output):
            raise AddressInUse(service.output)
        if service.process.poll() is not None:
            raise AssertionError(f"make run exited early:\n{service.wait(5)}")
        if answers_health(base_url) and "scheduler: started" in service.output:
            return
        time.sleep(0.2)
    raise AssertionError(f"make run did not come up in time:\n{service.output}")


def start_service(env: dict) -> tuple[str, Service]:
    """`make run` with `env` on a free port, in a process group of its own; waits until it
    answers. The port is bound by gunicorn itself, as SVC_BIND says (links the scheduler builds
    name it): where another process took it first, it starts again on another."""
    return start_on_a_port(lambda port: _start_service_on(env, port))


def _start_service_on(env: dict, port: int) -> tuple[str, Service]:
    process = subprocess.Popen(
        ["make", "--no-print-directory", "run"],
        cwd=ROOT,
        env={**os.environ, **env, "SVC_BIND": f"127.0.0.1:{port}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    base_url = f"http://127.0.0.1:{port}"
    service = Service(process)
    try:
        wait_until_serving(base_url, service)
    except BaseException:
        kill_service(service)
        raise
    return base_url, service


def descendants(pid: int) -> list[int]:
    """Every process below `pid`. svc.supervise starts each Procfile entry in a process group
    of its own, so killing make's group alone would leave gunicorn and the scheduler running."""
    children = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True
    ).stdout.split()
    found = []
    for child in map(int, children):
        found += [child, *descendants(child)]
    return found


def kill_service(service: Service) -> None:
    """SIGKILL to every process of the service at once: make, svc.supervise, gunicorn and its
    workers, the scheduler."""
    process = service.process
    if process.poll() is None:
        for pid in [process.pid, *descendants(process.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait()


def sign_up(base_url: str, name: str = "Ada", email: str = "ada@example.com"):
    """A newly registered user's cookie session, and the CSRF header its writes need."""
    browser = requests.Session()
    response = browser.post(
        f"{base_url}/api/v1/auth/register",
        json={"name": name, "email": email, "password": PASSWORD},
    )
    assert response.status_code == 201, response.text
    return browser, {"X-CSRF-Token": browser.cookies["svc_csrf_token"]}


def set_up_project(base_url: str, webhook_url: str) -> tuple[requests.Session, dict]:
    """A newly registered user's session and their project Web Shop."""
    browser, _ = sign_up(base_url)
    return browser, add_project(browser, base_url, "Web Shop", webhook_url)


def add_project(browser, base_url: str, name: str, webhook_url: str | None) -> dict:
    """A project of the signed-in `browser`, its webhook set to `webhook_url`."""
    csrf = {"X-CSRF-Token": browser.cookies["svc_csrf_token"]}
    project = browser.post(f"{base_url}/api/v1/projects", json={"name": name}, headers=csrf)
    assert project.status_code == 201, project.text
    project = project.json()
    answer = browser.patch(
        f"{base_url}/api/v1/projects/{project['id']}",
        headers=csrf,
        json={"settings": {"webhook_url": webhook_url}},
    )
    assert answer.status_code == 200, answer.text
    return project


def file(base_url: str, api_key: str, title: str = "Checkout fails") -> dict:
    response = requests.post(
        f"{base_url}/api/v1/reports",
        headers={"X-API-Key": api_key},
        json={"title": title, "description": "d", "severity": "high", "category": "bug"},
    )
    assert response.status_code == 201
    return response.json()


def delivery_log(browser, base_url, project) -> list[dict]:
    return browser.get(f"{base_url}/api/v1/projects/{project['id']}/webhook-deliveries").json()[
        "items"
    ]


def wait_until(condition, seconds: float = 30, message: str = "condition", output=None):
    """`condition()`'s first true value; on time-out, the failure says `message` and, where
    the thing waited for is a server, what `output()` gives of its own output."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    said = f":\n{output()}" if output else ""
    raise AssertionError(f"timed out waiting for {message}{said}")
