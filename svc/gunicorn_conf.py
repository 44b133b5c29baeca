"""gunicorn settings, from the same SVC_* variables as the app.

Used as `gunicorn --config python:svc.gunicorn_conf wsgi:app`.
"""

from svc.config import load_settings

_settings = load_settings()

bind = _settings["SVC_BIND"]
workers = _settings["SVC_WORKERS"]
accesslog = "-"
# The path without its query string (which may hold a search, or a token someone put there),
# no Referer and no Basic-auth user: address, time, request, status, size, duration, agent.
access_log_format = '%(h)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s %(M)sms "%(a)s"'
# Workers are killed and replaced rather than left hanging on a stuck request.
timeout = 60
graceful_timeout = 20
