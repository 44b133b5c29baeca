"""gunicorn settings, from the same SVC_* variables as the app.

Used as `gunicorn --config python:svc.gunicorn_conf wsgi:app`.
"""

from svc.config import load_settings

_settings = load_settings()

bind = _settings["SVC_BIND"]
workers = _settings["SVC_WORKERS"]
accesslog = "-"
# Workers are killed and replaced rather than left hanging on a stuck request.
timeout = 60
graceful_timeout = 20
