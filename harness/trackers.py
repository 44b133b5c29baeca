"""One local HTTPS server that answers as GitHub, GitLab, Jira (Cloud and Server) and Linear do,
for the calls svc makes (docs/integrations.md), as their public API references describe them:
the paths, the authentication each expects, the JSON of an issue, their error bodies and their
rate-limit answers. It keeps the issues it made, so closing and reopening change them, and it
records every request as the tracker would see it.

    tracker = FakeTrackers(ca).start()
    tracker.refuse(429, retry_after=1)      # the next call is refused so, then all is well again
    tracker.requests[-1].json()
    headers, body = tracker.delivery("github", remote_id, closed=True)  # its webhook, unsigned

Deliveries are shaped as each tracker's webhook reference documents them: GitHub's `issues`
event (the issue with its API and page addresses, the repository, the sender), GitLab's Issue
Hook (`object_attributes`, the project, `changes`), Jira's `jira:issue_updated` (the issue's
`self`, its status and category, the changelog's items), Linear's `Issue` update (`data`,
`updatedFrom`, `webhookTimestamp` in milliseconds).
"""

import base64
import collections
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote

from harness.receiver import https_server

TOKEN = "trk_s3cr3t-token-0123456789"
JIRA_EMAIL = "dev@example.com"
# Jira's statuses, each in its category: `done` holds more than "Done".
JIRA_TRANSITIONS = [
    {"id": "11", "name": "To Do", "to": {"name": "To Do", "statusCategory": {"key": "new"}}},
    {
        "id": "21",
        "name": "In Progress",
        "to": {"name": "In Progress", "statusCategory": {"key": "indeterminate"}},
    },
    {"id": "31", "name": "Done", "to": {"name": "Done", "statusCategory": {"key": "done"}}},
    {
        "id": "41",
        "name": "Cancelled",
        "to": {"name": "Cancelled", "statusCategory": {"key": "done"}},
    },
]
LINEAR_STATES = [
    {"id": "st-backlog", "name": "Backlog", "type": "backlog", "position": 0},
    {"id": "st-progress", "name": "In Progress", "type": "started", "position": 2},
    {"id": "st-done", "name": "Done", "type": "completed", "position": 3},
    {"id": "st-canceled", "name": "Canceled", "type": "canceled", "position": 4},
]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


# Atlassian Document Format: the nodes svc may write and what each may hold (the ADF
# reference's structure, the part of it svc uses).
_ADF_CHILDREN = {
    "doc": {"paragraph", "bulletList", "heading", "codeBlock"},
    "paragraph": {"text", "hardBreak"},
    "heading": {"text"},
    "codeBlock": {"text"},
    "bulletList": {"listItem"},
    "listItem": {"paragraph", "bulletList", "codeBlock"},
}
_ADF_MARKS = {"strong", "em", "code", "link"}


def adf_problems(node, path="doc") -> list[str]:
    """What makes a document invalid ADF (empty if none)."""
    problems = []
    if path == "doc" and (node.get("version") != 1 or node.get("type") != "doc"):
        problems.append("doc: version 1 and type doc required")
    kind = node.get("type")
    if kind == "text":
        if not isinstance(node.get("text"), str) or not node["text"]:
            problems.append(f"{path}: a text node needs non-empty text")
        for mark in node.get("marks", []):
            if mark.get("type") not in _ADF_MARKS:
                problems.append(f"{path}: unknown mark {mark.get('type')}")
            if mark.get("type") == "link" and not (mark.get("attrs") or {}).get("href"):
                problems.append(f"{path}: a link needs attrs.href")
        return problems
    if kind == "hardBreak":
        return problems
    if kind not in _ADF_CHILDREN:
        return [f"{path}: unknown node {kind}"]
    if kind == "heading" and (node.get("attrs") or {}).get("level") not in range(1, 7):
        problems.append(f"{path}: a heading needs attrs.level 1..6")
    content = node.get("content", [])
    if kind in ("bulletList", "listItem") and not content:
        problems.append(f"{path}: {kind} needs content")
    for index, child in enumerate(content):
        if child.get("type") not in _ADF_CHILDREN[kind]:
            problems.append(f"{path}.{index}: {child.get('type')} not allowed in {kind}")
        else:
            problems += adf_problems(child, f"{path}.{index}")
    return problems


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _handle(self):
        server: FakeTrackers = self.server.trackers
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        request = Request(self.command, self.path, dict(self.headers.items()), body)
        server.record(request)
        refusal = server.next_refusal()
        if refusal is not None:
            status, answer, headers = refusal
            return self._answer(status, answer, headers)
        try:
            status, answer = server.route(request)
        except (KeyError, ValueError, TypeError) as exc:
            status, answer = 400, {"message": f"Bad request: {exc}"}
        missing = server.next_missing()
        if missing is not None and isinstance(answer, dict):
            answer = {key: value for key, value in answer.items() if key != missing}
        self._answer(status, answer)

    do_GET = do_POST = do_PUT = do_PATCH = _handle

    def _answer(self, status, answer, headers=None):
        data = b"" if answer is None else json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class FakeTrackers:
    def __init__(self, ca):
        self._server = https_server(ca, _Handler)
        self._server.trackers = self
        self._lock = threading.Lock()
        self._refusals = collections.deque()
        self._missing = collections.deque()
        self.requests: list[Request] = []
        self.issues: dict[str, dict] = {}  # stable id -> the issue as the tracker keeps it
        self._next = 100
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "FakeTrackers":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def refuse(self, status: int, answer=None, retry_after: int | None = None) -> None:
        """The next call is answered so (in the tracker's own error shape when not given)."""
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        with self._lock:
            self._refusals.append(
                (status, answer or {"message": f"refused with {status}"}, headers)
            )

    def answer_without(self, field: str) -> None:
        """The next answer lacks `field` (a tracker's API that changed, or a proxy's page)."""
        with self._lock:
            self._missing.append(field)

    def next_missing(self):
        with self._lock:
            return self._missing.popleft() if self._missing else None

    def next_refusal(self):
        with self._lock:
            return self._refusals.popleft() if self._refusals else None

    def calls(self, method: str | None = None, pattern: str = "") -> list[Request]:
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and re.search(pattern, r.path)
        ]

    def _number(self) -> int:
        with self._lock:
            self._next += 1
            return self._next

    # --- deliveries ------------------------------------------------------------------------------

    def delivery(self, kind: str, remote_id: str, closed: bool, **change) -> tuple[dict, dict]:
        """(headers without the signature or delivery id, body) of the tracker's webhook for
        one of its issues, closed or reopened (Jira: `status`, `key`, `no_status` change it)."""
        issue = self.issues[remote_id]
        return getattr(self, f"_{kind.removesuffix('-server')}_delivery")(issue, closed, **change)

    def _github_delivery(self, issue, closed, **_change):
        state = "closed" if closed else "open"
        body = {
            "action": "closed" if closed else "reopened",
            "issue": {
                **issue,
                "state": state,
                "state_reason": "completed" if closed else "reopened",
                "user": {"login": "ada", "id": 1},
            },
            "repository": {
                "id": 1,
                "full_name": issue["repository_url"].split("/repos/", 1)[1],
                "url": issue["repository_url"],
            },
            "sender": {"login": "ada", "id": 1, "type": "User"},
        }
        return {"X-GitHub-Event": "issues", "X-GitHub-Hook-ID": "1"}, body

    def _gitlab_delivery(self, issue, closed, **_change):
        state = "closed" if closed else "opened"
        path = issue["web_url"].split("/-/issues/")[0].split("/", 3)[3]
        attributes = {
            **issue,
            "state": state,
            "action": "close" if closed else "reopen",
            "url": issue["web_url"],
        }
        body = {
            "object_kind": "issue",
            "event_type": "issue",
            "user": {"id": 1, "username": "ada", "name": "Ada"},
            "project": {
                "id": issue["project_id"],
                "path_with_namespace": path,
                "web_url": issue["web_url"].split("/-/issues/")[0],
            },
            "object_attributes": attributes,
            "changes": {
                "state_id": {"previous": 1 if closed else 2, "current": 2 if closed else 1}
            },
        }
        return {"X-Gitlab-Event": "Issue Hook", "X-Gitlab-Event-UUID": str(uuid.uuid4())}, body

    def _jira_delivery(self, issue, closed, **change):
        status = change.get("status") or ("Done" if closed else "In Progress")
        category = "done" if status in ("Done", "Cancelled") else "indeterminate"
        items = (
            []
            if change.get("no_status")
            else [
                {
                    "field": "status",
                    "fieldtype": "jira",
                    "from": "3",
                    "fromString": issue.get("status", "To Do"),
                    "to": "10001",
                    "toString": status,
                }
            ]
        )
        body = {
            "timestamp": int(time.time() * 1000),
            "webhookEvent": "jira:issue_updated",
            "issue_event_type_name": "issue_generic",
            "user": {"accountId": "5b10a2844c20165700ede21g", "displayName": "Ada"},
            "issue": {
                "id": issue["id"],
                "self": issue["self"],
                "key": change.get("key", issue["key"]),
                "fields": {
                    "status": {
                        "name": status,
                        "id": "10001",
                        "statusCategory": {"id": 3, "key": category, "name": category.title()},
                    }
                },
            },
            "changelog": {"id": "10100", "items": items},
        }
        return {}, body

    def _linear_delivery(self, issue, closed, **_change):
        state = next(
            s for s in LINEAR_STATES if s["type"] == ("completed" if closed else "started")
        )
        now = time.time()
        body = {
            "action": "update",
            "type": "Issue",
            "createdAt": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now)),
            "data": {
                "id": issue["id"],
                "identifier": issue["identifier"],
                "url": issue["url"],
                "title": issue["title"],
                "state": {"id": state["id"], "name": state["name"], "type": state["type"]},
                "team": {"id": issue["teamId"], "key": "ENG"},
            },
            "updatedFrom": {"stateId": "st-backlog", "updatedAt": "2026-11-26T10:00:00.000Z"},
            "url": issue["url"],
            "organizationId": "org-1",
            "webhookTimestamp": int(now * 1000),
            "webhookId": "wh-1",
        }
        return {"Linear-Event": "Issue"}, body

    # --- routing --------------------------------------------------------------------------------

    def route(self, request: Request):
        path = request.path
        if path.startswith("/api/v3/"):
            return self._github(request, path.removeprefix("/api/v3"))
        if path.startswith("/api/v4/"):
            return self._gitlab(request, path.removeprefix("/api/v4"))
        if path.startswith("/rest/api/"):
            return self._jira(request, path)
        if path == "/graphql":
            return self._linear(request)
        return 404, {"message": "Not Found"}

    def _github(self, request: Request, path: str):
        headers = request.headers
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, {
                "message": "Bad credentials",
                "documentation_url": "https://docs.github.com/rest",
            }
        repo = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/issues(?:/(\d+))?)?", path)
        if repo is None or repo[1] == "missing":
            return 404, {
                "message": "Not Found",
                "documentation_url": "https://docs.github.com/rest",
            }
        full_name = f"{repo[1]}/{repo[2]}"
        if repo[3] is None and request.method == "GET":
            return 200, {"id": 1, "full_name": full_name, "has_issues": True}
        if repo[4] is None and request.method == "POST":
            data = request.json()
            if not data.get("title"):
                return 422, {
                    "message": "Validation Failed",
                    "errors": [{"resource": "Issue", "field": "title", "code": "missing_field"}],
                }
            number = self._number()
            issue = {
                "id": 9000 + number,
                "node_id": f"I_{number}",
                "number": number,
                "title": data["title"],
                "body": data.get("body"),
                "state": "open",
                # GitHub Enterprise Server: pages on the host, the API under /api/v3.
                "html_url": f"{self.base}/{full_name}/issues/{number}",
                "repository_url": f"{self.base}/api/v3/repos/{full_name}",
                "url": f"{self.base}/api/v3/repos/{full_name}/issues/{number}",
                "labels": [{"name": name} for name in data.get("labels", [])],
            }
            self.issues[str(issue["id"])] = issue
            return 201, issue
        if repo[4] is not None and request.method == "PATCH":
            issue = next(i for i in self.issues.values() if i.get("number") == int(repo[4]))
            issue["state"] = request.json()["state"]
            return 200, issue
        return 404, {"message": "Not Found"}

    def _gitlab(self, request: Request, path: str):
        if request.headers.get("PRIVATE-TOKEN") != TOKEN:
            return 401, {"message": "401 Unauthorized"}
        match = re.fullmatch(r"/projects/([^/]+)(/issues(?:/(\d+))?)?", path)
        if match is None:
            return 404, {"message": "404 Not Found"}
        project = unquote(match[1])
        if project.startswith("missing"):
            return 404, {"message": "404 Project Not Found"}
        project_id = 4242
        if match[2] is None:
            return 200, {"id": project_id, "path_with_namespace": project}
        if match[3] is None and request.method == "POST":
            data = request.json()
            iid = self._number()
            issue = {
                "id": 7000 + iid,
                "iid": iid,
                "project_id": project_id,
                "title": data["title"],
                "description": data.get("description"),
                "state": "opened",
                "labels": [label for label in data.get("labels", "").split(",") if label],
                # Self-managed GitLab: pages on the host, the API under /api/v4.
                "web_url": f"{self.base}/{project}/-/issues/{iid}",
            }
            self.issues[str(issue["id"])] = issue
            return 201, issue
        if match[3] is not None and request.method == "PUT":
            issue = next(i for i in self.issues.values() if i.get("iid") == int(match[3]))
            event = request.json()["state_event"]
            issue["state"] = "closed" if event == "close" else "opened"
            return 200, issue
        return 404, {"message": "404 Not Found"}

    def _jira(self, request: Request, path: str):
        version = path.split("/")[3]
        auth = request.headers.get("Authorization", "")
        cloud_auth = "Basic " + base64.b64encode(f"{JIRA_EMAIL}:{TOKEN}".encode()).decode()
        if (version == "3" and auth != cloud_auth) or (
            version == "2" and auth != f"Bearer {TOKEN}"
        ):
            return 401, {
                "errorMessages": [
                    "You are not authenticated. Authentication required to perform this operation."
                ],
                "errors": {},
            }
        rest = path.split(f"/rest/api/{version}", 1)[1]
        if rest.startswith("/project/"):
            key = rest.removeprefix("/project/")
            if key == "MISSING":
                return 404, {
                    "errorMessages": [f"No project could be found with key '{key}'."],
                    "errors": {},
                }
            return 200, {"id": "10000", "key": key, "name": "Web Shop"}
        if rest == "/issue" and request.method == "POST":
            fields = request.json()["fields"]
            description = fields.get("description")
            if version == "3":
                problems = (
                    adf_problems(description)
                    if isinstance(description, dict)
                    else ["not a document"]
                )
                if problems:
                    return 400, {
                        "errorMessages": [],
                        "errors": {
                            "description": "Operation value must be an Atlassian Document: "
                            + "; ".join(problems[:3])
                        },
                    }
            elif not isinstance(description, str):
                return 400, {
                    "errorMessages": [],
                    "errors": {"description": "Operation value must be a string"},
                }
            number = self._number()
            key = f"{fields['project']['key']}-{number}"
            issue = {
                "id": str(10000 + number),
                "key": key,
                "self": f"{self.base}/rest/api/{version}/issue/{10000 + number}",
                "fields": fields,
                "status": "To Do",
            }
            self.issues[issue["id"]] = issue
            return 201, {"id": issue["id"], "key": key, "self": issue["self"]}
        match = re.fullmatch(r"/issue/(\d+)/transitions", rest)
        if match and match[1] in self.issues:
            if request.method == "GET":
                return 200, {"transitions": JIRA_TRANSITIONS}
            chosen = request.json()["transition"]["id"]
            transition = next(t for t in JIRA_TRANSITIONS if t["id"] == chosen)
            self.issues[match[1]]["status"] = transition["to"]["name"]
            return 204, None
        return 404, {
            "errorMessages": ["Issue does not exist or you do not have permission to see it."],
            "errors": {},
        }

    def _linear(self, request: Request):
        if request.headers.get("Authorization") != TOKEN:
            return 400, {
                "errors": [
                    {
                        "message": "Authentication required, not authenticated",
                        "extensions": {"code": "AUTHENTICATION_ERROR"},
                    }
                ]
            }
        document = request.json()
        query, variables = document["query"], document.get("variables") or {}
        if "issueCreate" in query:
            issue_input = variables["input"]
            number = self._number()
            issue = {
                "id": f"lin-{number:08d}-0000-4000-8000-000000000000",
                "identifier": f"ENG-{number}",
                # Linear's pages are on linear.app, under the workspace's url key.
                "url": f"https://linear.app/acme/issue/ENG-{number}/checkout-fails",
                "state": {"type": "backlog"},
                "title": issue_input["title"],
                "description": issue_input.get("description"),
                "teamId": issue_input["teamId"],
            }
            self.issues[issue["id"]] = issue
            answer = {key: issue[key] for key in ("id", "identifier", "url", "state")}
            return 200, {"data": {"issueCreate": {"success": True, "issue": answer}}}
        if "states" in query:
            return 200, {"data": {"team": {"states": {"nodes": LINEAR_STATES}}}}
        if "issueUpdate" in query:
            issue = self.issues.get(variables["id"])
            if issue is None:
                return 200, {
                    "data": None,
                    "errors": [
                        {
                            "message": "Entity not found: Issue",
                            "extensions": {"code": "INVALID_INPUT"},
                        }
                    ],
                }
            state = next(s for s in LINEAR_STATES if s["id"] == variables["input"]["stateId"])
            issue["state"] = {"type": state["type"], "name": state["name"]}
            return 200, {"data": {"issueUpdate": {"success": True}}}
        if "viewer" in query:
            return 200, {"data": {"viewer": {"id": "user-1", "name": "Ada"}}}
        return 400, {"errors": [{"message": "Unknown query"}]}
