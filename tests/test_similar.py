"""Similar reports (docs/api.md §8.12): the same bug reported in other words ranks first, with
the reasons; never the report itself, never another project's, never its own group. How well it
ranks on a labelled set: bench/similar.py and docs/performance.md."""

from harness.client import create_project, csrf
from tests.helpers import file_report, team_with_project


def error(message: str) -> list[dict]:
    return [{"level": "error", "message": message, "timestamp": 1}]


def similar(client, report, **query) -> list[tuple[str, list[str]]]:
    answer = client.get(f"/api/v1/reports/{report}/similar", query_string=query)
    assert answer.status_code == 200, answer.get_json()
    items = answer.get_json()["items"]
    assert all(0 < item["score"] <= 1 for item in items)
    assert [item["score"] for item in items] == sorted((i["score"] for i in items), reverse=True)
    return [(item["report"]["trackingId"], item["reasons"]) for item in items]


def test_the_same_bug_in_other_words_ranks_first_with_its_reasons(app):
    ada = team_with_project(app)
    other = create_project(ada, name="Blog")

    def file(key, title, description, console=(), page="https://shop.example/checkout"):
        answer = file_report(ada, key, title=title, description=description,
                             console_logs=list(console), metadata={"url": page})  # fmt: skip
        assert answer.status_code == 201
        return answer.get_json()["trackingId"]

    crash = "TypeError: Cannot read properties of undefined (reading 'total') in order 1881"
    first = file(ada.key, "Pay button does nothing", "Nothing happens at checkout.", error(crash))
    file(ada.key, "Newsletter form typo", "It says 'recieve'.", page="https://shop.example/news")
    same_error = file(ada.key, "Can't order", "Stuck.", error(crash.replace("1881", "2231")))
    same_words = file(ada.key, "The pay button does nothing at checkout", "Nothing happens.")
    # Another project's report of the very same bug: never shown.
    file(other["apiKey"], "Pay button does nothing", "Nothing happens at checkout.", error(crash))

    found = similar(ada, first)
    reasons = dict(found[:2])
    assert set(reasons) == {same_error, same_words}
    assert reasons[same_error] == ["same console error", "same page"]
    # Its words alone are evidence enough that it joined the crash's group (docs/api.md §8.9).
    assert reasons[same_words] == ["same page", "same group", "similar words (100 %)"]
    assert first not in [tracking_id for tracking_id, _ in found]
    assert all(tracking_id.startswith("WS-") for tracking_id, _ in found)
    assert len(similar(ada, first, limit=1)) == 1

    # A report just filed, before the fan-out signed it, is compared all the same.
    answer = ada.post(
        "/api/v1/reports",
        json={"title": "Pay button dead", "description": "At checkout.", "severity": "high",
              "category": "bug", "console_logs": error(crash.replace("1881", "7"))},
        headers={"X-API-Key": ada.key},
    )  # fmt: skip
    assert answer.get_json()["signature"] is None
    assert similar(ada, answer.get_json()["trackingId"])[0][0] in (first, same_error)

    for limit in (0, 21, "x"):
        assert ada.get(f"/api/v1/reports/{first}/similar?limit={limit}").status_code == 422
    assert ada.get("/api/v1/reports/WS-99/similar").status_code == 404


def test_a_group_is_not_its_own_match_and_a_duplicate_stands_for_its_primary(app):
    ada = team_with_project(app)
    crash = "TypeError: cart.summary is undefined"
    for _ in range(4):
        assert file_report(ada, ada.key, console_logs=error(crash)).status_code == 201
    marked = ada.post(
        "/api/v1/reports/WS-2/duplicate-of", json={"target": "WS-1"}, headers=csrf(ada)
    )
    assert marked.status_code == 200
    # WS-1's group (WS-2) is not suggested to it; WS-3 and WS-4 are.
    assert sorted(t for t, _ in similar(ada, "WS-1")) == ["WS-3", "WS-4"]
    # To WS-3, WS-2 (a duplicate) is its primary WS-1, once.
    assert sorted(t for t, _ in similar(ada, "WS-3")) == ["WS-1", "WS-4"]
    # To the duplicate, its own primary is no suggestion.
    assert sorted(t for t, _ in similar(ada, "WS-2")) == ["WS-3", "WS-4"]
