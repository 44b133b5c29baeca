"""Every error is JSON {"detail": ...} with the status of contract section 1, in its order."""

import pytest

from tests.helpers import csrf


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
    app = make_app(SVC_DATABASE_URL=f"sqlite:///{tmp_path}/missing-dir/db.sqlite3")
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


def test_security_headers_on_every_response(client, user_client):
    for response in (
        client.get("/healthz"),
        client.get("/api/v1/missing"),
        user_client.post("/api/v1/tokens", json={}, headers=csrf(user_client)),
    ):
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "no-referrer"
        assert response.headers["X-Frame-Options"] == "DENY"
