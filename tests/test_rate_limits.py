"""Rate limits on register and login (contract section 9)."""

from tests.helpers import PASSWORD


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
    from tests.helpers import create_project, file_report, png_bytes, register, upload

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
