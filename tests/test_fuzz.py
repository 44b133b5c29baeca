"""Schema-driven fuzzing: schemathesis generates valid and invalid requests for every operation
of /api/v1/openapi.json and checks each answer against the description: no server error, only
declared status codes, bodies that match the declared schemas, the declared content type.

Each generated request is sent once, with one of the credential kinds its operation accepts
(session cookies with CSRF, personal access token, project API key) in turn, so it gets past
authentication and each kind meets about as many of the operation's requests as the others.
Every kind for every request doubled the file's requests for the same answers: the view behind
each kind is the same (docs/performance.md, "The test suite").
"""

import gzip
import itertools

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from harness.client import create_pat, create_project, csrf, register
from svc.openapi import api_description
from tests.helpers import collection_app, file_report

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    content_type_conformance,
]
# 8 (12 until the identity work): the suite had gone past 12 minutes (docs/performance.md).
EXAMPLES_PER_OPERATION = 8


@pytest.fixture
def credentials(app):
    """What each credential kind sends (headers, cookies), for a user who owns a project with
    one report."""
    client = app.test_client()
    register(client)
    project = create_project(client)
    file_report(client, project["apiKey"])
    access = client.get_cookie("svc_access_token").value
    csrf_token = csrf(client)["X-CSRF-Token"]
    return {
        "session": {
            "cookies": {"svc_access_token": access, "svc_csrf_token": csrf_token},
            "headers": {"X-CSRF-Token": csrf_token},
        },
        "pat": {"headers": {"Authorization": f"Bearer {create_pat(client)['token']}"}},
        "api_key": {"headers": {"X-API-Key": project["apiKey"]}},
    }


def _description() -> dict:
    """The description does not depend on the database, so it is built once, at collection."""
    with collection_app() as app:
        return api_description(app)


# The replay upload's body (docs/api.md §18): any bytes, and gzip of any bytes.
schemathesis.openapi.media_type(
    "application/gzip", st.binary(max_size=256) | st.binary(max_size=256).map(gzip.compress)
)
schema = schemathesis.openapi.from_dict(_description())
schema.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
    max_examples=EXAMPLES_PER_OPERATION,
    deterministic=True,
)


@pytest.fixture
def turns():
    """Counts an operation's requests, to hand each the next credential kind."""
    return itertools.count()


@schema.parametrize()
@settings(suppress_health_check=list(HealthCheck), deadline=None)
def test_the_api_answers_as_described(case, credentials, turns, app):
    declared = case.operation.definition.raw.get("security", [])
    kinds = [name for entry in declared for name in entry] or [None]
    kind = kinds[next(turns) % len(kinds)]
    # In process, through the app's WSGI interface as the rest of the suite reaches it: the
    # same requests and answers as over a socket, without a server thread's cost for each of
    # some 10,000 requests (docs/performance.md, "The test suite").
    case.call_and_validate(app=app, checks=CHECKS, **credentials.get(kind, {}))
