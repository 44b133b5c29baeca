"""The object store (docs/storage.md) on each kind: a folder, and a bucket of a real S3 server
(SeaweedFS). What a store holds does not depend on the database, so these run on SQLite."""

import gzip
import json
import secrets
import tarfile
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from sqlalchemy import insert, select, update

from harness.client import create_project, csrf, register
from svc import storage
from svc.extensions import db
from svc.models import Project, Screenshot
from svc.models.base import utcnow
from svc.operations import backup
from svc.services.reporting import screenshots
from tests.helpers import file_report, png_bytes, upload

pytestmark = pytest.mark.any_database


def stored(app, key: str) -> int | None:
    """The size of `key`'s object in the app's store, None when it has none."""
    with app.app_context():
        return storage.current_store().size_of(key)


def signed_in(app):
    client = app.test_client()
    client.user = register(client)
    return client


def test_upload_serve_and_delete_on_each_store(make_app, store_settings):
    app = make_app(**store_settings)
    team = signed_in(app)
    shop = create_project(team, "Web Shop")
    image = png_bytes(3, 3, padding=200_000)  # past boto3's single-PUT chunk of reading

    key = upload(team, shop["apiKey"], image).get_json()["key"]
    # A replay (docs/replay.md) lives in the same store and goes with the same report.
    events = [{"type": 4, "data": {"href": "https://shop.test/"}, "timestamp": 1}]
    replay_key = team.post(
        "/api/v1/upload/replay",
        data=gzip.compress(json.dumps(events).encode()),
        headers={"X-API-Key": shop["apiKey"], "Content-Type": "application/gzip"},
    ).get_json()["key"]
    report = file_report(team, shop["apiKey"], screenshot_url=key, replay_key=replay_key).get_json()
    replayed = team.get(report["replayUrl"])
    assert json.loads(gzip.decompress(replayed.data)) == events
    assert stored(app, replay_key) == len(replayed.data)
    served = team.get(f"/api/v1/screenshots/{key}")
    assert served.status_code == 200 and served.data == image
    assert served.mimetype == "image/png" and served.headers["X-Content-Type-Options"] == "nosniff"
    assert stored(app, key) == len(image)
    # A rejected upload leaves nothing behind, in the store or in the spool.
    assert upload(team, shop["apiKey"], b"not an image").status_code == 415
    with app.app_context():
        assert list(storage.current_store().spool_dir.iterdir()) == []

    assert team.delete(f"/api/v1/reports/{report['id']}", headers=csrf(team)).status_code == 204
    assert stored(app, key) is None and stored(app, replay_key) is None
    assert team.get(f"/api/v1/screenshots/{key}").status_code == 404
    assert team.get(report["replayUrl"]).status_code == 404

    # An upload no report took within a day goes in the sweep; a project's go with it.
    orphan = upload(team, shop["apiKey"], png_bytes(4, 4)).get_json()["key"]
    kept = upload(team, shop["apiKey"], png_bytes(5, 5)).get_json()["key"]
    file_report(team, shop["apiKey"], screenshot_url=kept)
    with app.app_context():
        db.session.execute(
            update(Screenshot)
            .where(Screenshot.key == orphan)
            .values(created_at=utcnow() - timedelta(days=2))
        )
        db.session.commit()
        assert screenshots.sweep() == 1
    assert stored(app, orphan) is None and stored(app, kept) == len(png_bytes(5, 5))
    assert team.delete(f"/api/v1/projects/{shop['id']}", headers=csrf(team)).status_code == 204
    assert stored(app, kept) is None


def test_a_store_that_is_down_is_a_503_and_comes_back_without_a_restart(
    make_app, s3_settings, seaweed
):
    # The ingest limit on, as installs have it: its headers must not replace the 503's.
    app = make_app(**s3_settings, SVC_RATE_LIMIT_INGEST="1000/hour")
    team = signed_in(app)
    shop = create_project(team, "Web Shop")
    kept = upload(team, shop["apiKey"], png_bytes()).get_json()["key"]
    seaweed.stop()
    try:
        refused = upload(team, shop["apiKey"], png_bytes(4, 4))
        ready = app.test_client().get("/readyz")
        served = team.get(f"/api/v1/screenshots/{kept}")
    finally:
        seaweed.start()
    # The service's own Retry-After, not the rate limiter's window.
    for answer, seconds in ((refused, "30"), (ready, "5"), (served, "30")):
        assert answer.status_code == 503, answer.data
        assert answer.headers["Retry-After"] == seconds and "unavailable" in answer.json["detail"]
    with app.app_context():
        # No row for the refused upload: no report can point at an object that is not there.
        keys = set(db.session.scalars(select(Screenshot.key)))
    assert keys == {kept}

    assert app.test_client().get("/readyz").status_code == 200
    again = upload(team, shop["apiKey"], png_bytes(4, 4)).get_json()["key"]
    assert team.get(f"/api/v1/screenshots/{again}").data == png_bytes(4, 4)
    assert team.get(f"/api/v1/screenshots/{kept}").data == png_bytes()


def test_objects_erased_while_the_store_is_down_go_once_it_is_back(make_app, s3_settings, seaweed):
    """A deletion that failed left erased files in the store for ever."""
    app = make_app(**s3_settings)
    team = signed_in(app)
    shop = create_project(team, "Web Shop")
    image = png_bytes(7, 7)
    key = upload(team, shop["apiKey"], image).get_json()["key"]
    file_report(team, shop["apiKey"], screenshot_url=key, reporter_identifier="jo@example.com")
    seaweed.stop()
    try:
        erased = team.post(
            f"/api/v1/projects/{shop['id']}/reporter-data/erase",
            json={"reporter_identifier": "jo@example.com"},
            headers=csrf(team),
        )
        with app.app_context():
            assert screenshots.retry_deletions() == 1  # still down: still recorded
    finally:
        seaweed.start()
    assert erased.status_code == 200 and erased.get_json() == {"reports": 1}
    assert stored(app, key) == len(image)  # the erased report's screenshot, left behind
    with app.app_context():
        assert screenshots.retry_deletions() == 1
        assert screenshots.retry_deletions() == 0
    assert stored(app, key) is None


def test_a_crash_between_the_commit_and_the_deletion_leaves_nothing(make_app, store_settings):
    app = make_app(**store_settings)
    team = signed_in(app)
    shop = create_project(team, "Web Shop")
    key = upload(team, shop["apiKey"], png_bytes(8, 8)).get_json()["key"]
    with app.app_context():
        screenshots.forget([key])  # what a deletion commits, its process dying right after
        db.session.commit()
    assert stored(app, key) is not None
    with app.app_context():
        assert screenshots.retry_deletions() == 1
    assert stored(app, key) is None


def test_two_hosts_share_one_bucket(make_app, s3_settings):
    """Host A and host B: one database, one bucket, one secret key, nothing else shared."""
    shared = {**s3_settings, "SVC_SECRET_KEY": "one key for every host"}
    host_a, host_b = make_app(**shared), make_app(**shared)
    team = signed_in(host_a)
    shop = create_project(team, "Web Shop")
    token = team.post("/api/v1/tokens", json={"name": "ci"}, headers=csrf(team)).json["token"]
    image = png_bytes(5, 5)

    key = upload(host_a.test_client(), shop["apiKey"], image).get_json()["key"]
    report = file_report(host_b.test_client(), shop["apiKey"], screenshot_url=key)
    assert report.status_code == 201, report.data
    for host in (host_a, host_b):
        served = host.test_client().get(
            f"/api/v1/screenshots/{key}", headers={"Authorization": f"Bearer {token}"}
        )
        assert served.status_code == 200 and served.data == image


def test_presigned_downloads_send_the_team_to_the_store_after_the_check(make_app, s3_settings):
    app = make_app(**s3_settings, SVC_S3_PRESIGNED_DOWNLOADS=True)
    team = signed_in(app)
    shop = create_project(team, "Web Shop")
    key = upload(team, shop["apiKey"], png_bytes(6, 6)).get_json()["key"]

    answer = team.get(f"/api/v1/screenshots/{key}")
    assert answer.status_code == 302
    fetched = requests.get(answer.headers["Location"], timeout=10)
    assert fetched.status_code == 200 and fetched.content == png_bytes(6, 6)
    assert fetched.headers["Content-Type"] == "image/png"
    # Signed into the URL, so the store answers with them.
    assert fetched.headers["Content-Disposition"] == "attachment"
    assert fetched.headers["Cache-Control"] == "private, no-store"
    assert "X-Amz-Expires=60" in answer.headers["Location"]
    outsider = app.test_client()
    register(outsider, email="grace@example.com", name="Grace Hopper")
    assert outsider.get(f"/api/v1/screenshots/{key}").status_code == 404


# Each is copied, read back and compared one at a time: a few hundred check what a thousand did.
SCREENSHOTS = 200


def _screenshots(app) -> dict[str, bytes]:
    """SCREENSHOTS screenshots of one project, put straight into the store and the table."""
    images = {}
    with app.app_context():
        store = storage.current_store()
        project_id = db.session.scalar(select(Project.id))
        rows = []
        for number in range(SCREENSHOTS):
            key = f"{secrets.token_urlsafe(24)}.png"
            images[key] = png_bytes(2, 2, padding=number)
            path = store.path(key)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(images[key])
            rows.append(
                {"key": key, "project_id": project_id, "content_type": "image/png", "size": 1}
            )
        db.session.execute(insert(Screenshot), rows)
        db.session.commit()
    return images


def test_copy_to_moves_every_screenshot_to_s3_and_checks_each(
    make_app, s3_settings, seaweed, tmp_path
):
    on_disk = make_app(
        SVC_STORAGE_URL=str(tmp_path / "uploads"),
        SVC_S3_ENDPOINT_URL=s3_settings["SVC_S3_ENDPOINT_URL"],
    )
    team = signed_in(on_disk)
    create_project(team, "Web Shop")
    images = _screenshots(on_disk)
    target = s3_settings["SVC_STORAGE_URL"]
    bucket = target.removeprefix("s3://").split("/")[0]

    first = on_disk.test_cli_runner().invoke(args=["storage", "copy-to", target])
    assert first.exit_code == 0, first.output
    assert f"{SCREENSHOTS} copied, 0 there already" in first.output
    assert f"SVC_STORAGE_URL={target}" in first.output
    assert len(seaweed.object_names(bucket)) == SCREENSHOTS

    again = on_disk.test_cli_runner().invoke(args=["storage", "copy-to", target])
    assert again.exit_code == 0 and f"0 copied, {SCREENSHOTS} there already" in again.output

    # A copy changed in the store since is found by its checksum and copied again.
    changed = sorted(images)[0]
    seaweed.client().put_object(Bucket=bucket, Key=f"svc/{changed}", Body=b"\x89PNG damaged")
    third = on_disk.test_cli_runner().invoke(args=["storage", "copy-to", target])
    assert third.exit_code == 0, third.output
    assert f"1 copied, {SCREENSHOTS - 1} there already" in third.output

    on_s3 = make_app(**s3_settings)
    token = team.post("/api/v1/tokens", json={"name": "ci"}, headers=csrf(team)).json["token"]
    reader, bearer = on_s3.test_client(), {"Authorization": f"Bearer {token}"}
    for key, image in images.items():
        served = reader.get(f"/api/v1/screenshots/{key}", headers=bearer)
        assert served.status_code == 200 and served.data == image, key
    assert (tmp_path / "uploads").is_dir()  # nothing is deleted from the source


def test_copy_to_refuses_what_is_not_a_store_in_plain_words(make_app, tmp_path):
    app = make_app(SVC_STORAGE_URL=str(tmp_path / "uploads"))
    runner = app.test_cli_runner()
    for url, said in (
        ("ftp://example.com/x", "not a store"),
        (f"file://{tmp_path / 'uploads'}", "is the store in force"),
        ("s3://svc-no-such-host", "unavailable"),
    ):
        refused = runner.invoke(args=["storage", "copy-to", url])
        assert refused.exit_code == 1 and said in refused.output, (url, refused.output)
        assert "Traceback" not in refused.output


def test_a_backup_of_a_bucket_restores_into_a_folder_and_back(make_app, s3_settings, tmp_path):
    on_s3 = make_app(**s3_settings)
    team = signed_in(on_s3)
    shop = create_project(team, "Web Shop")
    key = upload(team, shop["apiKey"], png_bytes(7, 7)).get_json()["key"]
    file_report(team, shop["apiKey"], screenshot_url=key)
    with on_s3.app_context():
        made = backup.backup(str(tmp_path))
    with tarfile.open(made.path) as archive:
        assert f"objects/{key}" in archive.getnames()

    for name, settings in (
        ("folder", {"SVC_STORAGE_URL": str(tmp_path / "restored-uploads")}),
        ("s3", {**s3_settings, "SVC_STORAGE_URL": s3_settings["SVC_STORAGE_URL"] + "-restored"}),
    ):
        database = f"sqlite:///{tmp_path / name}.sqlite3"
        with make_app(SVC_DATABASE_URL=database, **settings).app_context():
            backup.restore(str(made.path))
        restored = make_app(SVC_DATABASE_URL=database, **settings)
        assert stored(restored, key) == len(png_bytes(7, 7)), name
        with restored.app_context():
            assert storage.current_store().open(key).read() == png_bytes(7, 7)
    assert Path(tmp_path / "restored-uploads").is_dir()
