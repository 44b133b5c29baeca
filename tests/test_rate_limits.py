"""Rate limits on register and login (docs/api.md §1.1)."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from harness.client import PASSWORD
from svc import rate_limits
from svc.extensions import limiter


def test_login_is_limited_per_client_address(make_app):
    app = make_app(SVC_RATE_LIMIT_AUTH="3/minute")
    client = app.test_client()
    body = {"email": "nobody@example.com", "password": PASSWORD}
    statuses = [client.post("/api/v1/auth/login", json=body).status_code for _ in range(4)]
    assert statuses == [401, 401, 401, 429]
    limited = client.post("/api/v1/auth/login", json=body)
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) > 0
    assert "Too many requests" in limited.get_json()["detail"]
    # Another address has its own budget.
    other = client.post("/api/v1/auth/login", json=body, environ_base={"REMOTE_ADDR": "192.0.2.7"})
    assert other.status_code == 401


def test_register_is_limited(make_app):
    client = make_app(SVC_RATE_LIMIT_AUTH="2/minute").test_client()
    statuses = [client.post("/api/v1/auth/register", json={}).status_code for _ in range(3)]
    assert statuses == [422, 422, 429]


def test_limits_can_be_switched_off(make_app):
    client = make_app(SVC_RATE_LIMIT_AUTH="off").test_client()
    body = {"email": "nobody@example.com", "password": PASSWORD}
    assert {client.post("/api/v1/auth/login", json=body).status_code for _ in range(15)} == {401}


def test_ingest_is_limited_per_api_key_and_address(make_app):
    from harness.client import create_project, register
    from tests.helpers import file_report, png_bytes, upload

    app = make_app(SVC_RATE_LIMIT_INGEST="2/minute")
    client = app.test_client()
    register(client)
    first_key = create_project(client, "One")["apiKey"]
    second_key = create_project(client, "Two")["apiKey"]
    statuses = [file_report(client, first_key).status_code for _ in range(3)]
    assert statuses == [201, 201, 429]
    limited = file_report(client, first_key, headers={"Origin": "https://shop.example"})
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) > 0
    assert limited.headers["Access-Control-Allow-Origin"] == "*"  # the widget can read it
    # The same key from another address, and another key from this address, are not limited.
    other_address = client.post(
        "/api/v1/reports",
        json={"title": "t", "description": "d", "severity": "low", "category": "bug"},
        headers={"X-API-Key": first_key},
        environ_base={"REMOTE_ADDR": "192.0.2.9"},
    )
    assert other_address.status_code == 201
    assert file_report(client, second_key).status_code == 201
    # Uploads have a budget of their own, also per key and address.
    assert [upload(client, second_key, png_bytes()).status_code for _ in range(3)] == [
        201,
        201,
        429,
    ]


@pytest.mark.server
@pytest.mark.parametrize("workers", ["2", "4"])
def test_a_limit_holds_across_every_worker_of_make_run(app, service_env, services, workers):
    """Five wrong passwords at once keep several workers busy (a sync worker takes one request
    at a time, and checking a password takes a while), so they are counted in different
    processes; the sixth attempt is still refused, whichever worker takes it."""
    base_url, _service = services(
        {**service_env, "SVC_WORKERS": workers, "SVC_RATE_LIMIT_AUTH": "5/minute"}
    )

    def attempt(_number=None) -> requests.Response:
        body = {"email": "nobody@example.com", "password": PASSWORD}
        return requests.post(f"{base_url}/api/v1/auth/login", json=body)

    with ThreadPoolExecutor(5) as pool:
        first_five = list(pool.map(attempt, range(5)))
    assert [response.status_code for response in first_five] == [401] * 5
    assert sorted(int(r.headers["X-RateLimit-Remaining"]) for r in first_five) == [0, 1, 2, 3, 4]
    assert [attempt().status_code for _ in range(3)] == [429] * 3


def test_a_window_restarts_once_it_has_ended_and_is_then_forgotten(app):
    with app.test_request_context():
        storage = limiter.storage
        assert isinstance(storage, rate_limits.DatabaseStorage)
        assert [storage.incr("short", 1) for _ in range(3)] == [1, 2, 3]
        assert storage.incr("long", 60) == 1
        time.sleep(1.1)
        assert storage.get("short") == 0
        assert storage.incr("short", 1) == 1
        time.sleep(1.1)
        # The scheduler's hourly clean-up: only the window that has ended goes.
        assert rate_limits.forget_expired() == 1
        assert storage.get("long") == 1 and storage.get_expiry("long") > time.time() + 50


def test_another_app_on_the_same_database_shares_the_count(make_app):
    """Two instances of the service on one database: one budget."""
    first = make_app(SVC_RATE_LIMIT_AUTH="3/minute").test_client()
    second = make_app(SVC_RATE_LIMIT_AUTH="3/minute").test_client()
    body = {"email": "nobody@example.com", "password": PASSWORD}
    statuses = [
        (first if attempt % 2 else second).post("/api/v1/auth/login", json=body).status_code
        for attempt in range(4)
    ]
    assert statuses == [401, 401, 401, 429]
