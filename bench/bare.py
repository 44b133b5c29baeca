"""The yardstick for the ingest benchmark: a Flask app that parses the same JSON body and answers
201, nothing else. Served by gunicorn with svc's own settings (svc.gunicorn_conf)."""

from flask import Flask, request

app = Flask(__name__)


@app.post("/api/v1/reports")
def create_report():
    report = request.get_json()
    return {"title": report["title"]}, 201


@app.get("/healthz")
def health():
    return {"status": "ok"}
