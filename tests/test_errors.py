"""Every error is JSON {"detail": ...} with the status of docs/api.md §1, in its order."""

import pytest

from harness.client import create_project, csrf


def assert_error(response, status):
    assert response.status_code == status, response.data
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert isinstance(body["detail"], str) and body["detail"]
    return body


def test_unknown_route_is_json_404(client):
    assert_error(client.get("/api/v1/nothing-here"), 404)
    assert_error(client.get("/no/such/page"), 404)


def test_wrong_method_is_405_with_allow(client):
    response = client.delete("/api/v1/auth/me")
    assert_error(response, 405)
    assert "GET" in response.headers["Allow"]


def test_405_comes_before_401(client):
    assert_error(client.put("/api/v1/tokens"), 405)


def test_malformed_json_is_400(client):
    response = client.post("/api/v1/auth/login", data="{not json", content_type="application/json")
    assert_error(response, 400)


@pytest.mark.parametrize("raw", ["[]", '"text"', "42", "null", ""])
def test_body_that_is_not_an_object_is_400(client, raw):
    response = client.post("/api/v1/auth/login", data=raw, content_type="application/json")
    assert_error(response, 400)


def test_non_standard_json_constants_are_400(client):
    response = client.post(
        "/api/v1/auth/login", data='{"email": NaN}', content_type="application/json"
    )
    assert_error(response, 400)


def nested(levels: int, key: str = "a") -> str:
    """A JSON object holding arrays in arrays, `levels` levels in all (the object is one)."""
    return f'{{"{key}": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


@pytest.mark.parametrize("levels", [65, 900, 5000])
def test_bodies_nested_too_deeply_are_400_before_anything_walks_them(user_client, levels, caplog):
    """With no credential (login) and with a public API key (reports): a 400, and nothing in
    the log (a RecursionError used to write a 258 KB traceback)."""
    api_key = create_project(user_client)["apiKey"]
    for path, headers in (("/api/v1/auth/login", {}), ("/api/v1/reports", {"X-API-Key": api_key})):
        response = user_client.post(
            path, data=nested(levels), content_type="application/json", headers=headers
        )
        assert assert_error(response, 400)["detail"] == "Request body nests deeper than 64 levels"
    assert not [record for record in caplog.records if record.levelname == "ERROR"]


def test_64_levels_are_read(client):
    response = client.post(
        "/api/v1/auth/login", data=nested(64, "email"), content_type="application/json"
    )
    assert assert_error(response, 422)["errors"]["email"]


def test_wrong_content_type_is_415(client):
    response = client.post(
        "/api/v1/auth/login",
        data="email=a&password=b",
        content_type="application/x-www-form-urlencoded",
    )
    assert_error(response, 415)


def test_415_comes_before_400(client):
    response = client.post("/api/v1/auth/login", data="{not json", content_type="text/plain")
    assert_error(response, 415)


def test_body_over_5_mib_is_413(client):
    body = '{"email": "' + "a" * (5 * 1024 * 1024) + '"}'
    assert_error(client.post("/api/v1/auth/login", data=body, content_type="application/json"), 413)


def test_415_comes_before_413(client):
    assert_error(
        client.post("/api/v1/auth/login", data="a" * (6 * 1024 * 1024), content_type="text/plain"),
        415,
    )


def test_validation_error_is_422_with_errors_keyed_by_field(client):
    response = client.post("/api/v1/auth/register", json={"email": "x"})
    body = assert_error(response, 422)
    assert set(body["errors"]) == {"name", "email", "password"}
    assert all(isinstance(messages, list) and messages for messages in body["errors"].values())


@pytest.mark.parametrize("value", ["nul\u0000inside", "lone \ud800 surrogate"])
def test_unstorable_strings_are_422(client, value):
    response = client.post(
        "/api/v1/auth/login",
        data='{"email": "a@b.c", "password": ' + _json_string(value) + "}",
        content_type="application/json",
    )
    body = assert_error(response, 422)
    assert "password" in body["errors"]


def _json_string(value: str) -> str:
    import json

    return json.dumps(value)


def test_unexpected_errors_are_json_500_without_traceback(make_app):
    app = make_app()
    app.testing = False  # let the error handler answer, as in production

    @app.get("/api/v1/boom")
    def boom():
        raise RuntimeError("secret internal detail")

    response = app.test_client().get("/api/v1/boom")
    body = assert_error(response, 500)
    assert body == {"detail": "Internal server error"}
    assert b"secret internal detail" not in response.data
    assert b"Traceback" not in response.data


def test_unreachable_database_is_503_with_retry_after(make_app, tmp_path):
    """Rate limits on: the counters cannot be reached either, and that is a 503 too."""
    app = make_app(
        SVC_DATABASE_URL=f"sqlite:///{tmp_path}/missing-dir/db.sqlite3",
        SVC_RATE_LIMIT_AUTH="5/minute",
    )
    client = app.test_client()
    response = client.post(
        "/api/v1/auth/login", json={"email": "a@example.com", "password": "whatever"}
    )
    assert_error(response, 503)
    assert response.headers["Retry-After"].isdigit()
    ready = client.get("/readyz")
    assert_error(ready, 503)
    assert ready.headers["Retry-After"].isdigit()
    assert client.get("/healthz").get_json() == {"status": "ok"}


def test_health_endpoints(client):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    assert client.get("/readyz").get_json() == {"status": "ok"}


def test_https_responses_carry_strict_transport_security(client):
    assert "Strict-Transport-Security" not in client.get("/healthz").headers
    for path in ("/healthz", "/api/v1/missing", "/login"):
        response = client.get(path, base_url="https://bugs.example.com")
        assert response.headers["Strict-Transport-Security"] == "max-age=31536000"


def test_behind_a_trusted_proxy_https_is_as_the_proxy_says(make_app):
    client = make_app(SVC_TRUSTED_PROXIES="1").test_client()
    forwarded = client.get("/healthz", headers={"X-Forwarded-Proto": "https"})
    assert forwarded.headers["Strict-Transport-Security"] == "max-age=31536000"


def test_security_headers_on_every_response(client, user_client):
    for response in (
        client.get("/healthz"),
        client.get("/api/v1/missing"),
        user_client.post("/api/v1/tokens", json={}, headers=csrf(user_client)),
    ):
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "no-referrer"
        assert response.headers["X-Frame-Options"] == "DENY"


def test_a_413_says_the_limit_and_no_retry_after(client, make_app):
    body = '{"email": "' + "a" * (5 * 1024 * 1024) + '"}'
    response = client.post("/api/v1/auth/login", data=body, content_type="application/json")
    assert_error(response, 413)
    assert response.get_json()["detail"].endswith("the limit is 5 MiB (5242880 bytes)")
    assert "Retry-After" not in response.headers


def test_retry_after_only_where_waiting_helps(make_app):
    """The widget's endpoints are rate limited, and Flask-Limiter puts Retry-After on every
    answer they give: only a 429 and a 503 keep it."""
    from harness.client import create_project, register
    from tests.helpers import png_bytes, upload

    app = make_app(SVC_MAX_SCREENSHOT_BYTES="2000", SVC_RATE_LIMIT_INGEST="2/minute")
    client = app.test_client()
    register(client)
    key = create_project(client)["apiKey"]
    too_large = upload(client, key, png_bytes(padding=100_000))
    assert too_large.status_code == 413
    assert too_large.get_json()["detail"] == "Screenshot too large: the limit is 2000 bytes"
    not_an_image = upload(client, key, b"plain text, not a picture")
    assert not_an_image.status_code == 415
    limited = upload(client, key, png_bytes())
    assert limited.status_code == 429
    assert [r.headers.get("Retry-After") for r in (too_large, not_an_image)] == [None, None]
    assert int(limited.headers["Retry-After"]) > 0
