"""The OpenAPI description is valid and covers every endpoint with its schemas."""

import pytest
from openapi_spec_validator import validate

from svc.openapi import _DOCUMENTED_METHODS, _openapi_path, is_api_rule

# The document is made from the route table: the database cannot change it (tests/conftest.py).
pytestmark = pytest.mark.any_database


def test_description_is_valid_openapi_3(client):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    validate(response.get_json())


def test_every_route_is_described(app, client):
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    for rule in app.url_map.iter_rules():
        if not is_api_rule(rule):
            continue
        path, _ = _openapi_path(rule.rule)
        for method in set(rule.methods) & set(_DOCUMENTED_METHODS):
            assert method.lower() in paths[path], f"{method} {path} is not described"


def test_operations_carry_schemas_credentials_and_errors(client):
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    create_token = paths["/api/v1/tokens"]["post"]
    assert create_token["requestBody"]["content"]["application/json"]["schema"]
    assert set(create_token["responses"]) >= {"201", "400", "401", "403", "413", "415", "422"}
    assert create_token["security"] == [{"session": []}]  # a token cannot mint one
    delete_token = paths["/api/v1/tokens/{token_id}"]["delete"]
    assert {"session": []} in delete_token["security"] and {"pat": []} in delete_token["security"]
    assert "404" in delete_token["responses"] and "204" in delete_token["responses"]
    assert delete_token["parameters"][0]["schema"]["format"] == "uuid"
    assert paths["/api/v1/auth/login"]["post"]["security"] == []
    assert "429" in paths["/api/v1/auth/login"]["post"]["responses"]
    change_password = paths["/api/v1/auth/password"]["post"]
    assert change_password["security"] == [{"session": []}]
    assert {"403", "429"} <= set(change_password["responses"])
    assert "409" in paths["/api/v1/auth/register"]["post"]["responses"]


def test_response_schemas_use_camel_case(client):
    schemas = client.get("/api/v1/openapi.json").get_json()["components"]["schemas"]
    token_fields = set(schemas["TokenCreatedOut"]["properties"])
    assert token_fields == {
        "id",
        "name",
        "token",
        "tokenHint",
        "createdAt",
        "expiresAt",
        "lastUsedAt",
        "scopes",
    }
    assert set(schemas["RegisterIn"]["properties"]) == {"name", "email", "password"}


def test_upload_and_image_endpoints_are_described(client):
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    upload = paths["/api/v1/upload/screenshot"]["post"]
    assert "file" in upload["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
    assert upload["security"] == [{"api_key": []}]
    assert set(upload["responses"]) >= {"201", "401", "413", "415", "422", "429", "503"}
    image = paths["/api/v1/screenshots/{key}"]["get"]["responses"]["200"]["content"]
    assert set(image) == {"image/png", "image/jpeg", "image/webp", "image/gif"}
    create = paths["/api/v1/reports"]["post"]
    assert {"200", "201"} <= set(create["responses"])
