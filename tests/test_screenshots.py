"""Screenshot upload, serving and clean-up (docs/api.md §9)."""

import re
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from harness.client import create_project, csrf, register
from svc.extensions import db
from svc.models import Screenshot
from svc.models.base import utcnow
from svc.services.reporting import screenshots
from tests.helpers import file_report, png_bytes, upload

KEY = re.compile(r"^[A-Za-z0-9._/-]+$")
IMAGES = {
    "image/png": png_bytes(),
    "image/jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 64,
    "image/gif": b"GIF89a\x01\x00\x01\x00\x80\x00\x00" + b"\x00" * 32,
    "image/webp": b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 32,
}


@pytest.fixture
def web_shop(user_client):
    return create_project(user_client, "Web Shop")


def stored_files(app) -> list[Path]:
    root = Path(app.config["SVC_UPLOAD_DIR"])
    return [path for path in root.rglob("*") if path.is_file()] if root.exists() else []


def count_screenshots(app) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(Screenshot))


@pytest.mark.parametrize("content_type", sorted(IMAGES))
def test_images_are_accepted_and_served_with_their_real_type(user_client, web_shop, content_type):
    # The client's file name and part type are ignored: the bytes decide.
    response = upload(user_client, web_shop["apiKey"], IMAGES[content_type], filename="x.bin")
    assert response.status_code == 201
    key = response.get_json()["key"]
    assert set(response.get_json()) == {"key"} and KEY.match(key) and len(key) >= 32
    served = user_client.get(f"/api/v1/screenshots/{key}")
    assert served.status_code == 200
    assert served.data == IMAGES[content_type]
    assert served.mimetype == content_type
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    assert "private" in served.headers["Cache-Control"]


@pytest.mark.parametrize(
    ("data", "filename"),
    [
        (b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "a.png"),
        (b"<!DOCTYPE html><html><script>alert(1)</script></html>", "b.png"),
        (b"%PDF-1.7\n", "c.jpg"),
        (b"", "empty.png"),
        (b"\x89PN", "truncated.png"),
    ],
)
def test_anything_but_an_image_is_415(app, user_client, web_shop, data, filename):
    response = upload(user_client, web_shop["apiKey"], data, filename=filename)
    assert response.status_code == 415
    assert response.get_json()["detail"]
    assert stored_files(app) == [] and count_screenshots(app) == 0


def test_size_limit(make_app):
    app = make_app(SVC_MAX_SCREENSHOT_BYTES="2000")
    client = app.test_client()
    register(client)
    api_key = create_project(client)["apiKey"]
    exactly = png_bytes(padding=0)
    exactly = png_bytes(padding=2000 - len(exactly) - 12 - 4)
    assert len(exactly) == 2000
    assert upload(client, api_key, exactly).status_code == 201
    too_large = upload(client, api_key, png_bytes(padding=2000))
    assert too_large.status_code == 413
    assert count_screenshots(app) == 1 and len(stored_files(app)) == 1


def test_upload_far_over_the_limit_is_413(app, user_client, web_shop):
    response = upload(user_client, web_shop["apiKey"], png_bytes(padding=11 * 1024 * 1024))
    assert response.status_code == 413
    assert stored_files(app) == []


def test_missing_file_field_is_422(user_client, web_shop):
    response = user_client.post(
        "/api/v1/upload/screenshot",
        headers={"X-API-Key": web_shop["apiKey"]},
        data={"other": "x"},
        content_type="multipart/form-data",
    )
    assert response.status_code == 422 and "file" in response.get_json()["errors"]


def test_non_multipart_upload_is_415(user_client, web_shop):
    response = user_client.post(
        "/api/v1/upload/screenshot",
        data=png_bytes(),
        headers={"X-API-Key": web_shop["apiKey"]},
        content_type="image/png",
    )
    assert response.status_code == 415


def test_upload_needs_the_api_key(client):
    assert upload(client, "svc_pub_" + "x" * 40, png_bytes()).status_code == 401


def test_report_references_its_screenshots(user_client, web_shop):
    shot = upload(user_client, web_shop["apiKey"], png_bytes()).get_json()["key"]
    annotated = upload(user_client, web_shop["apiKey"], png_bytes(3, 3)).get_json()["key"]
    report = file_report(
        user_client, web_shop["apiKey"], screenshot_url=shot, annotated_screenshot_url=annotated
    ).get_json()
    assert (report["screenshotUrl"], report["annotatedScreenshotUrl"]) == (shot, annotated)


def test_keys_of_another_project_are_refused(app, user_client, other_client, web_shop):
    theirs = create_project(other_client, "Grace's")
    key = upload(other_client, theirs["apiKey"], png_bytes()).get_json()["key"]
    response = file_report(user_client, web_shop["apiKey"], screenshot_url=key)
    assert response.status_code == 422 and "screenshot_url" in response.get_json()["errors"]
    # ... and not served to the other project's team either.
    assert user_client.get(f"/api/v1/screenshots/{key}").status_code == 404
    assert other_client.get(f"/api/v1/screenshots/{key}").status_code == 200


def test_a_key_belongs_to_one_report(user_client, web_shop):
    key = upload(user_client, web_shop["apiKey"], png_bytes()).get_json()["key"]
    assert file_report(user_client, web_shop["apiKey"], screenshot_url=key).status_code == 201
    again = file_report(user_client, web_shop["apiKey"], annotated_screenshot_url=key)
    assert again.status_code == 422 and "annotated_screenshot_url" in again.get_json()["errors"]


def test_serving_needs_membership(app, user_client, web_shop):
    key = upload(user_client, web_shop["apiKey"], png_bytes()).get_json()["key"]
    outsider = app.test_client()
    register(outsider, email="mallory@example.com")
    assert outsider.get(f"/api/v1/screenshots/{key}").status_code == 404
    assert app.test_client().get(f"/api/v1/screenshots/{key}").status_code == 401
    assert user_client.get("/api/v1/screenshots/../../secret_key").status_code == 404
    assert user_client.get("/api/v1/screenshots/unknown.png").status_code == 404


def test_deleting_a_report_removes_its_files(app, user_client, web_shop):
    key = upload(user_client, web_shop["apiKey"], png_bytes()).get_json()["key"]
    kept = upload(user_client, web_shop["apiKey"], png_bytes(4, 4)).get_json()["key"]
    file_report(user_client, web_shop["apiKey"], screenshot_url=key)
    assert len(stored_files(app)) == 2
    user_client.delete("/api/v1/reports/WS-1", headers=csrf(user_client))
    assert [path.name for path in stored_files(app)] == [kept]
    assert user_client.get(f"/api/v1/screenshots/{key}").status_code == 404


def test_deleting_a_project_removes_its_files(app, user_client, web_shop):
    key = upload(user_client, web_shop["apiKey"], png_bytes()).get_json()["key"]
    upload(user_client, web_shop["apiKey"], png_bytes(5, 5))
    file_report(user_client, web_shop["apiKey"], screenshot_url=key)
    user_client.delete(f"/api/v1/projects/{web_shop['id']}", headers=csrf(user_client))
    assert stored_files(app) == [] and count_screenshots(app) == 0


def test_sweep_removes_day_old_orphans_only(app, user_client, web_shop):
    orphan = upload(user_client, web_shop["apiKey"], png_bytes()).get_json()["key"]
    fresh = upload(user_client, web_shop["apiKey"], png_bytes(3, 3)).get_json()["key"]
    used = upload(user_client, web_shop["apiKey"], png_bytes(4, 4)).get_json()["key"]
    file_report(user_client, web_shop["apiKey"], screenshot_url=used)
    with app.app_context():
        db.session.execute(
            update(Screenshot)
            .where(Screenshot.key.in_([orphan, used]))
            .values(created_at=utcnow() - timedelta(hours=25))
        )
        db.session.commit()
        assert screenshots.sweep() == 1
    assert sorted(path.name for path in stored_files(app)) == sorted([fresh, used])
    assert user_client.get(f"/api/v1/screenshots/{used}").status_code == 200


def test_sweep_command(app, user_client, web_shop):
    upload(user_client, web_shop["apiKey"], png_bytes())
    result = app.test_cli_runner().invoke(args=["sweep"])
    assert result.exit_code == 0 and "0 orphaned screenshot" in result.output


@pytest.fixture
def small_disk(mount_tmpfs):
    return mount_tmpfs("256k")


def _disk_files(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file()]


def test_full_upload_disk_is_503_and_leaves_nothing(make_app, small_disk):
    app = make_app(SVC_UPLOAD_DIR=str(small_disk))
    client = app.test_client()
    register(client)
    api_key = create_project(client)["apiKey"]
    assert upload(client, api_key, png_bytes(padding=100 * 1024)).status_code == 201
    before = _disk_files(small_disk)
    response = upload(client, api_key, png_bytes(padding=200 * 1024))
    assert response.status_code == 503
    assert response.headers["Retry-After"].isdigit() and response.get_json()["detail"]
    assert _disk_files(small_disk) == before and count_screenshots(app) == 1


def test_read_only_upload_disk_is_503(make_app, small_disk):
    app = make_app(SVC_UPLOAD_DIR=str(small_disk))
    client = app.test_client()
    register(client)
    api_key = create_project(client)["apiKey"]
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    response = upload(client, api_key, png_bytes())
    assert response.status_code == 503 and response.headers["Retry-After"].isdigit()
    assert count_screenshots(app) == 0
