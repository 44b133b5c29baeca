import json
import uuid

from marshmallow import (
    EXCLUDE,
    Schema,
    ValidationError,
    fields,
    post_load,
    pre_load,
    validate,
)

from svc import i18n
from svc.errors import HoneypotHit
from svc.models import CATEGORIES, SEVERITIES, STATUSES
from svc.models.reproductions import DONE, QUEUED, RUNNING, VERDICTS
from svc.schemas.base import (
    InSchema,
    OutSchema,
    PageQuery,
    QueryTime,
    Text,
    Timestamp,
    page_of,
)
from svc.schemas.integrations import ExternalIssueOut

MAX_LOG_ENTRIES = 1000
MAX_METADATA_KEYS = 100
MAX_METADATA_DEPTH = 5
MAX_METADATA_BYTES = 64 * 1024
HONEYPOT_FIELDS = ("hp_field", "hpField")
SORTS = ("created_at", "-created_at", "updated_at", "-updated_at", "severity", "-severity")


def _depth(value) -> int:
    """Levels of objects and arrays: {} is 1, {"a": {}} is 2, a scalar is 0."""
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    return 0


def validate_metadata(metadata: dict) -> None:
    if len(metadata) > MAX_METADATA_KEYS:
        raise ValidationError(f"At most {MAX_METADATA_KEYS} keys.")
    if any(not 1 <= len(key) <= 64 for key in metadata):
        raise ValidationError("Keys must be 1 to 64 characters long.")
    if _depth(metadata) > MAX_METADATA_DEPTH:
        raise ValidationError(f"Nested deeper than {MAX_METADATA_DEPTH} levels.")
    if len(json.dumps(metadata, separators=(",", ":")).encode()) > MAX_METADATA_BYTES:
        raise ValidationError(f"Larger than {MAX_METADATA_BYTES} bytes serialised.")


class Objects(fields.List):
    """A JSON array of objects, kept as sent: the captured logs and actions. Checked and written
    with one loop instead of a marshmallow field per entry, which cost more than the rest of a
    report's creation. (A List of Dict still, so the OpenAPI description says what it is.)"""

    def __init__(self, **kwargs):
        super().__init__(fields.Dict(), **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, list):
            raise self.make_error("invalid")
        not_objects = {
            index: [self.inner.error_messages["invalid"]]
            for index, item in enumerate(value)
            if not isinstance(item, dict)
        }
        if not_objects:
            raise ValidationError(not_objects)
        return value

    def _serialize(self, value, attr, obj, **kwargs):
        return value


def _log_field():
    return Objects(load_default=list, validate=validate.Length(max=MAX_LOG_ENTRIES))


def _screenshot_key_field():
    return fields.String(allow_none=True, load_default=None, validate=validate.Length(max=255))


class ReportCreateIn(InSchema):
    """The widget's report. Unknown top-level fields are ignored, so a newer widget's report is
    never refused by an older server."""

    class Meta:
        unknown = EXCLUDE

    @pre_load
    def reject_unstorable_strings(self, data, **kwargs):
        """A locale that is no language tag is never refused (contract v6), even one that could
        not be stored (a NUL): dropped before the check, it is left to Accept-Language."""
        locale = data.get("locale") if isinstance(data, dict) else None
        if isinstance(locale, str) and i18n.usable(locale) is None:
            data = {**data, "locale": None}
        return super().reject_unstorable_strings(data, **kwargs)

    @pre_load
    def reject_honeypot(self, data, **kwargs):
        """A widget's hidden field that people never see and form-filling bots fill in: a hit is
        refused before anything else is checked, so a bot learns nothing from field errors."""
        if isinstance(data, dict) and any(
            isinstance(data.get(name), str) and data[name] for name in HONEYPOT_FIELDS
        ):
            raise HoneypotHit()
        return data

    title = Text(required=True, validate=validate.Length(min=1, max=200))
    # Required, but may be empty (docs/api.md §8.1): widgets treat it as optional and send "".
    description = fields.String(required=True, validate=validate.Length(max=20_000))
    severity = fields.String(required=True, validate=validate.OneOf(SEVERITIES))
    category = fields.String(required=True, validate=validate.OneOf(CATEGORIES))
    reporter_identifier = fields.String(
        allow_none=True, load_default=None, validate=validate.Length(max=320)
    )
    screenshot_url = _screenshot_key_field()
    annotated_screenshot_url = _screenshot_key_field()
    replay_key = _screenshot_key_field()
    # The reporter's language: anything that is no BCP 47 tag is left to Accept-Language, then
    # "en" (svc.i18n), never refused.
    locale = fields.Raw(allow_none=True, load_default=None)
    console_logs = _log_field()
    network_logs = _log_field()
    user_actions = _log_field()
    metadata = fields.Dict(keys=fields.String(), load_default=dict, validate=validate_metadata)


class DuplicateOfIn(InSchema):
    # The primary: its tracking id or id, in the report's project.
    target = fields.String(required=True, validate=validate.Length(min=1, max=64))


class ReportUpdateIn(InSchema):
    status = fields.String(validate=validate.OneOf(STATUSES))
    severity = fields.String(validate=validate.OneOf(SEVERITIES))
    category = fields.String(validate=validate.OneOf(CATEGORIES))
    title = Text(validate=validate.Length(min=1, max=200))
    description = fields.String(validate=validate.Length(max=20_000))
    assignee_id = fields.UUID(allow_none=True)


class OneOrMore(fields.String):
    """Values separated by commas, each one of `choices`: `status=new,in_progress`."""

    def __init__(self, choices: tuple[str, ...], **kwargs):
        super().__init__(**kwargs)
        self.choices = choices

    def _deserialize(self, value, attr, data, **kwargs) -> list[str]:
        items = [
            item.strip() for item in super()._deserialize(value, attr, data, **kwargs).split(",")
        ]
        if not all(item in self.choices for item in items):
            raise ValidationError(f"One or more of {', '.join(self.choices)}, separated by commas.")
        return list(dict.fromkeys(items))


class Assignee(fields.String):
    """`me`, `none`, or a user's id."""

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if text in ("me", "none"):
            return text
        try:
            return uuid.UUID(text)
        except ValueError:
            raise ValidationError("me, none, or a user's id.") from None


class ReportFilterQuery(InSchema):
    """The list's filters (docs/api.md §8.2), shared by the list and the export."""

    project_id = fields.UUID()
    status = OneOrMore(STATUSES)
    severity = OneOrMore(SEVERITIES)
    category = OneOrMore(CATEGORIES)
    assignee = Assignee()
    assignee_id = fields.UUID()  # the older name of assignee=<id>
    created_after = QueryTime()
    created_before = QueryTime()
    reporter = fields.String(validate=validate.Length(min=1, max=320))
    has_screenshot = fields.Boolean()
    linked = fields.Boolean()  # has an issue in a tracker (docs/api.md §15)
    signature = fields.String(validate=validate.Length(min=1, max=64))  # one bug's reports
    # Reports whose last run on staging said reproduced (true) or not reproduced (false).
    reproduced = fields.Boolean()
    # Reports marked duplicates of another (docs/api.md §8.11): with the rest, left out, alone.
    duplicates = fields.String(validate=validate.OneOf(("include", "exclude", "only")))
    search = fields.String(validate=validate.Length(max=500))

    @post_load
    def one_assignee(self, data, **kwargs):
        if "assignee_id" in data:
            if "assignee" in data:
                raise ValidationError("Give assignee or assignee_id, not both.", "assignee_id")
            data["assignee"] = data.pop("assignee_id")
        return data


class ExportQuery(ReportFilterQuery):
    class Meta:
        unknown = EXCLUDE  # as the list: its page and sort may come along, and mean nothing here

    format = fields.String(load_default="csv", validate=validate.OneOf(("csv", "ndjson")))


class ExportJobIn(ReportFilterQuery):
    """An export job's body: the list's filters (the project is the path's) and the format."""

    class Meta:
        exclude = ("project_id",)

    format = fields.String(load_default="csv", validate=validate.OneOf(("csv", "ndjson")))


class ExportJobOut(OutSchema):
    id = fields.UUID(required=True)
    project_id = fields.UUID(required=True)
    status = fields.String(required=True)
    format = fields.String(required=True)
    # Reports matching when the job started (null until then) and written so far.
    total = fields.Integer(required=True, allow_none=True)
    written = fields.Integer(required=True)
    size = fields.Integer(required=True, allow_none=True)
    error = fields.String(required=True, allow_none=True)
    created_at = Timestamp(required=True)
    started_at = Timestamp(required=True, allow_none=True)
    finished_at = Timestamp(required=True, allow_none=True)
    expires_at = Timestamp(required=True)
    download_url = fields.Method("_download_url", required=True, allow_none=True)

    def _download_url(self, job) -> str | None:
        return f"/api/v1/exports/{job.id}/file" if job.status == "done" else None


class ReportListQuery(PageQuery, ReportFilterQuery):
    sort = fields.String(load_default="-created_at", validate=validate.OneOf(SORTS))


class ReportRefOut(OutSchema):
    id = fields.UUID(required=True)
    tracking_id = fields.String(required=True)


class ReportSummaryOut(OutSchema):
    """A report in a list: everything but the captured arrays."""

    id = fields.UUID(required=True)
    project_id = fields.UUID(required=True)
    tracking_id = fields.String(required=True)
    title = fields.String(required=True)
    description = fields.String(required=True)
    severity = fields.String(required=True, validate=validate.OneOf(SEVERITIES))
    category = fields.String(required=True, validate=validate.OneOf(CATEGORIES))
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    reporter_identifier = fields.String(required=True, allow_none=True)
    screenshot_url = fields.String(required=True, allow_none=True, attribute="screenshot_key")
    annotated_screenshot_url = fields.String(
        required=True, allow_none=True, attribute="annotated_screenshot_key"
    )
    metadata = fields.Dict(required=True, attribute="meta")
    assignee_id = fields.UUID(required=True, allow_none=True)
    # Reports of one project with one signature are one bug's (docs/api.md §8.9); null until
    # the fan-out has signed a report just filed.
    signature = fields.String(required=True, allow_none=True)
    # Duplicates (docs/api.md §8.11): the report this one was merged into, or null; how many
    # were merged into this one, and how many people reported it (its reporter and theirs).
    duplicate_of = fields.Nested(ReportRefOut, required=True, allow_none=True)
    duplicate_count = fields.Integer(required=True)
    reporter_count = fields.Integer(required=True)
    created_at = Timestamp(required=True)
    updated_at = Timestamp(required=True)


RUN_STATUSES = (QUEUED, RUNNING, DONE)


class FailedStepOut(OutSchema):
    index = fields.Integer(required=True)
    reason = fields.String(required=True)


class UserRefOut(OutSchema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)


class ReproductionOut(OutSchema):
    """A run of the report's steps on the staging origin (docs/api.md §20)."""

    id = fields.UUID(required=True)
    status = fields.String(required=True, validate=validate.OneOf(RUN_STATUSES))
    verdict = fields.String(required=True, allow_none=True, validate=validate.OneOf(VERDICTS))
    # What recurred, in the words of a group's label ("console: typeerror: ...").
    evidence = fields.List(fields.String(), required=True)
    failed_step = fields.Nested(FailedStepOut, required=True, allow_none=True)
    steps_run = fields.Integer(required=True)
    requests_blocked = fields.Integer(required=True)
    duration_ms = fields.Integer(required=True, allow_none=True)
    auto = fields.Boolean(required=True)
    created_at = Timestamp(required=True)
    started_at = Timestamp(required=True, allow_none=True)
    finished_at = Timestamp(required=True, allow_none=True)
    requested_by = fields.Nested(UserRefOut, required=True, allow_none=True)
    trace_url = fields.Method("_trace_url", required=True, allow_none=True)
    screenshot_url = fields.Method("_screenshot_url", required=True, allow_none=True)

    def _trace_url(self, run) -> str | None:
        return f"/api/v1/screenshots/{run.trace_key}" if run.trace_key else None

    def _screenshot_url(self, run) -> str | None:
        return f"/api/v1/screenshots/{run.screenshot_key}" if run.screenshot_key else None


class ReproductionsOut(OutSchema):
    items = fields.List(fields.Nested(ReproductionOut), required=True)
    # Why this service cannot run reports now (no browser...), or null.
    unavailable = fields.String(required=True, allow_none=True)


class ReproductionQueuedOut(OutSchema):
    id = fields.UUID(required=True)
    status = fields.String(required=True)


class ReportOut(ReportSummaryOut):
    """The full report, with its captured console, network and user-action logs."""

    # Its last finished run on the staging origin (docs/api.md §20), or null.
    last_reproduction = fields.Nested(ReproductionOut, required=True, allow_none=True)

    console_logs = Objects(required=True, attribute="detail.console_logs")
    network_logs = Objects(required=True, attribute="detail.network_logs")
    user_actions = Objects(required=True, attribute="detail.user_actions")
    # Where the team reads the replay's events (docs/replay.md); null without one.
    replay_url = fields.String(required=True, allow_none=True, attribute="detail.replay_url")
    # The reporter's language (docs/api.md §8.1).
    locale = fields.String(required=True, attribute="detail.locale")
    external_issues = fields.List(fields.Nested(ExternalIssueOut), required=True)
    # Only in the widget's 201, when the project keeps reporters up to date: the report's
    # status page (docs/reporter-updates.md), never in lists or webhooks.
    status_url = fields.String()
    # Only in the widget's 201: whether the reporter will be mailed a receipt (the project
    # mails them and their identifier is an e-mail address; anything else is kept as a name).
    receipt = fields.Boolean()


ReportPageOut = page_of(ReportSummaryOut, "ReportPageOut", bounded=True)


class GroupsQuery(InSchema):
    project_id = fields.UUID()
    days = fields.Integer(load_default=7, validate=validate.Range(min=1, max=365))
    min_count = fields.Integer(load_default=2, validate=validate.Range(min=1, max=10_000))
    limit = fields.Integer(load_default=10, validate=validate.Range(min=1, max=50))


class ReportTitleOut(ReportRefOut):
    title = fields.String(required=True)


class GroupOut(OutSchema):
    """Reports of one project with one signature (docs/api.md §8.13)."""

    signature = fields.String(required=True)
    project_id = fields.UUID(required=True)
    # What the signature is made from, in words: "console: typeerror: ... @ /assets/app.js".
    label = fields.String(required=True)
    count = fields.Integer(required=True)
    reporter_count = fields.Integer(required=True)
    newest_at = Timestamp(required=True)
    newest = fields.Nested(ReportTitleOut, required=True)


class GroupsOut(OutSchema):
    items = fields.List(fields.Nested(GroupOut), required=True)


class SimilarQuery(InSchema):
    limit = fields.Integer(load_default=5, validate=validate.Range(min=1, max=20))


class SimilarReportOut(OutSchema):
    report = fields.Nested(ReportSummaryOut, required=True)
    # How likely the two are one bug, 0 to 1 (docs/api.md §8.12).
    score = fields.Float(required=True)
    reasons = fields.List(fields.String(), required=True)


class SimilarReportsOut(OutSchema):
    items = fields.List(fields.Nested(SimilarReportOut), required=True)


class ScreenshotOut(Schema):
    key = fields.String(required=True)
