"""Every SVC_* setting, its default and its parsing, in one place.

The application reads its settings from the environment once, in `create_app`. A test (or an
embedding program) passes overrides by the same names: `create_app({"SVC_REGISTRATION": "closed"})`.
The README's configuration table lists the same variables; `tests/test_config.py` keeps them in
step.
"""

import ipaddress
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import click
from flask import current_app, has_request_context, request

# Where `make run` installs the Node packages (rrweb, Playwright's runner), unless
# SVC_NODE_MODULES says otherwise.
DEFAULT_NODE_MODULES = Path(__file__).resolve().parent.parent / "node_modules"


def node_modules_folder(setting: str | None) -> Path:
    """The folder SVC_NODE_MODULES names, else the checkout's node_modules/."""
    return Path(setting or DEFAULT_NODE_MODULES)


class ConfigError(click.ClickException, ValueError):
    """A setting has a value the service cannot use; raised at start-up, never at request time.
    A ClickException, so that `flask --app svc ...` (and so `make run`) says it in one line,
    "Error: SVC_ROLE='wbe': ...", rather than as a traceback."""

    def __init__(self, message: str):
        super().__init__(message)
        ValueError.__init__(self, message)


def _boolean(raw: str) -> bool:
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError("expected true or false")


def _positive_int(raw: str) -> int:
    value = int(raw)
    if value < 1:
        raise ValueError("must be at least 1")
    return value


def _non_negative_int(raw: str) -> int:
    value = int(raw)
    if value < 0:
        raise ValueError("must be 0 or more")
    return value


def _positive_float(raw: str) -> float:
    value = float(raw)
    if value <= 0:
        raise ValueError("must be more than 0")
    return value


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        value = raw.strip().lower()
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return value

    return parse


def _optional_text(raw: str) -> str | None:
    return raw.strip() or None


def _smtp_url(raw: str) -> str | None:
    url = raw.strip()
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError("expected smtp://[user:password@]host[:port] or smtps://...")
    options = parse_qs(parts.query, keep_blank_values=True)
    if parts.query and (options != {"starttls": ["off"]} or parts.scheme != "smtp"):
        raise ValueError("the one option is smtp://host:25?starttls=off, for a relay on this host")
    if options and not _is_loopback(parts.hostname):
        raise ValueError(
            "starttls=off is for a relay on this host only (localhost, 127.0.0.1, ::1): to "
            f"{parts.hostname} the password and every mail would cross the network in clear"
        )
    return url


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _storage_url(raw: str) -> str | None:
    url = raw.strip()
    if url.startswith("s3://") and not urlsplit(url).netloc:
        raise ValueError("an s3:// URL names a bucket: s3://bucket[/prefix]")
    if url.startswith("file://") and not urlsplit(url).path.startswith("/"):
        raise ValueError("a file:// URL takes an absolute path: file:///var/lib/svc/uploads")
    if "://" in url and not url.startswith(("s3://", "file://")):
        raise ValueError("expected s3://bucket[/prefix], file:///absolute/path or a folder")
    return url or None


def _name_list(raw: str) -> tuple[str, ...]:
    return tuple(name.strip().lower() for name in raw.split(",") if name.strip())


def _delays(raw: str) -> tuple[float, ...]:
    return tuple(_positive_float(part) for part in raw.split(",") if part.strip())


def _fernet_keys(raw: str) -> tuple[str, ...]:
    keys = tuple(key.strip() for key in raw.split(",") if key.strip())
    if keys:  # cryptography (8 MB) loaded only where keys are set
        from cryptography.fernet import Fernet
    for key in keys:
        Fernet(key)  # ValueError: not 32 url-safe base64-encoded bytes
    return keys


_RATE = re.compile(r"^\s*\d+\s*(/|per)\s*\d*\s*(second|minute|hour|day)s?\s*$", re.IGNORECASE)


def _rate_limit(raw: str) -> str:
    value = raw.strip()
    if value.lower() == "off":
        return "off"
    if not _RATE.match(value):
        raise ValueError("expected a limit such as 10/minute, or off")
    return value


@dataclass(frozen=True)
class Setting:
    name: str
    default: str | None
    parse: Callable[[str], Any]
    meaning: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "SVC_DATABASE_URL",
        None,
        _optional_text,
        "any SQLAlchemy URL; default: SQLite file `svc.sqlite3` in the instance folder; "
        "`postgresql+psycopg://user@host/db` for PostgreSQL",
    ),
    Setting(
        "SVC_SECRET_KEY",
        None,
        _optional_text,
        "signs access tokens and CSRF tokens; default: generated on first start and kept in "
        "`instance/secret_key`",
    ),
    Setting(
        "SVC_INSTANCE_PATH",
        None,
        _optional_text,
        "the instance folder (database, secret key, uploads); default: `instance/` beside the code",
    ),
    Setting("SVC_BIND", "127.0.0.1:8000", str.strip, "address `make run` serves on"),
    Setting("SVC_WORKERS", "2", _positive_int, "gunicorn worker processes"),
    Setting(
        "SVC_STORAGE_URL",
        None,
        _storage_url,
        "where files (screenshots) are kept: `s3://bucket[/prefix]`, `file:///absolute/path` or "
        "a folder; default: `uploads/` in the instance folder (docs/storage.md)",
    ),
    Setting(
        "SVC_UPLOAD_DIR", None, _optional_text, "a folder for files: `SVC_STORAGE_URL`'s alias"
    ),
    Setting(
        "SVC_S3_ENDPOINT_URL",
        None,
        _optional_text,
        "the S3 API's address for a store that is not AWS (MinIO, SeaweedFS, R2...)",
    ),
    Setting("SVC_S3_REGION", "us-east-1", str.strip, "the bucket's region"),
    Setting(
        "SVC_S3_ADDRESSING",
        "auto",
        _choice("auto", "path", "virtual"),
        "`auto`: path-style when an endpoint is set, else virtual-host; `path`; `virtual`",
    ),
    Setting(
        "SVC_S3_PRESIGNED_DOWNLOADS",
        "false",
        _boolean,
        "answer a download with a 302 to a presigned URL valid for 60 s instead of streaming it",
    ),
    Setting("SVC_MAX_SCREENSHOT_BYTES", "10485760", _positive_int, "screenshot upload size limit"),
    Setting(
        "SVC_NODE_MODULES",
        None,
        _optional_text,
        "the folder of the Node packages `make run` installs (rrweb, for replay); default: "
        "`node_modules/` beside the code (docs/replay.md)",
    ),
    Setting(
        "SVC_COOKIE_SECURE",
        "auto",
        _choice("auto", "true", "false"),
        "`auto`: cookies are Secure when the request came over HTTPS; `true`; `false`",
    ),
    Setting(
        "SVC_ALLOW_DEFAULT_PASSWORDS",
        "false",
        _boolean,
        "start although the database password (or the S3 secret) is compose.yaml's `change-me`",
    ),
    Setting(
        "SVC_TRUSTED_PROXIES",
        "0",
        _non_negative_int,
        "number of reverse proxies whose X-Forwarded-* headers are trusted",
    ),
    Setting("SVC_ACCESS_TOKEN_MINUTES", "15", _positive_int, "lifetime of the access cookie"),
    Setting(
        "SVC_REFRESH_TOKEN_DAYS",
        "30",
        _positive_int,
        "lifetime of a session (refresh and CSRF cookies), renewed by each refresh",
    ),
    Setting(
        "SVC_SESSION_MAX_DAYS",
        "90",
        _positive_int,
        "a session ends this many days after the sign-in, however often it was refreshed",
    ),
    Setting(
        "SVC_REFRESH_REUSE_GRACE",
        "10",
        _non_negative_int,
        "seconds during which a just-replaced refresh token still gets its successor",
    ),
    Setting(
        "SVC_REGISTRATION",
        "open",
        _choice("open", "closed"),
        "`open`, or `closed`: only the first user may register; others are created with "
        "`flask --app svc create-user`",
    ),
    Setting(
        "SVC_REDACT_NAMES",
        "",
        _name_list,
        "extra header / query parameter names to redact in reports, comma-separated",
    ),
    Setting(
        "SVC_WEBHOOK_TIMEOUT",
        "10",
        _positive_float,
        "seconds per webhook delivery attempt, in all: connecting, sending and reading",
    ),
    Setting("SVC_WEBHOOK_RETRY_DELAYS", "10,60,300", _delays, "seconds before each webhook retry"),
    Setting(
        "SVC_WEBHOOK_ALLOW_HTTP",
        "false",
        _boolean,
        "accept `http://` webhook URLs (local development)",
    ),
    Setting(
        "SVC_WEBHOOK_ALLOW_PRIVATE",
        "false",
        _boolean,
        "allow webhook deliveries to loopback and private addresses",
    ),
    Setting(
        "SVC_WEBHOOK_CA_BUNDLE",
        None,
        _optional_text,
        "extra CA certificates (PEM file) trusted for webhook TLS; default: the system store",
    ),
    Setting(
        "SVC_INTEGRATION_RETRY_DELAYS",
        "10,60,300",
        _delays,
        "seconds before each retry of a call to an issue tracker (creating or closing an issue)",
    ),
    Setting(
        "SVC_ENCRYPTION_KEYS",
        "",
        _fernet_keys,
        "Fernet keys that encrypt tracker tokens, comma-separated: the first encrypts, all "
        "decrypt; default: one derived from the secret key",
    ),
    Setting(
        "SVC_RATE_LIMIT_AUTH",
        "10/minute",
        _rate_limit,
        "login and register, per client address; `off` disables",
    ),
    Setting(
        "SVC_RATE_LIMIT_INGEST",
        "120/minute",
        _rate_limit,
        "report creation and upload, per API key and client address; `off` disables",
    ),
    Setting(
        "SVC_RATE_LIMIT_PASSWORD",
        "10/minute",
        _rate_limit,
        "password changes, per user (each guesses the current password); `off` disables",
    ),
    Setting(
        "SVC_RATE_LIMIT_INVITE",
        "20/hour",
        _rate_limit,
        "invitations sent and resent, per inviting user; `off` disables",
    ),
    Setting(
        "SVC_RATE_LIMIT_INVITE_ADDRESS",
        "3/day",
        _rate_limit,
        "invitations sent and resent, per invited address; `off` disables",
    ),
    Setting(
        "SVC_RATE_LIMIT_STATUS",
        "10/hour",
        _rate_limit,
        "replies and reopenings on a report's status page, per page; `off` disables",
    ),
    Setting(
        "SVC_RATE_LIMIT_STATUS_ADDRESS",
        "30/hour",
        _rate_limit,
        "replies and reopenings on status pages, per client address; `off` disables",
    ),
    Setting(
        "SVC_RATE_LIMIT_STORAGE",
        "database",
        str.strip,
        "where rate-limit counters live: `database` (the service's own, shared by every worker "
        "and instance), or a `limits` storage URL such as `redis://127.0.0.1:6379`",
    ),
    Setting(
        "SVC_PUBLIC_URL",
        None,
        _optional_text,
        "the address users reach the service at, for links in chat messages and mails; "
        "required once `SVC_SMTP_URL` is set",
    ),
    Setting(
        "SVC_SMTP_URL",
        None,
        _smtp_url,
        "`smtp://user:pass@host:587` (STARTTLS, required) or `smtps://user:pass@host:465`; "
        "`smtp://localhost:25?starttls=off` for a relay on this host without TLS (a local "
        "Postfix; loopback addresses only); none: mails are written to the scheduler's log",
    ),
    Setting(
        "SVC_MAIL_FROM",
        None,
        _optional_text,
        "the mails' From address; default `svc@<host of SVC_PUBLIC_URL>`",
    ),
    Setting(
        "SVC_MAIL_TIMEOUT",
        "30",
        _positive_float,
        "seconds per attempt to hand a mail to the SMTP server, in all",
    ),
    Setting(
        "SVC_MAIL_RETRY_DELAYS",
        "30,120,600,1800,7200",
        _delays,
        "seconds before each retry of a mail the SMTP server did not take",
    ),
    Setting(
        "SVC_ROLE",
        "all",
        _choice("all", "web", "scheduler"),
        "what `make run` starts on this host: `all` (the web process and a scheduler), `web` or "
        "`scheduler` (docs/deployment.md)",
    ),
    Setting(
        "SVC_SCHEDULER_LEASE_SECONDS",
        "15",
        _positive_float,
        "seconds a scheduler's lease lasts: a standby takes over this long after the active one "
        "stopped renewing it, and a delivery, mail or tracker call cut off by a crash goes again "
        "this long after its time-out",
    ),
    Setting(
        "SVC_MAIL_LOG_DAYS",
        "30",
        _positive_int,
        "days a sent or failed mail's row (address, outcome; its text is cleared once it went) "
        "is kept; the scheduler deletes older ones hourly",
    ),
    Setting(
        "SVC_AUDIT_DAYS",
        "365",
        _positive_int,
        "days an audit log entry is kept; the scheduler deletes older ones hourly",
    ),
    Setting(
        "SVC_REQUIRE_2FA",
        "false",
        _boolean,
        "`true`: a password user without a second factor enrols one at their next sign-in "
        "(docs/identity.md)",
    ),
    Setting(
        "SVC_PASSWORD_LOGIN",
        "on",
        _choice("on", "off"),
        "`off`: sign-in and registration with a password are refused, only single sign-on "
        "remains (needs SVC_OIDC_ISSUER)",
    ),
    Setting(
        "SVC_OIDC_ISSUER",
        None,
        _optional_text,
        "single sign-on: the OpenID provider's issuer URL (its discovery document is read from "
        "`<issuer>/.well-known/openid-configuration`); none: no single sign-on",
    ),
    Setting("SVC_OIDC_CLIENT_ID", None, _optional_text, "the client id svc has at the provider"),
    Setting("SVC_OIDC_CLIENT_SECRET", None, _optional_text, "that client's secret"),
    Setting(
        "SVC_OIDC_NAME",
        "single sign-on",
        _optional_text,
        "the provider's name on the sign-in page's button: \"Sign in with <name>\"",
    ),
    Setting(
        "SVC_OIDC_ALLOWED_DOMAINS",
        "",
        _name_list,
        "e-mail domains single sign-on accepts, comma-separated; none: any",
    ),
    Setting(
        "SVC_OIDC_CA_BUNDLE",
        None,
        _optional_text,
        "extra CA certificates (PEM file) trusted for the OpenID provider; default: the system "
        "store",
    ),
    Setting(
        "SVC_SMTP_CA_BUNDLE",
        None,
        _optional_text,
        "extra CA certificates (PEM file) trusted for the SMTP server; default: the system store",
    ),
    Setting(
        "SVC_EXPORT_SYNC_LIMIT",
        "100000",
        _positive_int,
        "the most reports `GET /reports/export` sends in one answer; more: an export job "
        "(docs/api.md §8.3.1)",
    ),
    Setting(
        "SVC_SEARCH_COUNT_LIMIT",
        "1000",
        _positive_int,
        "a search's total counts its matches up to this many (or to the page asked for); more: "
        "the total is a lower bound and the list says `totalExact: false` (docs/api.md §8.2)",
    ),
    Setting(
        "SVC_SEARCH_COUNT_WINDOW",
        "100000",
        _non_negative_int,
        "PostgreSQL: a search counts its first matches among about this many of the newest "
        "reports before it counts among all, where the projects hold enough that it pays, and "
        "reads a newest-first page there, or in a wider window (docs/performance.md); 0: "
        "always among all",
    ),
    Setting(
        "SVC_REPRO_BROWSER",
        "auto",
        str.strip,
        "the Chromium that runs reports' steps against staging (docs/repro-kit.md): a path; "
        "`auto`: chromium-headless-shell or chromium on PATH; `off`: no reproductions",
    ),
    Setting(
        "SVC_REPRO_RUNS_PER_HOST",
        "1",
        _positive_int,
        "reproductions run at once on one host (each a browser: about 200 MB)",
    ),
    Setting(
        "SVC_MCP",
        "on",
        _boolean,
        "the MCP server for coding agents at `/mcp` (docs/mcp.md); `off`: no `/mcp`",
    ),
    Setting(
        "SVC_MCP_WRITES",
        "off",
        _boolean,
        "`on`: every MCP client may change reports (set_status, add_comment, assign, "
        "mark_duplicate) with a token that may; `off`: only one that asks (`svc mcp "
        "--allow-writes`)",
    ),
)


def load_settings(
    environ: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Parse every setting from `environ` (default: the process environment), then `overrides`.

    An override may be a raw string (parsed like the environment) or an already-typed value.
    Keys of `overrides` that are not SVC_ settings (e.g. TESTING) are passed through as they are.
    """
    environ = os.environ if environ is None else environ
    overrides = dict(overrides or {})
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        if setting.name in overrides:
            raw = overrides.pop(setting.name)
            if not isinstance(raw, str):
                values[setting.name] = raw
                continue
        else:
            raw = environ.get(setting.name, setting.default)
        if raw is None:
            values[setting.name] = None
            continue
        try:
            values[setting.name] = setting.parse(raw)
        except ValueError as exc:
            raise ConfigError(f"{setting.name}={raw!r}: {exc}") from None
    values.update(overrides)
    if values.get("SVC_SMTP_URL") and not values.get("SVC_PUBLIC_URL"):
        raise ConfigError(
            "SVC_SMTP_URL is set but SVC_PUBLIC_URL is not: mails carry links to the service, "
            "so set SVC_PUBLIC_URL to the address users reach it at (https://bugs.example.com)"
        )
    _check_sign_in(values)
    _check_default_passwords(values, environ)
    return values


DEFAULT_PASSWORD = "change-me"  # compose.yaml's placeholders


def _check_default_passwords(values: dict[str, Any], environ: Mapping[str, str]) -> None:
    """compose.yaml ships `change-me` as the database password and the S3 secret, for the user
    to change: svc does not start with one left as it is, unless told to (a trial on a laptop)."""
    if values.get("SVC_ALLOW_DEFAULT_PASSWORDS"):
        return
    from sqlalchemy.engine import make_url

    url = values.get("SVC_DATABASE_URL")
    try:
        password = make_url(url).password if url else None
    except Exception:  # not a URL: the database's own error says so at start
        password = None
    if password == DEFAULT_PASSWORD or environ.get("AWS_SECRET_ACCESS_KEY") == DEFAULT_PASSWORD:
        raise ConfigError(
            f"the database password or AWS_SECRET_ACCESS_KEY is still {DEFAULT_PASSWORD!r}: set "
            "your own (compose.yaml's CHANGE ME lines), or SVC_ALLOW_DEFAULT_PASSWORDS=1 for a "
            "trial that nobody else can reach"
        )


def _check_sign_in(values: dict[str, Any]) -> None:
    """Single sign-on needs its client; switching passwords off needs single sign-on."""
    oidc = ("SVC_OIDC_ISSUER", "SVC_OIDC_CLIENT_ID", "SVC_OIDC_CLIENT_SECRET")
    if values.get("SVC_OIDC_ISSUER") and not all(values.get(name) for name in oidc):
        raise ConfigError(
            "SVC_OIDC_ISSUER is set: set SVC_OIDC_CLIENT_ID and SVC_OIDC_CLIENT_SECRET too"
        )
    if values.get("SVC_PASSWORD_LOGIN") == "off" and not values.get("SVC_OIDC_ISSUER"):
        raise ConfigError(
            "SVC_PASSWORD_LOGIN=off leaves no way to sign in: configure single sign-on "
            "(SVC_OIDC_ISSUER, SVC_OIDC_CLIENT_ID, SVC_OIDC_CLIENT_SECRET) first"
        )


# The database's schema, one Alembic revision per change (`flask db upgrade`; svc.serve).
MIGRATIONS_DIR = str(Path(__file__).resolve().parent.parent / "migrations")


def database_url(settings: Mapping[str, Any], instance_path: str) -> str:
    """SVC_DATABASE_URL, else the SQLite file in the instance folder."""
    return settings["SVC_DATABASE_URL"] or (
        f"sqlite:///{os.path.join(instance_path, 'svc.sqlite3')}"
    )


def setting(name: str) -> Any:
    """A parsed SVC_* setting of the running app (inside an app context)."""
    return current_app.config[name]


def report_path(tracking_id: str) -> str:
    """A report's page in the dashboard, on any address of svc: the one spelling of it (mails,
    tracker issues and the chat messages of webhooks link there)."""
    return f"/reports/{tracking_id}"


def report_url(tracking_id: str, configured_only: bool = False) -> str | None:
    """A report's page (report_path) on svc's address for its users. What is read
    outside svc, a tracker's issue, links only where SVC_PUBLIC_URL says the address
    (`configured_only`: else None): public_url's last resort, the address `make run` binds
    (127.0.0.1:8000), would be a link to nowhere for the tracker's readers."""
    if configured_only and not setting("SVC_PUBLIC_URL"):
        return None
    return public_url(report_path(tracking_id))


def public_url(path: str = "") -> str:
    """An address of the service for its users, `path` on it: what every public link is built
    on (mails, the status page's link in an answer, a report's page through report_url, single
    sign-on's and passkeys' origin, a tracker's webhook address). SVC_PUBLIC_URL; else, inside
    a request, the address the request came to (a report filed to https://bugs.example.org
    links there, not to the bound address); else (a scheduler's mail with mail off,
    development) the address `make run` binds."""
    if setting("SVC_PUBLIC_URL"):
        base = setting("SVC_PUBLIC_URL")
    elif has_request_context():
        base = request.host_url
    else:
        base = f"http://{setting('SVC_BIND')}"
    return base.rstrip("/") + path
