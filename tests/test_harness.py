"""The servers the tests start come up whatever else runs on the machine: none is handed a port
that nothing holds (harness/ports.py). Another process holds a port, the port guess is made to
return it, and each harness still starts; those that bind a port of their own never guess."""

import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import requests

import harness.ports
import harness.s3
from harness.ports import Reservation, listening_socket
from harness.service import kill_service, start_service

HOLD = (
    "import socket, sys\n"
    "held = socket.create_server(('127.0.0.1', int(sys.argv[1])))\n"
    "print(held.getsockname()[1], flush=True)\n"
    "sys.stdin.read()\n"
)


@pytest.fixture
def hold():
    """`hold(port)`: another process listens on `port` (0: the kernel's choice) for the whole
    test; the port."""
    holders = []

    def held(port: int = 0) -> int:
        holder = subprocess.Popen([sys.executable, "-c", HOLD, str(port)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)  # fmt: skip
        holders.append(holder)
        return int(holder.stdout.readline())

    yield held
    for holder in holders:
        holder.stdin.close()
        holder.wait(timeout=10)


@pytest.fixture
def held_port(hold) -> int:
    return hold()


def guesses(first: int):
    """A port guess that returns `first` once, then what the kernel hands out."""
    given, kernels = [], harness.ports.candidate_port

    def guess():
        given.append(first if not given else kernels())
        return given[-1]

    guess.given = given
    return guess


def binds(port: int) -> bool:
    """Whether another process can bind `port` now."""
    probe = f"import socket; socket.create_server(('127.0.0.1', {port}))"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


@pytest.mark.server
@pytest.mark.any_database
def test_make_run_starts_on_another_port_where_its_first_is_taken(
    held_port, service_env, monkeypatch
):
    guess = guesses(held_port)
    monkeypatch.setattr(harness.ports, "candidate_port", guess)
    base_url, service = start_service(service_env)
    try:
        assert guess.given[0] == held_port and len(guess.given) == 2
        assert base_url == f"http://127.0.0.1:{guess.given[1]}"
        assert requests.get(f"{base_url}/healthz", timeout=5).ok
    finally:
        kill_service(service)


def test_seaweedfs_starts_on_other_ports_where_one_is_taken(hold, tmp_path, monkeypatch):
    first, kernels = harness.s3._candidate_ports(), harness.s3._candidate_ports
    first["volume"] = hold(first["volume"])
    tried = []

    def candidates():
        tried.append(first if not tried else kernels())
        return tried[-1]

    monkeypatch.setattr(harness.s3, "_candidate_ports", candidates)
    server = harness.s3.SeaweedServer(tmp_path / "weed").start()
    try:
        assert len(tried) == 2 and server.ports == tried[1]
        bucket = server.bucket()
        server.client().put_object(Bucket=bucket, Key="k", Body=b"v")
        assert server.object_names(bucket) == ["k"]
    finally:
        server.stop()


@pytest.fixture
def no_guessing(monkeypatch):
    """The servers below bind a port of their own: any guess fails the test."""

    def guess():
        raise AssertionError("a port was guessed")

    monkeypatch.setattr(harness.ports, "candidate_port", guess)


def test_the_smtp_server_holds_its_port_while_it_is_down(certificate_authority, no_guessing):
    from harness.smtp import SmtpServer

    server = SmtpServer(certificate_authority[0]).start()
    try:
        port = server.port
        assert not binds(port)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            assert connection.recv(100).startswith(b"220")
        server.stop()
        # Down: connections are refused, and still no other process can take the port.
        assert refused(port) and not binds(port)
        server.start()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            assert connection.recv(100).startswith(b"220")
    finally:
        server.close()
    assert binds(port)


def test_the_openid_provider_says_its_port_and_keeps_it_when_it_rotates_keys(
    certificate_authority, no_guessing
):
    from harness.oidc import OpenIDProvider, signing_keys

    ca, bundle = certificate_authority
    provider = OpenIDProvider(ca, {"svc": ["http://localhost/cb"]}, jwks=signing_keys("a"))
    provider.start(bundle)
    try:
        jwks = f"{provider.issuer}/jwks"
        before = requests.get(jwks, verify=bundle, timeout=10).json()["keys"]
        assert provider.issuer == f"https://127.0.0.1:{provider.port}" and not binds(provider.port)
        provider.rotate(signing_keys("b"))
        after = requests.get(jwks, verify=bundle, timeout=10).json()["keys"]
        assert [key["kid"] for key in after] != [key["kid"] for key in before]
    finally:
        provider.stop()


def test_the_openid_provider_fails_with_its_own_words(certificate_authority, monkeypatch):
    """A provider that cannot start: the failure shows what node said."""
    import harness.oidc

    monkeypatch.setattr(harness.oidc, "SCRIPT", Path("/nonexistent/provider.mjs"))
    provider = harness.oidc.OpenIDProvider(certificate_authority[0], {})
    with pytest.raises(AssertionError, match="Cannot find module"):
        provider.start(certificate_authority[1])
    provider.stop()


def test_receivers_and_tracker_fakes_bind_their_own_ports(certificate_authority, no_guessing):
    from harness.receiver import Receiver
    from harness.trackers import FakeTrackers

    receiver = Receiver(certificate_authority[0]).start()
    trackers = FakeTrackers(certificate_authority[0]).start()
    try:
        for port in (receiver.port, int(trackers.base.rsplit(":", 1)[1])):
            assert not binds(port)
    finally:
        receiver.stop()
        trackers.stop()


def test_a_reservation_refuses_connections_and_other_binds(no_guessing):
    with Reservation() as reservation:
        assert refused(reservation.port) and not binds(reservation.port)
    with listening_socket() as sock:
        assert not binds(sock.getsockname()[1])


def test_the_suites_patches_hold_for_the_installed_libraries(make_app):
    """tests/conftest.py patches two private methods, for speed: an upgrade of werkzeug or
    Flask-SQLAlchemy past the versions they were written for fails here, loudly, rather than
    somewhere in the suite."""
    from importlib.metadata import version

    from werkzeug.routing.rules import Rule

    from svc.extensions import db
    from tests.conftest import PATCHED_FOR

    for package, written_for in PATCHED_FOR.items():
        assert version(package).startswith(written_for), (
            f"{package} {version(package)}: tests/conftest.py's patch was written for "
            f"{written_for}x; check it against the new release, then update PATCHED_FOR"
        )
    assert Rule.compile.__name__ == "remembered"
    first, second = make_app(), make_app()
    rule = "/api/v1/reports/<report_ref>"
    rules = [next(r for r in app.url_map.iter_rules() if r.rule == rule) for app in (first, second)]
    assert rules[0]._build.__func__ is rules[1]._build.__func__  # compiled once, for every app
    assert rules[0]._parts is not rules[1]._parts and rules[0]._parts == rules[1]._parts
    # ... and the second app's rules still match and build, converters included.
    project = uuid.uuid4()
    routes = second.url_map.bind("localhost")
    assert routes.match("/api/v1/reports/WS-7") == (rules[1].endpoint, {"report_ref": "WS-7"})
    endpoint, values = routes.match(f"/api/v1/projects/{project}")
    assert values == {"project_id": project}
    assert routes.build(endpoint, values) == f"/api/v1/projects/{project}"
    with first.app_context():
        engine = db.engine
    with second.app_context():
        assert db.engine is engine  # one engine per test database
