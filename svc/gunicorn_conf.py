"""gunicorn settings, from the same SVC_* variables as the app.

Used as `gunicorn --config python:svc.gunicorn_conf wsgi:app`.
"""

import gc
import re

from gunicorn.glogging import Logger

from svc.config import load_settings

_settings = load_settings()

bind = _settings["SVC_BIND"]
workers = _settings["SVC_WORKERS"]
# X-Forwarded-* are trusted in one place, the app's ProxyFix, and only with SVC_TRUSTED_PROXIES:
# gunicorn itself would trust X-Forwarded-Proto from any loopback client.
forwarded_allow_ips = ""
accesslog = "-"
# The path without its query string (which may hold a search, or a token someone put there),
# no Referer and no Basic-auth user: address, time, request, status, size, duration, agent.
access_log_format = '%(h)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s %(M)sms "%(a)s"'
# Paths one of whose segments is a credential: the link pages of mails (invitation, reset,
# unsubscribe, a report's status page) and the status page's API (`.../status/<token>/replies`).
_TOKEN_PAGES = re.compile(r"^(/api/v1)?/(invite|reset-password|unsubscribe|status)/[^/]+")


class AccessLogWithoutTokens(Logger):
    """The access log shows which link page was opened, never the token in it."""

    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        atoms["U"] = _TOKEN_PAGES.sub(r"\1/\2/[token]", atoms["U"])
        return atoms


logger_class = AccessLogWithoutTokens


def when_ready(server) -> None:
    """Says once, at start, when replay cannot be offered (docs/replay.md)."""
    from svc import replay

    reason = replay.unavailable(replay.folder_of(_settings["SVC_NODE_MODULES"]))
    if reason:
        server.log.warning("replay unavailable: %s", reason)


# What gunicorn itself refuses (URI too long, headers too large) answers as JSON too.
worker_class = "svc.gunicorn_worker.JsonErrorWorker"
# gunicorn's control socket (gunicornc) is one path per user, shared by every installation on the
# host: a second one replaces the first's, and stopping either deletes it. svc needs none.
control_socket_disable = True
# Workers are killed and replaced rather than left hanging on a stuck request.
timeout = 60
graceful_timeout = 20
# The master loads the app once and the workers fork from it, instead of each loading it again
# (docs/performance.md, "Where a run's CPU goes"). New code takes a restart (SIGHUP to gunicorn
# does not reload it); make run and the container always restart.
preload_app = True


def pre_fork(server, worker) -> None:
    """What the master loaded (the app, its tables, its routes) lives as long as the workers:
    frozen, the workers' garbage collections never walk it again, and never write to its
    pages, which then stay shared (the gc module's advice for a fork without exec)."""
    gc.freeze()


def post_fork(server, worker) -> None:
    """Each worker opens its own database connections. None is open in the master, and one
    shared across a fork would be used by two processes at once: SQLAlchemy's advice for
    os.fork, so that a later change cannot make it so."""
    from svc.extensions import db
    from wsgi import app

    with app.app_context():
        for engine in db.engines.values():
            engine.dispose(close=False)
