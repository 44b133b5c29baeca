"""Backup, restore and copy-to (docs/operations.md), run as an operator runs them:
`flask --app svc ...` in a subprocess beside `make run`, on SQLite and PostgreSQL."""

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests
from sqlalchemy import create_engine, select, text, update

from harness.client import PASSWORD
from harness.databases import postgresql_schema
from harness.service import ROOT, add_project, kill_service, set_up_project, start_service
from svc import create_app
from svc.extensions import db
from svc.models import Project, Report, ReportDetail, User
from svc.operations import tables
from svc.services.reporting import stats
from tests.helpers import REPORT, png_bytes

pytestmark = pytest.mark.server
FLASK = str(Path(sys.executable).with_name("flask"))
FILERS = 20


def flask(env: dict, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [FLASK, "--app", "svc", *arguments],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def install(tmp_path: Path, name: str, database_url: str) -> dict:
    """The settings of an installation of its own: database, instance folder, uploads."""
    return {
        "SVC_WORKERS": "2",
        "SVC_DATABASE_URL": database_url,
        "SVC_INSTANCE_PATH": str(tmp_path / name / "instance"),
        "SVC_UPLOAD_DIR": str(tmp_path / name / "uploads"),
        "SVC_RATE_LIMIT_INGEST": "off",
    }


@pytest.fixture
def empty_database(database_url, tmp_path):
    """A second, empty database on the same server as the test database (never migrated)."""
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'empty.sqlite3'}"
        return
    with postgresql_schema(os.environ["SVC_TEST_DATABASE_URL"], "svc_restore") as url:
        yield url


class Filers:
    """FILERS clients filing reports, each with a screenshot, until stopped; every 201 is kept
    with the moment its answer arrived."""

    def __init__(self, base_url: str, api_key: str):
        self.base_url, self.api_key = base_url, api_key
        self.filed: list[tuple[float, dict, bytes]] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._file, args=(n,)) for n in range(FILERS)]

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def _file(self, client: int) -> None:
        session = requests.Session()
        headers = {"X-API-Key": self.api_key}
        number = 0
        while not self._stop.is_set():
            number += 1
            image = png_bytes(2 + client, 2 + number % 7)
            uploaded = session.post(
                f"{self.base_url}/api/v1/upload/screenshot",
                headers=headers,
                files={"file": ("shot.png", image, "image/png")},
            )
            if uploaded.status_code != 201:
                self.failures.append(f"upload {uploaded.status_code} {uploaded.text}")
                continue
            filed = session.post(
                f"{self.base_url}/api/v1/reports",
                headers=headers,
                json={
                    **REPORT,
                    "title": f"Client {client} report {number}",
                    "screenshot_url": uploaded.json()["key"],
                    "console_logs": [{"level": "error", "message": f"n={number}", "timestamp": 1}],
                },
            )
            if filed.status_code == 201:
                self.filed.append((time.monotonic(), filed.json(), image))
            else:
                self.failures.append(f"report {filed.status_code} {filed.text}")


def test_a_backup_taken_while_twenty_clients_file_restores_every_report(
    app, database_url, empty_database, services, tmp_path
):
    source = install(tmp_path, "source", database_url)
    base_url, _ = services(source)
    browser, project = set_up_project(base_url, webhook_url=None)
    archive = tmp_path / "backup.tar.gz"
    with Filers(base_url, project["apiKey"]) as filers:
        time.sleep(2)
        started = time.monotonic()
        made = flask(source, "backup", str(archive))
        finished = time.monotonic()
    assert made.returncode == 0, made.stderr
    assert not filers.failures, filers.failures[:3]
    before = [(report, image) for at, report, image in filers.filed if at < started]
    during = [report for at, report, _ in filers.filed if started < at < finished]
    assert len(before) >= FILERS and during

    target = install(tmp_path, "target", empty_database)
    restored = flask(target, "restore", str(archive))
    assert restored.returncode == 0, restored.stderr
    restored_url, _ = services(target)
    signed_in = requests.Session()
    answer = signed_in.post(
        f"{restored_url}/api/v1/auth/login",
        json={"email": "ada@example.com", "password": PASSWORD},
    )
    assert answer.status_code == 200, answer.text
    logged = signed_in.get(f"{restored_url}/api/v1/admin/audit?action=instance_restored").json()
    [entry] = logged["items"]
    assert (entry["actor"], entry["ip"]) == (None, None)  # the operator, on the server
    assert entry["detail"]["archive"] == "backup.tar.gz"
    for report, image in before:
        path = f"/api/v1/reports/{report['id']}"
        original, copy = browser.get(base_url + path), signed_in.get(restored_url + path)
        assert copy.status_code == 200 and copy.content == original.content
        key = report["screenshotUrl"]
        picture = signed_in.get(f"{restored_url}/api/v1/screenshots/{key}")
        assert picture.status_code == 200 and picture.content == image


def test_the_archive_holds_a_manifest_that_restore_checks(app, database_url, services, tmp_path):
    source = install(tmp_path, "source", database_url)
    base_url, service = services(source)
    _, project = set_up_project(base_url, webhook_url=None)
    filed = requests.post(
        f"{base_url}/api/v1/reports", headers={"X-API-Key": project["apiKey"]}, json=REPORT
    )
    assert filed.status_code == 201
    archive = tmp_path / "backups"
    archive.mkdir()
    made = flask(source, "backup", str(archive))
    assert made.returncode == 0, made.stderr
    (written,) = archive.iterdir()
    assert written.name.startswith("svc-backup-") and written.name.endswith(".tar.gz")
    with tarfile.open(written) as opened:
        manifest = json.load(opened.extractfile("manifest.json"))
    assert manifest["source"] == database_url.split(":")[0].split("+")[0]
    assert manifest["tables"]["reports"]["rows"] == 1
    assert manifest["tables"]["users"]["rows"] == 1

    # Into the very installation it came from: not empty, refused, nothing written.
    kill_service(service)
    refused = flask(source, "restore", str(written))
    assert refused.returncode == 1
    assert "not empty" in refused.stderr and "Traceback" not in refused.stderr

    # Into an empty one, but damaged: refused before anything is written.
    target = install(tmp_path, "target", f"sqlite:///{tmp_path / 'target.sqlite3'}")
    for name, damage in (("database.sqlite3", _flip_a_byte), ("manifest.json", _miscount)):
        damaged = _rewritten(written, tmp_path / f"damaged-{name}.tar.gz", name, damage)
        refused = flask(target, "restore", str(damaged))
        assert refused.returncode == 1, refused.stdout
        assert "is damaged" in refused.stderr and "Traceback" not in refused.stderr
    assert (
        not (tmp_path / "target.sqlite3").exists() or _reports_in(tmp_path / "target.sqlite3") == 0
    )
    assert not Path(target["SVC_UPLOAD_DIR"]).exists()


def _flip_a_byte(content: bytes) -> bytes:
    middle = len(content) // 2
    return content[:middle] + bytes([content[middle] ^ 1]) + content[middle + 1 :]


def _miscount(content: bytes) -> bytes:
    manifest = json.loads(content)
    manifest["tables"]["reports"]["rows"] += 1
    return json.dumps(manifest).encode()


def _rewritten(archive: Path, copy: Path, name: str, change) -> Path:
    """A copy of `archive` with member `name` changed by `change`."""
    with tarfile.open(archive) as source, tarfile.open(copy, "w:gz") as target:
        for member in source.getmembers():
            content = source.extractfile(member).read()
            if member.name == name:
                content = change(content)
            member.size = len(content)
            target.addfile(member, io.BytesIO(content))
    return copy


def _reports_in(database: Path) -> int:
    if not database.exists():
        return 0
    engine = create_engine(f"sqlite:///{database}")
    try:
        with engine.connect() as connection:
            tables = connection.execute(text("SELECT name FROM sqlite_master")).scalars().all()
            if "reports" not in tables:
                return 0
            return connection.execute(text("SELECT count(*) FROM reports")).scalar()
    finally:
        engine.dispose()


COPIED_REPORTS = 2_500


@pytest.fixture(scope="module")
def sqlite_installation(tmp_path_factory, certificate_authority):
    """A SQLite installation of 2,500 reports, comments, webhook deliveries waiting in the
    outbox, the scheduler's jobs and a token; built once, copied by each test that moves it."""
    from harness.receiver import Receiver

    receiver = Receiver(certificate_authority[0]).start()
    folder = tmp_path_factory.mktemp("installation")
    env = {
        **install(folder, "source", f"sqlite:///{folder / 'source.sqlite3'}"),
        "SVC_WEBHOOK_ALLOW_PRIVATE": "true",
        "SVC_WEBHOOK_CA_BUNDLE": certificate_authority[1],
    }
    base_url, service = start_service(env)
    try:
        browser, project = set_up_project(base_url, webhook_url=None)
        csrf = {"X-CSRF-Token": browser.cookies["svc_csrf_token"]}
        hooked = add_project(browser, base_url, "Hooked", receiver.url)
        commented = _file(base_url, project["apiKey"], "Report 1 of the move")["id"]
        for number in range(3):
            browser.post(
                f"{base_url}/api/v1/reports/{commented}/comments",
                json={"body": f"Seen it, {number}"},
                headers=csrf,
            ).raise_for_status()
        token = browser.post(f"{base_url}/api/v1/tokens", json={"name": "ci"}, headers=csrf)
    finally:
        kill_service(service)
    # The rest as copies of a filed report's rows, a thousand to a statement (10,000 through the
    # API took 30 s); then, with no scheduler running, the Hooked project's reports wait as
    # events, for the moved scheduler to fan out and deliver.
    _clone_reports(env["SVC_DATABASE_URL"], commented, range(2, COPIED_REPORTS + 1))
    filler = create_app({**env, "SVC_RATE_LIMIT_INGEST": "off", "TESTING": True})
    client = filler.test_client()
    for number in range(5):
        _file_in_process(client, hooked["apiKey"], f"Hooked report {number}")
    with filler.app_context():
        db.engine.dispose()
    yield {
        "folder": folder,
        "env": env,
        "project": project,
        "commented": commented,
        "token": token.json()["token"],
        "receiver": receiver,
    }
    receiver.stop()


def test_copy_to_moves_a_sqlite_installation_whole(
    app, database_url, sqlite_installation, services, tmp_path
):
    """Into the test database (PostgreSQL where it runs): the moved installation signs in,
    lists, searches, delivers its outbox, and numbers its next report after the last."""
    moving = sqlite_installation
    shutil.copytree(moving["folder"], tmp_path / "copy")
    source = {
        name: value.replace(str(moving["folder"]), str(tmp_path / "copy"))
        for name, value in moving["env"].items()
    }
    delivered_before = len(moving["receiver"].received)
    moved = flask(source, "copy-to", database_url)
    assert moved.returncode == 0, moved.stderr
    assert f"SVC_DATABASE_URL={database_url}" in moved.stdout

    base_url, moved_service = services({**source, "SVC_DATABASE_URL": database_url})
    signed_in = requests.Session()
    login = signed_in.post(
        f"{base_url}/api/v1/auth/login", json={"email": "ada@example.com", "password": PASSWORD}
    )
    assert login.status_code == 200, login.text
    project_id = moving["project"]["id"]
    listed = signed_in.get(f"{base_url}/api/v1/reports", params={"project_id": project_id})
    assert listed.json()["total"] == COPIED_REPORTS
    found = signed_in.get(f"{base_url}/api/v1/reports", params={"search": "zeppelin"}).json()
    assert [item["title"] for item in found["items"]] == ["The zeppelin checkout breaks"]
    comments = signed_in.get(f"{base_url}/api/v1/reports/{moving['commented']}/comments")
    assert [c["body"] for c in comments.json()] == [f"Seen it, {n}" for n in range(3)]
    # The moved events, fanned out and delivered by the moved scheduler.
    # Minutes, not seconds: under the whole suite's load the moved scheduler, which starts its
    # hourly jobs too (statistics of 10,000 reports), has taken over a minute. What it said is
    # shown if it never delivers.
    try:
        delivered = moving["receiver"].wait_for(delivered_before + 5, timeout=180)
    except AssertionError as missing:
        output = moved_service.output[-6000:]
        raise AssertionError(f"{missing}; the service said:\n{output}") from None
    assert len(delivered) == delivered_before + 5
    me = requests.get(
        f"{base_url}/api/v1/auth/me", headers={"Authorization": f"Bearer {moving['token']}"}
    )
    assert me.status_code == 200
    following = _file(base_url, moving["project"]["apiKey"], "The first report after the move")
    assert following["trackingId"] == f"WS-{COPIED_REPORTS + 1}"


def test_copy_to_refuses_a_database_that_is_not_empty(app, database_url, user_client, tmp_path):
    source = install(tmp_path, "source", f"sqlite:///{tmp_path / 'source.sqlite3'}")
    assert flask(source, "db", "upgrade").returncode == 0
    refused = flask(source, "copy-to", database_url)  # it holds user_client's account
    assert refused.returncode == 1
    assert "not empty: " in refused.stderr and "users (1 rows)" in refused.stderr
    assert "Traceback" not in refused.stderr
    refused = flask(source, "copy-to", "mysql://nowhere/db")
    assert refused.returncode == 1 and "must be a PostgreSQL" in refused.stderr


def _clone_reports(url: str, report_id: str, numbers: range) -> None:
    """Copies of a filed report (its row and its details) under the given numbers, titled
    "Report N of the move" (1234: the one a search finds), with the project's counters and the
    statistics brought up to date as the service keeps them."""
    reports, details, projects = Report.__table__, ReportDetail.__table__, Project.__table__
    engine = create_engine(url)
    with engine.begin() as connection:
        filed = connection.execute(select(reports).where(reports.c.id == uuid.UUID(report_id)))
        report = dict(filed.mappings().one())
        detail = connection.execute(select(details).where(details.c.report_id == report["id"]))
        detail = dict(detail.mappings().one())
        for start in range(numbers.start, numbers.stop, 1000):
            report_rows, detail_rows = [], []
            for number in range(start, min(numbers.stop, start + 1000)):
                title = "The zeppelin checkout breaks" if number == 1234 else None
                copy_id = uuid.uuid4()
                report_rows.append(
                    {
                        **report,
                        "id": copy_id,
                        "number": number,
                        "title": title or f"Report {number} of the move",
                    }
                )
                detail_rows.append({**detail, "report_id": copy_id})
            # One multi-row INSERT each: SQLite's full-text triggers flush once per statement.
            connection.execute(reports.insert().values(report_rows))
            connection.execute(details.insert().values(detail_rows))
        connection.execute(
            update(projects)
            .where(projects.c.id == report["project_id"])
            .values(last_report_number=numbers.stop - 1, report_count=numbers.stop - 1)
        )
        stats.recount_all(connection)
    engine.dispose()


def _file_in_process(client, api_key: str, title: str) -> None:
    response = client.post(
        "/api/v1/reports", headers={"X-API-Key": api_key}, json={**REPORT, "title": title}
    )
    assert response.status_code == 201, response.get_json()


def _file(base_url: str, api_key: str, title: str) -> dict:
    response = requests.post(
        f"{base_url}/api/v1/reports",
        headers={"X-API-Key": api_key},
        json={**REPORT, "title": title},
    )
    assert response.status_code == 201, response.text
    return response.json()


def test_a_tables_checksum_changes_with_any_value(app, user_client):
    """What copy-to and restore compare: one changed value changes the table's checksum; the
    count alone would not see it."""
    users = User.__table__
    with app.app_context(), db.engine.connect() as connection:
        before = tables.summary(connection, [users])
        connection.execute(update(users).values(name="Ada King"))
        after = tables.summary(connection, [users])
        connection.rollback()
    assert before["users"]["rows"] == after["users"]["rows"] == 1
    assert before["users"]["checksum"] != after["users"]["checksum"]
    assert tables.differences(before, after) == [
        f"users: {before['users']} expected, {after['users']} found"
    ]


# --- what restore accepts -------------------------------------------------------------------------

A_KEY = "A" * 32 + ".png"


@pytest.fixture(scope="module")
def small_backup(tmp_path_factory) -> Path:
    """A backup of a new SQLite installation: the archive every refusal below is made from."""
    folder = tmp_path_factory.mktemp("small")
    settings = install(folder, "source", f"sqlite:///{folder / 'source.sqlite3'}")
    for command in (("db", "upgrade"), ("backup", str(folder / "backup.tar.gz"))):
        done = flask(settings, *command)
        assert done.returncode == 0, done.stderr
    return folder / "backup.tar.gz"


def test_a_backup_archive_is_readable_by_its_owner_alone(small_backup):
    assert small_backup.stat().st_mode & 0o777 == 0o600


def _with_member(archive: Path, copy: Path, member: tarfile.TarInfo, content: bytes = b"") -> Path:
    """A copy of `archive` with one more member."""
    with tarfile.open(archive) as source, tarfile.open(copy, "w:gz") as target:
        for existing in source.getmembers():
            target.addfile(existing, source.extractfile(existing))
        member.size = len(content) if member.isreg() else 0
        target.addfile(member, io.BytesIO(content) if member.isreg() else None)
    return copy


def _symlink(name: str, to: str) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.linkname = tarfile.SYMTYPE, to
    return member


def _bad_key_in_manifest(content: bytes) -> bytes:
    manifest = json.loads(content)
    manifest["objects"]["../../outside.png"] = "0" * 64
    return json.dumps(manifest).encode()


def _refusals(backup: Path, folder: Path) -> dict[str, tuple[Path, str]]:
    """Archives restore must refuse, each with what its one Error line says."""
    folder.mkdir(exist_ok=True)
    whole = backup.read_bytes()
    cut = folder / "cut.tar.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    not_tar = folder / "notes.tar.gz"
    not_tar.write_text("these are my notes, not a backup\n")
    return {
        "cut short": (cut, "cut short"),
        "not a tar": (not_tar, "not a gzipped tar archive"),
        "a link": (
            _with_member(backup, folder / "link.tar.gz", _symlink(f"screenshots/{A_KEY}", "/etc")),
            "is not a file",
        ),
        "a link chain": (
            _with_member(backup, folder / "chain.tar.gz", _symlink("a/b/c/d", "../../../../..")),
            "it holds 'a/b/c/d'",
        ),
        "another name": (
            _with_member(backup, folder / "other.tar.gz", tarfile.TarInfo("../escape"), b"x"),
            "it holds '../escape'",
        ),
        "not a key": (
            _with_member(backup, folder / "key.tar.gz", tarfile.TarInfo("screenshots/x.sh"), b"x"),
            "it holds 'screenshots/x.sh'",
        ),
        "a bad key in the manifest": (
            _rewritten(backup, folder / "manifest.tar.gz", "manifest.json", _bad_key_in_manifest),
            "not one of svc's keys",
        ),
        "an absolute name": (
            _with_member(backup, folder / "absolute.tar.gz", tarfile.TarInfo("/tmp/x"), b"x"),
            "it holds '/tmp/x'",
        ),
        "a hard link": (
            _with_member(
                backup, folder / "hard.tar.gz", _linked(tarfile.LNKTYPE, "database.sqlite3")
            ),
            "is not a file",
        ),
        "a device": (
            _with_member(backup, folder / "device.tar.gz", _linked(tarfile.CHRTYPE, "")),
            "is not a file",
        ),
        "a file twice": (
            _with_member(backup, folder / "twice.tar.gz", tarfile.TarInfo("manifest.json"), b"{}"),
            "is there twice",
        ),
        # CVE-2025-4517's technique: a folder, a link inside it that climbs out, a file through it.
        "a deep link chain": (_deep_chain(backup, folder / "deep.tar.gz"), "it holds 'd'"),
    }


def _linked(kind: bytes, target: str) -> tarfile.TarInfo:
    member = tarfile.TarInfo(f"screenshots/{A_KEY}")
    member.type, member.linkname = kind, target
    return member


def _deep_chain(archive: Path, copy: Path) -> Path:
    folder = tarfile.TarInfo("d")
    folder.type = tarfile.DIRTYPE
    climb = _symlink("d/" + "p/" * 16 + "up", "../" * 40 + "tmp")
    through = tarfile.TarInfo("d/" + "p/" * 16 + "up/svc-escaped")
    with tarfile.open(archive) as source, tarfile.open(copy, "w:gz") as target:
        target.addfile(folder)
        target.addfile(climb)
        through.size = 1
        target.addfile(through, io.BytesIO(b"x"))
        for existing in source.getmembers():
            target.addfile(existing, source.extractfile(existing))
    return copy


def restore_in_process(settings: dict, archive: Path):
    """`flask --app svc restore ARCHIVE` for the installation of `settings`, run in this
    process: the same app and command, without a process's start for each of the refusals
    (two dozen `flask` processes took 100 s of the suite). The whole restore runs as a real
    process."""
    app = create_app(settings)
    try:
        return app.test_cli_runner().invoke(args=["restore", str(archive)])
    finally:
        with app.app_context():
            db.engine.dispose()


def test_restore_refuses_what_is_not_a_whole_backup_and_leaves_the_target_as_it_was(
    small_backup, tmp_path
):
    for case, (archive, says) in _refusals(small_backup, tmp_path).items():
        target = install(
            tmp_path, f"target-{archive.stem}", f"sqlite:///{tmp_path / 'new.sqlite3'}"
        )
        refused = restore_in_process(target, archive)
        assert refused.exit_code == 1, case
        assert refused.stderr.startswith("Error: ") and refused.stderr.count("\n") == 1, case
        assert says in refused.stderr, (case, refused.stderr)
        assert not Path(target["SVC_INSTANCE_PATH"]).exists(), case
        assert not (tmp_path / "new.sqlite3").exists(), case
        assert not Path(target["SVC_UPLOAD_DIR"]).exists(), case
    assert {path.name for path in tmp_path.iterdir()} <= {
        *(f"{a.stem.split('.')[0]}.tar.gz" for a, _ in _refusals(small_backup, tmp_path).values())
    }
    # A file that is not there: a line, and no instance folder made for nothing, by the real
    # command line.
    target = install(tmp_path, "target-missing", f"sqlite:///{tmp_path / 'new.sqlite3'}")
    missing = flask(target, "restore", str(tmp_path / "no-such-backup.tar.gz"))
    assert missing.returncode == 1 and "no such file" in missing.stderr, missing.stderr
    assert not Path(target["SVC_INSTANCE_PATH"]).exists()
    whole = install(tmp_path, "whole", f"sqlite:///{tmp_path / 'new.sqlite3'}")
    restored = flask(whole, "restore", str(small_backup))
    assert restored.returncode == 0, restored.stderr
    assert not Path("/tmp/svc-escaped").exists()


def _contents(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*")
            if path.is_file()}  # fmt: skip


def test_a_refused_restore_leaves_an_existing_instance_folder_byte_for_byte(small_backup, tmp_path):
    """An installation set up and migrated, but empty: each refusal leaves every file of its
    instance folder (secret key, database) as it was."""
    target = install(tmp_path, "target", "")
    target.pop("SVC_DATABASE_URL")  # the default: svc.sqlite3 in the instance folder
    assert flask(target, "db", "upgrade").returncode == 0
    instance = Path(target["SVC_INSTANCE_PATH"])
    before = _contents(instance)
    assert {"secret_key", "svc.sqlite3"} <= set(before)
    for case, (archive, _) in _refusals(small_backup, tmp_path / "archives").items():
        refused = restore_in_process(target, archive)
        assert refused.exit_code == 1 and refused.stderr.startswith("Error: "), case
        assert _contents(instance) == before, case
