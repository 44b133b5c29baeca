"""Integrations with issue trackers (docs/api.md §15): what a request sends per kind of tracker,
and what the answers show (never the token; the webhook secret once, when it is made)."""

import re

from marshmallow import ValidationError, fields, validate, validates_schema

from svc.config import public_url
from svc.models import CATEGORIES, SEVERITIES
from svc.models.integrations import CLOSE, CREATE, KINDS, REOPEN
from svc.schemas.base import InSchema, OneLine, OutSchema, PageQuery, Timestamp, page_of
from svc.schemas.deliveries import AttemptsOut
from svc.schemas.projects import validate_webhook_url

_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_JIRA_PROJECT = re.compile(r"^[A-Z][A-Z0-9_]{0,9}$")


def _api_url(default: str):
    # A tracker's address is checked as a webhook's is: https (http only where the operator
    # allows it), absolute; svc.webhooks.sender keeps it off private addresses at call time.
    return fields.String(
        load_default=default, validate=[validate.Length(max=2048), validate_webhook_url]
    )


def _labels():
    return fields.List(
        fields.String(validate=validate.Length(min=1, max=100)),
        load_default=list,
        validate=validate.Length(max=20),
    )


class GitHubConfig(InSchema):
    repository = fields.String(
        required=True, validate=validate.Regexp(_REPOSITORY, error="owner/name")
    )
    api_url = _api_url("https://api.github.com")
    labels = _labels()


class GitLabConfig(InSchema):
    # "group/subgroup/name" or the numeric project id.
    project = fields.String(required=True, validate=validate.Length(min=1, max=500))
    api_url = _api_url("https://gitlab.com/api/v4")
    labels = _labels()


class JiraConfig(InSchema):
    site_url = fields.String(
        required=True, validate=[validate.Length(max=2048), validate_webhook_url]
    )
    project_key = fields.String(
        required=True, validate=validate.Regexp(_JIRA_PROJECT, error="A Jira project key: PROJ")
    )
    issue_type = fields.String(load_default="Bug", validate=validate.Length(min=1, max=100))
    # Given: Jira Cloud (Basic e-mail:token, API 3); absent: Server / Data Center (Bearer, API 2).
    email = fields.Email(load_default=None, allow_none=True)


class LinearConfig(InSchema):
    team_id = fields.String(required=True, validate=validate.Length(min=1, max=100))
    api_url = _api_url("https://api.linear.app/graphql")
    label_ids = fields.List(
        fields.String(validate=validate.Length(min=1, max=100)),
        load_default=list,
        validate=validate.Length(max=20),
    )


CONFIGS = {
    "github": GitHubConfig,
    "gitlab": GitLabConfig,
    "jira": JiraConfig,
    "linear": LinearConfig,
}


def load_config(kind: str, config) -> dict:
    """The config of a kind of tracker, checked; errors under `config`."""
    if not isinstance(config, dict):
        raise ValidationError({"config": ["Must be an object."]})
    try:
        return CONFIGS[kind]().load(config)
    except ValidationError as exc:
        raise ValidationError({"config": exc.messages}) from None


class AutoCreateIn(InSchema):
    # Empty: any severity (category).
    severities = fields.List(fields.String(validate=validate.OneOf(SEVERITIES)), load_default=list)
    categories = fields.List(fields.String(validate=validate.OneOf(CATEGORIES)), load_default=list)


# At least 8 characters: a shorter "token" is no tracker's, and svc hides the token wherever a
# tracker echoes it (a 1-character one turned "GitHub" into "Gi[token]Hub").
_TOKEN = {"validate": validate.Length(min=8, max=4000)}


class IntegrationCreateIn(InSchema):
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    name = OneLine(required=True, validate=validate.Length(min=1, max=100))
    config = fields.Dict(required=True)
    token = fields.String(required=True, **_TOKEN)
    auto_create = fields.Nested(AutoCreateIn, load_default=None, allow_none=True)
    sync_status = fields.Boolean(load_default=True)

    @validates_schema
    def config_of_kind(self, data, **kwargs):
        if data.get("kind") in CONFIGS and "config" in data:
            data["config"] = load_config(data["kind"], data["config"])


class IntegrationUpdateIn(InSchema):
    """Any of the fields; `config` keys not sent keep their values (checked with the kind's)."""

    name = OneLine(validate=validate.Length(min=1, max=100))
    config = fields.Dict()
    token = fields.String(**_TOKEN)
    auto_create = fields.Nested(AutoCreateIn, allow_none=True)
    sync_status = fields.Boolean()
    # The tracker's own, where the tracker makes it (Linear) rather than taking svc's.
    webhook_secret = fields.String(validate=validate.Length(min=16, max=64))


class AutoCreateOut(OutSchema):
    severities = fields.List(fields.String(), required=True)
    categories = fields.List(fields.String(), required=True)


class IntegrationOut(OutSchema):
    id = fields.UUID(required=True)
    project_id = fields.UUID(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    name = fields.String(required=True)
    config = fields.Dict(required=True)
    auto_create = fields.Nested(AutoCreateOut, required=True, allow_none=True)
    sync_status = fields.Boolean(required=True)
    # Where the tracker sends its events (docs/integrations.md says where to paste it).
    webhook_url = fields.Method("_webhook_url", required=True)
    # Only in the answer to the creation.
    webhook_secret = fields.String(attribute="shown_secret")
    created_at = Timestamp(required=True)
    last_used_at = Timestamp(required=True, allow_none=True)
    last_error = fields.String(required=True, allow_none=True)

    def _webhook_url(self, integration) -> str:
        return f"{public_url()}/api/v1/integrations/{integration.id}/events"


class IssueCreateIn(InSchema):
    integration_id = fields.UUID(required=True)


class ExternalIssueOut(OutSchema):
    integration_id = fields.UUID(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    key = fields.String(required=True)
    url = fields.String(required=True)
    state = fields.String(required=True, validate=validate.OneOf(("open", "closed")))
    # Why the last close or reopen did not reach the tracker (it is retried).
    last_error = fields.String(required=True, allow_none=True)
    created_at = Timestamp(required=True)


class TestOut(OutSchema):
    ok = fields.Boolean(required=True)
    detail = fields.String(required=True)


class TrackerEventOut(OutSchema):
    delivery_id = fields.String(required=True)
    received_at = Timestamp(required=True)
    outcome = fields.String(required=True)


class EventAcceptedOut(OutSchema):
    detail = fields.String(required=True)


class CallListQuery(PageQuery):
    pass


class CallOut(AttemptsOut):
    """One call to the tracker, in the delivery log's shape (docs/api.md §12.1)."""

    action = fields.String(required=True, validate=validate.OneOf((CREATE, CLOSE, REOPEN)))


CallPageOut = page_of(CallOut, "IntegrationCallPageOut")
