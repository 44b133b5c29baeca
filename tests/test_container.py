"""svc's image (Dockerfile, contract v5 §23; docs/deployment.md "With Docker or Podman"), built
with podman on a Debian base made here (harness/container.py) and run: it answers, keeps its
data in its one volume, runs as a user of its own on a read-only root, stops at once, and runs
on PostgreSQL as compose.yaml runs it.

Not part of `make test`: `make test-container` runs it (and .ci/run after the suite), as root,
with podman, mmdebstrap and runc from Debian's packages.
"""

import os
import time

import pytest
import requests

from harness.client import PASSWORD, png_bytes
from harness.container import base_image, build_image, podman
from harness.databases import postgresql_schema
from harness.service import free_port, sign_up, wait_until

pytestmark = pytest.mark.container

MAX_IMAGE_BYTES = 300 * 1000 * 1000


@pytest.fixture(scope="module")
def image() -> str:
    return build_image(base_image())


@pytest.fixture
def containers():
    """Run containers with `run(name, *arguments)`; every one is removed at the end."""
    names = []

    def run(name: str, *arguments: str) -> str:
        names.append(name)
        podman("rm", "--force", "--ignore", name)
        return podman("run", "--detach", "--name", name, *arguments)

    yield run
    for name in names:
        podman("rm", "--force", "--ignore", name)


@pytest.fixture
def volume():
    name = f"svc-test-data-{os.getpid()}"
    podman("volume", "rm", "--force", name)
    podman("volume", "create", name)
    yield name
    podman("volume", "rm", "--force", name)


def wait_ready(base_url: str, name: str) -> None:
    def ready() -> bool:
        try:
            return requests.get(f"{base_url}/readyz", timeout=2).status_code == 200
        except requests.ConnectionError:
            return False

    wait_until(ready, seconds=120, message=f"{name}'s /readyz")


def file_with_screenshot(base_url: str, api_key: str) -> dict:
    shot = requests.post(f"{base_url}/api/v1/upload/screenshot", headers={"X-API-Key": api_key},
                         files={"file": ("shot.png", png_bytes(), "image/png")})  # fmt: skip
    assert shot.status_code == 201, shot.text
    report = requests.post(
        f"{base_url}/api/v1/reports",
        headers={"X-API-Key": api_key},
        json={"title": "Checkout fails", "description": "In the container", "severity": "high",
              "category": "bug", "screenshot_url": shot.json()["key"]},
    )  # fmt: skip
    assert report.status_code == 201, report.text
    return report.json()


def test_the_image_is_small(image):
    size = int(podman("image", "inspect", "--format", "{{.Size}}", image))
    print(f"{image}: {size / 1e6:.0f} MB")
    assert size < MAX_IMAGE_BYTES


def test_svc_runs_as_a_user_on_a_read_only_root_keeps_its_volume_and_stops_at_once(
    image, containers, volume
):
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    options = ["--publish", f"127.0.0.1:{port}:8000", "--volume", f"{volume}:/data",
               "--read-only", "--tmpfs", "/tmp"]  # fmt: skip
    containers("svc-test", *options, image)
    wait_ready(base_url, "svc-test")
    assert podman("exec", "svc-test", "id", "-u") != "0"
    browser, csrf = sign_up(base_url)
    project = browser.post(f"{base_url}/api/v1/projects", json={"name": "Web Shop"}, headers=csrf)
    assert project.status_code == 201, project.text
    report = file_with_screenshot(base_url, project.json()["apiKey"])

    started = time.monotonic()
    podman("stop", "svc-test")
    assert time.monotonic() - started < 5
    podman("rm", "svc-test")

    # A new container on the same volume has the account, the report and its screenshot.
    containers("svc-test", *options, image)
    wait_ready(base_url, "svc-test")
    again = requests.Session()
    signed_in = again.post(f"{base_url}/api/v1/auth/login",
                           json={"email": "ada@example.com", "password": PASSWORD})  # fmt: skip
    assert signed_in.status_code == 200, signed_in.text
    kept = again.get(f"{base_url}/api/v1/reports/{report['trackingId']}")
    assert kept.status_code == 200 and kept.json()["title"] == "Checkout fails"
    shot = again.get(f"{base_url}/api/v1/screenshots/{kept.json()['screenshotUrl']}")
    assert shot.status_code == 200 and shot.content == png_bytes()
    assert podman("inspect", "--format", "{{.Config.User}}", "svc-test") == "svc"


def test_svc_runs_on_postgresql_as_compose_yaml_runs_it(image, containers):
    """compose.yaml's svc with the host's PostgreSQL (no PostgreSQL image can be had here)."""
    database = os.environ.get("SVC_TEST_DATABASE_URL")
    if not database:
        database = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    with postgresql_schema(database, "svc_container") as url:
        containers("svc-test-postgresql", "--network", "host", "--env", f"SVC_DATABASE_URL={url}",
                   "--env", f"SVC_BIND=127.0.0.1:{port}", "--read-only", "--tmpfs", "/tmp",
                   image)  # fmt: skip
        wait_ready(base_url, "svc-test-postgresql")
        browser, csrf = sign_up(base_url)
        project = browser.post(f"{base_url}/api/v1/projects", json={"name": "Web Shop"},
                               headers=csrf)  # fmt: skip
        report = file_with_screenshot(base_url, project.json()["apiKey"])
        assert report["trackingId"] == "WS-1"
        health = podman("healthcheck", "run", "svc-test-postgresql", check=False)
        assert health in ("", "healthy"), health
        podman("stop", "svc-test-postgresql")
