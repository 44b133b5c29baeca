"""The application factory: `create_app` reads as the table of contents: settings, extensions,
error handlers, blueprints, commands.
"""

import os
from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from svc import (
    dashboard,
    database,
    errors,
    json_codec,
    operator_commands,
    rate_limits,
    replay,
    reporter_pages,
    sso,
    storage,
    widget,
)
from svc.api import register_blueprints
from svc.config import MIGRATIONS_DIR, database_url, load_settings
from svc.extensions import db, limiter, migrate
from svc.security import SECRET_KEY_FILE, load_or_create_secret_key, set_security_headers

MAX_JSON_BYTES = 5 * 1024 * 1024


def create_app(config: dict[str, Any] | None = None) -> Flask:
    settings = load_settings(overrides=config)
    app = Flask(__name__, instance_path=settings["SVC_INSTANCE_PATH"])
    # What this start adds to a new instance folder, which a refused restore takes back.
    app.extensions["svc.new_paths"] = _missing_folders(app.instance_path)
    os.makedirs(app.instance_path, mode=0o700, exist_ok=True)
    app.config.update(settings)
    app.config.update(_derived_settings(app))
    app.extensions["svc.store"] = _object_store(app)
    app.json = json_codec.JSONProvider(app)
    app.json.sort_keys = False  # keep the order the schemas declare

    if settings["SVC_MCP"]:
        from svc.mcp.endpoint import Endpoint

        app.wsgi_app = Endpoint(app, app.wsgi_app)
    if settings["SVC_TRUSTED_PROXIES"]:
        hops = settings["SVC_TRUSTED_PROXIES"]
        app.wsgi_app = ProxyFix(
            app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops, x_port=hops, x_prefix=hops
        )

    db.init_app(app)
    database.init_app(app)
    migrate.init_app(app, db, directory=MIGRATIONS_DIR)
    app.after_request(errors.only_where_waiting_helps)  # before the limiter: runs after it
    limiter.init_app(app)

    errors.register_error_handlers(app)
    register_blueprints(app)
    app.register_blueprint(dashboard.bp)
    app.register_blueprint(reporter_pages.bp)
    app.register_blueprint(widget.bp)
    app.register_blueprint(replay.bp)
    app.register_blueprint(sso.bp)
    sso.init_app(app)
    app.after_request(set_security_headers)
    operator_commands.register_commands(app)
    return app


def _missing_folders(path: str) -> list[str]:
    """The folders of `path` that do not exist yet, outermost first."""
    missing = []
    while path and not os.path.isdir(path):
        missing.insert(0, path)
        path = os.path.dirname(path)
    return missing


def _secret_key(app: Flask) -> str:
    key_file = os.path.join(app.instance_path, SECRET_KEY_FILE)
    if not os.path.exists(key_file):
        app.extensions["svc.new_paths"].append(key_file)
    return load_or_create_secret_key(app.instance_path)


def _object_store(app: Flask) -> storage.ObjectStore:
    """The store of every file (docs/storage.md); SVC_UPLOAD_DIR names the folder of one on
    disk, for the operations and tests that look into it."""
    config = app.config
    store = storage.open_store(
        config["SVC_STORAGE_URL"] or config["SVC_UPLOAD_DIR"] or "uploads",
        app.instance_path,
        storage.S3Options.from_settings(config),
    )
    config["SVC_UPLOAD_DIR"] = str(store.folder) if store.kind == "folder" else None
    return store


def _derived_settings(app: Flask) -> dict[str, Any]:
    """Flask's and the extensions' own keys, derived from the SVC_* settings."""
    config = app.config
    return {
        "SECRET_KEY": config["SVC_SECRET_KEY"] or _secret_key(app),
        "SQLALCHEMY_DATABASE_URI": database_url(config, app.instance_path),
        # pre_ping: a PostgreSQL restart costs one reconnect, not one failed request per pooled
        # connection. recycle: a SQLite connection reads the planner statistics when it opens
        # (svc.database refreshes them hourly in the scheduler process).
        "SQLALCHEMY_ENGINE_OPTIONS": {
            "pool_pre_ping": True,
            "pool_recycle": 3600,
            "json_serializer": json_codec.dumps,
            # Read by orjson too: the fan-out reads every new report's captured logs.
            "json_deserializer": json_codec.loads_stored,
        },
        "MAX_CONTENT_LENGTH": MAX_JSON_BYTES,
        "RATELIMIT_STORAGE_URI": (
            f"{rate_limits.SCHEME}://"
            if config["SVC_RATE_LIMIT_STORAGE"] == "database"
            else config["SVC_RATE_LIMIT_STORAGE"]
        ),
        "RATELIMIT_HEADERS_ENABLED": True,
        # A storage that cannot count raises StorageError, which svc.errors answers with a 503.
        "RATELIMIT_STORAGE_OPTIONS": {"wrap_exceptions": True},
    }
