"""The `svc` command: `svc --help`, and `svc <command> --help` for each command.

Exit codes: 0 done, 1 an error (the API's `detail` is printed), 2 a usage error, 3 not signed
in or the token refused, 4 not found. `--json` prints what the API answered, for scripts.
"""

import sys
import time
import uuid
import zlib
from datetime import UTC, datetime

import click

from svc.client import settings
from svc.client.http import NOT_FOUND, Api, Failure
from svc.client.output import as_json as json_text
from svc.client.output import emit, fields_table, for_terminal, say, table

STATUSES = ("new", "in_progress", "resolved", "closed")
SEVERITIES = ("low", "medium", "high", "critical")
CATEGORIES = ("bug", "ui", "performance", "crash", "other")
SORTS = ("-created_at", "created_at", "-updated_at", "updated_at", "-severity", "severity")
REPORT_COLUMNS = (
    ("trackingId", "ID"),
    ("status", "STATUS"),
    ("severity", "SEVERITY"),
    ("category", "CATEGORY"),
    ("title", "TITLE"),
    ("createdAt", "CREATED"),
)

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON, for scripts.")


def api() -> Api:
    saved = settings.load()
    return Api(saved.get("url"), saved.get("token"))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="svc", prog_name="svc", message="%(prog)s %(version)s")
@click.option(
    "--insecure",
    is_flag=True,
    help="Send the token over plain http:// to a host other than this machine.",
)
def svc(insecure):
    """The command line of svc, a self-hosted bug-report service.

    Sign in once with `svc login --url https://bugs.example.com` and a personal access token
    (made on the dashboard's Account page); SVC_URL and SVC_TOKEN override what was saved.
    """
    Api.insecure = insecure


# --- signing in ----------------------------------------------------------------------------------


@svc.command()
@click.option("--url", required=True, help="The svc address, e.g. https://bugs.example.com.")
@click.option(
    "--token",
    envvar="SVC_TOKEN",
    help="A personal access token (asked for when not given, or read from a pipe).",
)
@json_option
def login(url, token, as_json):
    """Check a personal access token and keep it, with the address, for the next commands."""
    if token is None:
        # Piped in (`pass svc | svc login ...`): read it; getpass would warn that it cannot
        # hide what a pipe does not show anyway.
        token = (
            click.prompt("Personal access token", hide_input=True)
            if sys.stdin.isatty()
            else sys.stdin.readline()
        )
    me = Api(url, token.strip()).get("/auth/me")
    where = settings.save(url, token.strip())
    emit(as_json, me, lambda: f"Signed in to {url} as {me['name']} <{me['email']}> ({where})")


@svc.command()
def logout():
    """Forget the saved address and token (the token itself stays valid: revoke it with
    `svc tokens revoke`)."""
    click.echo("Signed out." if settings.forget() else "Not signed in.")


@svc.command()
@json_option
def whoami(as_json):
    """Who the token belongs to."""
    me = api().get("/auth/me")
    emit(as_json, me, lambda: f"{me['name']} <{me['email']}> on {settings.load()['url']}")


# --- projects and tokens ------------------------------------------------------------------------


@svc.group()
def projects():
    """Your projects."""


@projects.command("list")
@json_option
def list_projects(as_json):
    """The projects you have a role in."""
    found = api().get("/projects")
    columns = (("id", "ID"), ("trackingPrefix", "PREFIX"), ("name", "NAME"), ("role", "ROLE"))
    emit(as_json, found, lambda: table(found, columns))


@projects.command("show")
@click.argument("project")
@json_option
def show_project(project, as_json):
    """One project, by its id, tracking prefix or name."""
    client = api()
    found = client.get(f"/projects/{project_id(client, project)}")
    emit(
        as_json,
        found,
        lambda: fields_table(
            [
                ("Id", found["id"]),
                ("Name", found["name"]),
                ("Tracking prefix", found["trackingPrefix"]),
                ("Your role", found["role"]),
                ("API key", found["apiKey"]),
                ("Created", found["createdAt"]),
            ]
        ),
    )


@svc.group()
def tokens():
    """Your personal access tokens."""


@tokens.command("list")
@json_option
def list_tokens(as_json):
    """Your tokens, newest first (never their values)."""
    found = api().get("/tokens")
    columns = (
        ("id", "ID"),
        ("name", "NAME"),
        ("tokenHint", "STARTS WITH"),
        ("lastUsedAt", "LAST USED"),
        ("expires", "EXPIRES"),
    )
    now = datetime.now(UTC)
    # An expired token says so: it opens nothing any more.
    shown = [
        {**token, "expires": (token["expiresAt"] or "never")
         + (" (expired)" if token["expiresAt"]
            and datetime.fromisoformat(token["expiresAt"]) < now else "")}
        for token in found
    ]  # fmt: skip
    emit(as_json, found, lambda: table(shown, columns))


@tokens.command("revoke")
@click.argument("token_id")
def revoke_token(token_id):
    """Revoke a token: it stops working at once."""
    api().delete(f"/tokens/{token_id}")
    click.echo(f"Revoked {token_id}.")


# --- reports -------------------------------------------------------------------------------------


def report_filters(command):
    """The list's filters, as options of `reports list` and `reports export`."""
    options = (
        click.option("--project", help="A project's id, tracking prefix or name."),
        click.option("--status", help=f"One or more of {', '.join(STATUSES)}, comma-separated."),
        click.option("--severity", help=f"One or more of {', '.join(SEVERITIES)}."),
        click.option("--category", help=f"One or more of {', '.join(CATEGORIES)}."),
        click.option("--assignee", help="me, none, or a user's id."),
        click.option("--search", help="Words that must all occur in the title or description."),
        click.option("--reporter", help="Part of the reporter's identifier."),
        click.option("--created-after", help="ISO 8601 date or time (inclusive)."),
        click.option("--created-before", help="ISO 8601 date or time (exclusive)."),
    )
    for option in reversed(options):
        command = option(command)
    return command


def filter_params(client: Api, filters: dict) -> dict:
    params = {name: value for name, value in filters.items() if value is not None}
    if "project" in params:
        params["project_id"] = project_id(client, params.pop("project"))
    return params


@svc.group()
def reports():
    """List, read, change, export and watch reports."""


@reports.command("list")
@report_filters
@click.option("--sort", type=click.Choice(SORTS), default="-created_at", show_default=True)
@click.option("--limit", type=click.IntRange(1), default=20, show_default=True)
@click.option("--all", "every", is_flag=True, help="Every page, however many reports.")
@json_option
def list_reports(sort, limit, every, as_json, **filters):
    """Reports of your projects, newest first by default."""
    client = api()
    params = {**filter_params(client, filters), "sort": sort}
    found, total, exact, page = [], None, True, 1
    # A search's total may be a lower bound (totalExact false): then read on to an empty page.
    while total is None or ((len(found) < total or not exact) and (every or len(found) < limit)):
        answer = client.get("/reports", **params, page=page, page_size=100)
        total, exact = answer["total"], answer.get("totalExact", True)
        found += answer["items"]
        if not answer["items"]:
            total, exact = len(found), True  # every one read
            break
        page += 1
    shown = found if every else found[:limit]
    emit(as_json, shown, lambda: table(shown, REPORT_COLUMNS) + _more(len(shown), total, exact))


def _more(shown: int, total: int, exact: bool) -> str:
    if exact and total <= shown:
        return ""
    counted = total if exact else f"more than {total}"
    return f"\n{shown} of {counted} (--limit, or --all for every one)"


@reports.command("show")
@click.argument("reference")
@json_option
def show_report(reference, as_json):
    """One report, by its tracking id (WS-12) or id; its captured logs summarised."""
    client = api()
    report = client.get(f"/reports/{reference}")
    emit(as_json, report, lambda: report_text(report, assignee_of(client, report)))


def counted(number: int, one: str, many: str | None = None) -> str:
    """'1 request', '2 requests'."""
    return f"{number} {one if number == 1 else (many or one + 's')}"


def assignee_of(client: Api, report: dict) -> str | None:
    """The assignee as a person reads it: "Name <e-mail>"."""
    if not report.get("assigneeId"):
        return None
    for member in client.get(f"/projects/{report['projectId']}/members"):
        if member["userId"] == report["assigneeId"]:
            return f"{member['name']} <{member['email']}>"
    return report["assigneeId"]  # no longer a member


def failed_request(entry) -> bool:
    """svc.models.failed_request's rule (the CLI imports nothing of the service; a test holds
    the two equal): no answer (no status, 0) or an error (400 and up)."""
    status = entry.get("status") if isinstance(entry, dict) else None
    try:
        number = float(status)
    except (TypeError, ValueError):
        return True
    return not number or number >= 400 or number != number


def report_text(report: dict, assignee: str | None) -> str:
    consoles = report["consoleLogs"]
    errors = sum(str(entry.get("level", "")).lower() == "error" for entry in consoles)
    requests_ = report["networkLogs"]
    failed = sum(failed_request(entry) for entry in requests_)
    lines = [
        f"{report['trackingId']}  {report['title']}",
        fields_table(
            [
                ("Status", report["status"]),
                ("Severity", report["severity"]),
                ("Category", report["category"]),
                ("Reporter", report["reporterIdentifier"]),
                ("Assignee", assignee),
                ("Reported", report["createdAt"]),
                ("Updated", report["updatedAt"]),
            ]
        ),
        "",
        report["description"] or "(no description)",
        "",
        f"Console: {counted(len(consoles), 'entry', 'entries')}, {counted(errors, 'error')}",
        f"Network: {counted(len(requests_), 'request')}, {failed} failed",
        f"User actions: {len(report['userActions'])}",
        f"Screenshot: {report['screenshotUrl'] or 'none'}",
    ]
    lines += [
        f"Issue: {issue['key']} ({issue['kind']}, {issue['state']}) {issue['url']}"
        for issue in report.get("externalIssues", [])
    ]
    return "\n".join(lines)


@reports.command("update")
@click.argument("reference")
@click.option("--status", type=click.Choice(STATUSES))
@click.option("--severity", type=click.Choice(SEVERITIES))
@click.option("--category", type=click.Choice(CATEGORIES))
@click.option("--title")
@click.option("--assignee", help="An e-mail address of a project member, me, none, or an id.")
@json_option
def update_report(reference, status, severity, category, title, assignee, as_json):
    """Change a report's status, severity, category, title or assignee."""
    client = api()
    changes = {
        name: value
        for name, value in (
            ("status", status),
            ("severity", severity),
            ("category", category),
            ("title", title),
        )
        if value is not None
    }
    if assignee is not None:
        changes["assignee_id"] = assignee_id(client, reference, assignee)
    if not changes:
        raise click.UsageError(
            "Give at least one of --status, --severity, --category, --title, --assignee."
        )
    report = client.patch(f"/reports/{reference}", changes)
    emit(
        as_json,
        report,
        lambda: (
            f"Updated {report['trackingId']}.\n" + report_text(report, assignee_of(client, report))
        ),
    )


@reports.command("issue")
@click.argument("reference")
@click.option(
    "--integration", "name", required=True, help="The integration's name (or id) in the project."
)
@json_option
def create_issue(reference, name, as_json):
    """Create the report's issue in a tracker connected to its project (GitHub, GitLab, Jira,
    Linear)."""
    client = api()
    project = client.get(f"/reports/{reference}")["projectId"]
    integrations = client.get(f"/projects/{project}/integrations")
    chosen = [i for i in integrations if name.strip().lower() in (i["name"].lower(), i["id"])]
    if not chosen:
        known = ", ".join(i["name"] for i in integrations) or "none"
        raise Failure(f"No integration {name} in the report's project (there: {known})", NOT_FOUND)
    issue = client.post(f"/reports/{reference}/issues", {"integration_id": chosen[0]["id"]})
    emit(as_json, issue, lambda: f"Created {issue['key']} in {chosen[0]['name']}: {issue['url']}")


def assignee_id(client: Api, reference: str, assignee: str) -> str | None:
    if assignee == "none":
        return None
    if assignee == "me":
        return client.get("/auth/me")["id"]
    if "@" not in assignee:
        return assignee
    project = client.get(f"/reports/{reference}")["projectId"]
    for member in client.get(f"/projects/{project}/members"):
        if member["email"].lower() == assignee.strip().lower():
            return member["userId"]
    raise Failure(f"{assignee} is not in the report's project", NOT_FOUND)


@reports.command("export")
@report_filters
@click.option(
    "--format", "kind", type=click.Choice(("csv", "ndjson")), default="csv", show_default=True
)
@click.option(
    "--output", "-o", type=click.File("wb"), default="-", help="A file (default: stdout)."
)
def export_reports(kind, output, **filters):
    """Every report the filters choose, as CSV or NDJSON: streamed, or, for more than the
    service sends in one answer, written by an export job whose progress is said on stderr."""
    client = api()
    params = {**filter_params(client, filters), "format": kind}
    try:
        with client.request("GET", "/reports/export", params=params, stream=True) as answer:
            for chunk in answer.iter_content(chunk_size=1 << 16):
                output.write(chunk)
    except Failure as refused:
        if refused.status != 409 or "project_id" not in params:
            raise Failure(
                f"{refused} (give --project to export a project's reports as a job)"
                if refused.status == 409
                else str(refused),
                refused.exit_code,
            ) from None
        _export_job(client, params, output)
    output.flush()


EXPORT_POLL_SECONDS = 1


def _export_job(client: Api, params: dict, output) -> None:
    """POST /projects/{id}/exports, followed to its file, ungzipped as it is written out."""
    project = params.pop("project_id")
    job = client.post(f"/projects/{project}/exports", params)
    while job["status"] in ("queued", "running"):
        if job["total"] is not None:
            click.echo(f"Exporting: {job['written']:,} of {job['total']:,} reports", err=True)
        time.sleep(EXPORT_POLL_SECONDS)
        job = client.get(f"/exports/{job['id']}")
    if job["status"] != "done":
        raise Failure(f"The export failed: {job['error']}")
    click.echo(f"Exported {job['written']:,} reports.", err=True)
    with client.request("GET", f"/exports/{job['id']}/file", stream=True) as answer:
        unpacked = zlib.decompressobj(wbits=31)  # gzip
        for chunk in answer.iter_content(chunk_size=1 << 16):
            output.write(unpacked.decompress(chunk))
        output.write(unpacked.flush())


def _download_command(name: str, file: str, summary: str) -> None:
    """`svc reports <name> WS-12 [-o FILE]`: the report's repro-kit file (docs/repro-kit.md)."""

    @reports.command(name, help=summary)
    @click.argument("reference")
    @click.option(
        "--output", "-o", type=click.File("wb"), default="-", help="A file (default: stdout)."
    )
    def download(reference, output):
        data = api().request("GET", f"/reports/{reference}/{file}").content
        output.write(for_terminal(data) if output.isatty() else data)
        output.flush()


_download_command("har", "har", "The report's network log as a HAR 1.2 file.")
_download_command(
    "repro",
    "repro.spec.ts",
    "A Playwright test that replays the report's clicks, route changes and typed fields.",
)


@reports.command("watch")
@click.option("--project", help="A project's id, tracking prefix or name.")
@click.option(
    "--interval",
    type=click.FloatRange(0.2),
    default=5.0,
    show_default=True,
    help="Seconds between looks.",
)
@click.option("--count", type=click.IntRange(1), help="Stop after this many new reports.")
@json_option
def watch_reports(project, interval, count, as_json):
    """Print new reports as they arrive, until Ctrl-C (or --count of them)."""
    client = api()
    params = {"sort": "-created_at", "page_size": 100}
    if project:
        params["project_id"] = project_id(client, project)
    seen = {item["id"] for item in client.get("/reports", **params)["items"]}
    # On stderr, so that --json stays one object per line; scripts can wait for it.
    say("Watching for new reports; Ctrl-C stops.", err=True)
    shown = 0
    try:
        while count is None or shown < count:
            time.sleep(interval)
            new = [
                item for item in client.get("/reports", **params)["items"] if item["id"] not in seen
            ]
            for item in reversed(new):  # oldest first
                seen.add(item["id"])
                if as_json:
                    click.echo(json_text(item, indent=None))
                else:
                    say(
                        f"{item['createdAt']}  {item['trackingId']}  [{item['severity']}] "
                        f"{item['title']}"
                    )
                shown += 1
                if count is not None and shown >= count:
                    break
    except KeyboardInterrupt:
        pass


def project_id(client: Api, project: str) -> str:
    """A project's id from its id, tracking prefix or name."""
    try:
        return str(uuid.UUID(project))
    except ValueError:
        pass
    for candidate in client.get("/projects"):
        if project.lower() in (candidate["trackingPrefix"].lower(), candidate["name"].lower()):
            return candidate["id"]
    raise Failure(f"No project of yours is called {project}", NOT_FOUND)


# --- coding agents --------------------------------------------------------------------------------


@svc.command()
@click.option("--allow-writes", is_flag=True,
              help="Let the agent change reports (status, comments, assignee, duplicates), "
              "with a token that may (reports:write).")  # fmt: skip
def mcp(allow_writes):
    """svc's MCP server on stdin and stdout, for a coding agent: `claude mcp add svc -- svc mcp`
    (docs/mcp.md). It reads reports as you, with your saved token."""
    from svc.client import mcp_bridge

    saved = settings.load()
    # A refused token would reach the agent as "connection closed": say why here instead.
    api().get("/auth/me")
    mcp_bridge.serve(saved["url"], saved["token"], allow_writes)


# --- running -------------------------------------------------------------------------------------


def main(arguments: list[str] | None = None) -> int:
    """Run one command; its exit code. Expected errors print one line, never a traceback."""
    try:
        result = svc.main(args=arguments, prog_name="svc", standalone_mode=False)
    except Failure as failure:
        say(f"svc: {failure}", err=True)
        return failure.exit_code
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except click.Abort:
        click.echo("Aborted.", err=True)
        return 1
    return result if isinstance(result, int) else 0


def run() -> None:
    sys.exit(main())
