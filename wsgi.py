"""Entry point for gunicorn: `gunicorn wsgi:app`."""

from svc import create_app

app = create_app()
