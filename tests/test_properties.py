"""Property tests (hypothesis) for the pieces with rules: token parsing, signatures, redaction's
shortcut, tracking-id allocation, and the report list's filters, search and sort against a
model of the same data.
(The webhook retry schedule's property lives in test_webhooks.py, beside its receiver.)
"""

import base64
import hashlib
import hmac
import itertools
import uuid
from datetime import UTC, datetime

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from standardwebhooks import Webhook

from harness.client import csrf
from svc import json_codec
from svc.auth import tokens
from svc.services.reporting import redaction
from svc.webhooks.signing import standard_signature, svc_signature
from tests.helpers import png_bytes, upload

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
WITH_FIXTURES = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


# --- tokens ---------------------------------------------------------------------------------------


@given(data=st.data())
def test_a_pat_with_any_one_character_changed_is_rejected_unseen(data):
    token = tokens.new_pat()
    assert tokens.is_well_formed_pat(token)
    position = data.draw(st.integers(min_value=len(tokens.PAT_PREFIX), max_value=len(token) - 1))
    # A shift rather than a drawn character: what hypothesis draws must not depend on the token,
    # which is random, or a replayed example would draw differently.
    shift = data.draw(st.integers(min_value=1, max_value=len(BASE62) - 1))
    replacement = BASE62[(BASE62.index(token[position]) + shift) % len(BASE62)]
    typo = token[:position] + replacement + token[position + 1 :]
    assert not tokens.is_well_formed_pat(typo)


@given(st.text(max_size=80))
def test_any_text_is_a_pat_only_by_the_format(text):
    assert not tokens.is_well_formed_pat(text) or (
        text.startswith(tokens.PAT_PREFIX) and len(text) == tokens.PAT_LENGTH
    )


@given(st.text(max_size=120))
def test_refresh_token_parsing_never_raises(text):
    parsed = tokens.parse_refresh_token(text)
    assert parsed is None or (isinstance(parsed[0], uuid.UUID) and parsed[1] >= 0)


# A session refreshed every second for 31 years stays below the 9 digits the parser admits.
@given(generation=st.integers(0, 999_999_999), seed=st.text(min_size=1, max_size=40))
def test_a_refresh_token_names_its_session_and_generation(generation, seed):
    session_id = uuid.uuid4()
    token = tokens.refresh_token_for("secret", session_id, generation, seed)
    assert tokens.parse_refresh_token(token) == (session_id, generation)


@given(st.text(max_size=200))
def test_access_token_reading_never_raises_on_junk(text):
    assert tokens.read_access_token("secret", text) is None


# --- signatures -----------------------------------------------------------------------------------


@given(body=st.binary(max_size=2048), api_key=st.text(min_size=1, max_size=60))
def test_the_svc_signature_is_the_hex_hmac_sha256_of_the_body_bytes(body, api_key):
    expected = hmac.new(api_key.encode(), body, hashlib.sha256).hexdigest()
    assert svc_signature(api_key, body) == expected


@given(
    body=st.text(max_size=2048),
    secret=st.binary(min_size=1, max_size=64),
    message_id=st.text(st.characters(codec="ascii"), min_size=1, max_size=40),
    timestamp=st.integers(min_value=0, max_value=2**34),
)
def test_the_standard_signature_verifies_with_the_reference_library(
    body, secret, message_id, timestamp
):
    whsec = "whsec_" + base64.b64encode(secret).decode()
    signature = standard_signature(whsec, message_id, timestamp, body.encode())
    at = datetime.fromtimestamp(timestamp, tz=UTC)
    assert signature == Webhook(whsec).sign(message_id, at, body)


# --- redaction's shortcut -------------------------------------------------------------------------

# Names as reporters' pages send them, secrets in every spelling `canonical` folds, and the
# spellings a text-only check could miss: encoded, with control characters, non-ASCII.
_NAMES = st.one_of(
    st.sampled_from(
        [
            "accept",
            "x-request-id",
            "content-type",
            "include",
            "page",
            "user",
            "body",
            "Authorization",
            "x_api_key",
            "Set-Cookie",
            "access_token",
            "Access-Token",
            " token ",
            "+token",
            "to+ken",
            "%74oken",
            "tok\x00en",
            "token\x7f",
            "\u212aey",
            "sessionid",
            "requestBody",
            "cc",
            "sig",
            "key",
            "x.y",
        ]
    ),
    st.text(max_size=8),
)
_VALUES = st.one_of(
    st.text(max_size=12), st.sampled_from(["[redacted]", "***", "a@b"]), st.integers(), st.none()
)
_URLS = st.builds(
    lambda base, pairs: (
        base + "".join(f"{'&' if i else '?'}{k}={v}" for i, (k, v) in enumerate(pairs))
    ),
    st.sampled_from(["https://shop.example/a", "https://u:p@shop.example/b", "/cart", "#/r"]),
    st.lists(st.tuples(_NAMES, st.text(alphabet="ab1*", max_size=4)), max_size=3),
)
_ENTRIES = st.fixed_dictionaries(
    {"url": _URLS},
    optional={
        "requestHeaders": st.dictionaries(_NAMES, _VALUES, max_size=3),
        "responseHeaders": st.lists(
            st.fixed_dictionaries({"name": _NAMES, "value": _VALUES}), max_size=2
        ),
        "responseBody": st.one_of(
            st.text(max_size=12), st.dictionaries(_NAMES, _VALUES, max_size=2)
        ),
    },
)


@settings(max_examples=300, deadline=None)
@example(logs=[{"url": "/cart?%74oken=a"}], extra=())  # encoded: token
@example(logs=[{"url": "/cart?\u212aey=a"}], extra=())  # Kelvin sign, lower-cased: key
@example(logs=[{"url": "https://u:p@shop.example/"}], extra=())
@example(logs=[{"url": "/cart", "requestHeaders": {"accept": "a\x01b"}}], extra=())
@example(logs=[{"url": "/cart", "requestHeaders": {"accept": "a\x7fb"}}], extra=())
@example(logs=[{"url": "/cart", "responseBody": "4111 1111 1111 1111"}], extra=())
@example(logs=[{"url": "/cart", "requestHeaders": {"x.y": "a"}}], extra=("x.y",))
@given(logs=st.lists(_ENTRIES, max_size=3), extra=st.sampled_from([(), ("sessionid",), ("x.y",)]))
def test_network_entries_are_left_unwalked_only_when_walking_changes_nothing(logs, extra):
    names = frozenset(map(redaction.canonical, extra))
    headers, parameters = redaction.SECRET_HEADERS | names, redaction.SECRET_PARAMETERS | names
    if redaction._nothing_to_redact(json_codec.dumps_bytes(logs), headers | parameters):
        walked = [redaction.redact_network_entry(entry, headers, parameters) for entry in logs]
        assert walked == logs


def test_most_requests_are_left_unwalked():
    logs = [{"url": "https://shop.example/cart?page=2", "requestHeaders": {"accept": "*/*"}}]
    names = redaction.SECRET_HEADERS | redaction.SECRET_PARAMETERS
    assert redaction._nothing_to_redact(json_codec.dumps_bytes(logs), names)
    logs[0]["requestHeaders"]["X-Api-Key"] = "k"
    assert not redaction._nothing_to_redact(json_codec.dumps_bytes(logs), names)


# --- tracking ids ---------------------------------------------------------------------------------

_prefixes = (f"P{n}" for n in itertools.count(10))


def _new_project(client, prefix: str) -> dict:
    response = client.post(
        "/api/v1/projects", json={"name": prefix, "tracking_prefix": prefix}, headers=csrf(client)
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


@WITH_FIXTURES
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["file", "delete"]), st.integers(0, 2), st.integers(0, 50)),
        max_size=25,
    )
)
def test_tracking_ids_count_up_per_project_and_are_never_reused(user_client, steps):
    projects = [_new_project(user_client, next(_prefixes)) for _ in range(3)]
    issued = [[] for _ in projects]  # the model: every number handed out, per project
    alive = [[] for _ in projects]
    for action, which, pick in steps:
        project = projects[which]
        if action == "file":
            response = user_client.post(
                "/api/v1/reports",
                json={"title": "t", "description": "d", "severity": "low", "category": "bug"},
                headers={"X-API-Key": project["apiKey"]},
            )
            assert response.status_code == 201
            tracking_id = response.get_json()["trackingId"]
            assert tracking_id == f"{project['trackingPrefix']}-{len(issued[which]) + 1}"
            issued[which].append(tracking_id)
            alive[which].append(tracking_id)
        elif alive[which]:
            victim = alive[which].pop(pick % len(alive[which]))
            gone = user_client.delete(f"/api/v1/reports/{victim}", headers=csrf(user_client))
            assert gone.status_code == 204
    for which, project in enumerate(projects):
        listed = user_client.get(
            "/api/v1/reports", query_string={"project_id": project["id"], "page_size": 100}
        ).get_json()
        assert sorted(r["trackingId"] for r in listed["items"]) == sorted(alive[which])


# --- the report list against a model --------------------------------------------------------------

WORDS = ["cart", "Checkout", "PAY", "100%", "a_b", "back\\slash", "it's", "crash", "ui"]
FILTERS = ("status", "severity", "category")
SEVERITY_RANK = {"low": 0, "medium": 1, "high": 2, "critical": 3}

reports_strategy = st.lists(
    st.fixed_dictionaries(
        {
            "title": st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
            "description": st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
            "severity": st.sampled_from(list(SEVERITY_RANK)),
            "category": st.sampled_from(["bug", "ui", "crash"]),
            "status": st.sampled_from(["new", "in_progress", "resolved"]),
            "reporter_identifier": st.sampled_from([None, "ada@shop.example", "Grace_H", "100%u"]),
            "screenshot": st.booleans(),
            "assigned": st.booleans(),
        }
    ),
    max_size=10,
)


def _several(values: list[str]):
    return st.lists(st.sampled_from(values), min_size=1, max_size=3).map(",".join)


query_strategy = st.fixed_dictionaries(
    {},
    optional={
        "status": _several(["new", "in_progress", "resolved", "closed"]),
        "severity": _several(list(SEVERITY_RANK)),
        "category": _several(["bug", "ui", "crash"]),
        "assignee": st.sampled_from(["me", "none"]),
        "reporter": st.sampled_from(["ada", "SHOP", "_h", "%", "grace", "x"]),
        "has_screenshot": st.booleans(),
        # Indexes into the reports, turned into their createdAt by the test.
        "created_after": st.integers(0, 9),
        "created_before": st.integers(0, 9),
        "search": st.lists(
            st.sampled_from([*WORDS, "CART", "out", "%", "_", "\\", "'", "zzz"]),
            min_size=1,
            max_size=2,
        ).map(" ".join),
        "sort": st.sampled_from(["-created_at", "created_at", "-severity", "severity"]),
        "page_size": st.integers(1, 4),
        "page": st.integers(1, 4),
    },
)


def _model_matches(report: dict, query: dict) -> bool:
    """The list's filters (docs/api.md §8.2), one by one: several values of a filter are
    alternatives, created_after is inclusive and created_before exclusive, reporter a
    case-insensitive substring."""
    for name in ("status", "severity", "category"):
        if name in query and report[name] not in query[name].split(","):
            return False
    if "assignee" in query and report["assigned"] != (query["assignee"] == "me"):
        return False
    if (
        "reporter" in query
        and query["reporter"].lower() not in (report["reporter_identifier"] or "").lower()
    ):
        return False
    if "has_screenshot" in query and report["screenshot"] != query["has_screenshot"]:
        return False
    if "created_after" in query and report["createdAt"] < query["created_after"]:
        return False
    if "created_before" in query and report["createdAt"] >= query["created_before"]:
        return False
    return all(
        term.lower() in report["title"].lower() or term.lower() in report["description"].lower()
        for term in query.get("search", "").split()
    )


def _model_page(reports: list[dict], query: dict) -> tuple[int, list[str]]:
    """What the list should answer, computed in Python from the rules of docs/api.md §8.2.
    `reports` are in creation order, so their index orders them by creation time."""
    chosen = [(index, r) for index, r in enumerate(reports) if _model_matches(r, query)]
    sort = query.get("sort", "-created_at")
    if sort == "created_at":
        chosen.sort(key=lambda pair: pair[0])
    elif sort == "-created_at":
        chosen.sort(key=lambda pair: -pair[0])
    else:  # severity, ties newest first
        sign = -1 if sort.startswith("-") else 1
        chosen.sort(key=lambda pair: (sign * SEVERITY_RANK[pair[1]["severity"]], -pair[0]))
    size, page = query.get("page_size", 20), query.get("page", 1)
    window = chosen[(page - 1) * size : page * size]
    return len(chosen), [r["id"] for _, r in window]


@WITH_FIXTURES
@given(reports=reports_strategy, queries=st.lists(query_strategy, min_size=1, max_size=4))
def test_filters_search_sort_and_pages_match_a_model(user_client, reports, queries):
    project = _new_project(user_client, next(_prefixes))
    for report in reports:
        fields = {k: report[k] for k in ("title", "description", "severity", "category")}
        if report["reporter_identifier"]:
            fields["reporter_identifier"] = report["reporter_identifier"]
        if report["screenshot"]:
            fields["screenshot_url"] = upload(
                user_client, project["apiKey"], png_bytes()
            ).get_json()["key"]
        created = user_client.post(
            "/api/v1/reports", json=fields, headers={"X-API-Key": project["apiKey"]}
        ).get_json()
        report["id"], report["createdAt"] = created["id"], created["createdAt"]
        changes = {"status": report["status"]} if report["status"] != "new" else {}
        if report["assigned"]:
            changes["assignee_id"] = user_client.user["id"]
        if changes:
            user_client.patch(
                f"/api/v1/reports/{created['id']}", json=changes, headers=csrf(user_client)
            )
    for query in queries:
        query = _with_times(query, reports)
        answer = user_client.get(
            "/api/v1/reports", query_string={**query, "project_id": project["id"]}
        ).get_json()
        total, ids = _model_page(reports, query)
        assert answer["total"] == total, query
        assert [item["id"] for item in answer["items"]] == ids, query


def _with_times(query: dict, reports: list[dict]) -> dict:
    """The drawn indexes of created_after / created_before as those reports' createdAt (the
    filter is dropped when there is no such report)."""
    query = dict(query)
    for name in ("created_after", "created_before"):
        if name in query:
            index = query.pop(name)
            if index < len(reports):
                query[name] = reports[index]["createdAt"]
    return query


def test_the_model_itself_selects_and_orders():
    """Guards the model test against passing vacuously."""
    reports = [
        {
            "title": "cart crash",
            "description": "x",
            "severity": "high",
            "category": "bug",
            "status": "new",
            "id": "a",
        },
        {
            "title": "ui",
            "description": "Checkout",
            "severity": "low",
            "category": "ui",
            "status": "new",
            "id": "b",
        },
    ]
    assert _model_page(reports, {"search": "CHECK"}) == (1, ["b"])
    assert _model_page(reports, {"sort": "-severity"}) == (2, ["a", "b"])
    assert _model_page(reports, {"page_size": 1, "page": 2}) == (2, ["a"])
    for report, assigned, created in zip(reports, (True, False), ("T1", "T2"), strict=True):
        report.update(reporter_identifier=None, screenshot=assigned, assigned=assigned)
        report["createdAt"] = created
    assert _model_page(reports, {"status": "new,closed", "severity": "low"}) == (1, ["b"])
    assert _model_page(reports, {"assignee": "me"}) == (1, ["a"])
    assert _model_page(reports, {"has_screenshot": False}) == (1, ["b"])
    assert _model_page(reports, {"created_after": "T2"}) == (1, ["b"])
    assert _model_page(reports, {"created_before": "T2"}) == (1, ["a"])
