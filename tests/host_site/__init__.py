"""A customer's web app for the widget's browser tests: served from another origin than svc,
with a strict Content-Security-Policy (no 'unsafe-inline' for scripts or styles), its own script
that runs before the widget, a stylesheet that would break a widget which inherited it, and a
small JSON API of its own.

`/?project=<api key>` embeds the widget with one script tag; `&widget=0` leaves it out, so a
test can compare the page with and without it.
"""

import threading
from pathlib import Path

from flask import Flask, Response, jsonify, render_template_string, request, send_from_directory
from werkzeug.serving import make_server

HERE = Path(__file__).resolve().parent
# A port nothing listens on: requests to it fail the way a dead backend does.
FAILING_ORIGIN = "http://localhost:1"

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Web Shop</title>
  <link rel="stylesheet" href="/host.css">
  <script src="/host.js"></script>
  {% if widget %}<script src="{{ svc_url }}/widget.js" data-project-key="{{ key }}"
    {%- if release %} data-release="{{ release }}"{% endif %} async></script>{% endif %}
</head>
<body>
  <h1>Web Shop</h1>
  <p>Two items in your cart.</p>
  <label>E-mail <input id="email" type="email"></label>
  <label>Password <input id="password" type="password"></label>
  <button id="pay" class="primary big">Pay now</button>
  <nav><a id="orders-link" href="/orders">Orders</a></nav>
  <p class="coupon"><input name="coupon" placeholder="Coupon">
    <button data-testid="apply-coupon">Apply</button></p>
  <p id="out"></p>
  <div id="notes" contenteditable="true">Notes: </div>
  <textarea id="address">Ada Lovelace, 12 Prefilled Street</textarea>
  <select id="plan"><option>Basic plan</option><option>Secret plan</option></select>
  <p>Your key:
    <code id="jwt">eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ</code></p>
  <section id="profile">
    <label>Nickname <input id="nickname"></label>
    <label>Secret <input id="secret" type="password"></label>
    <button id="show-secret" type="button">Show password</button>
    <p id="card" data-svc-mask>Card 4111 2222 3333 4444</p>
    <p data-svc-block>Blocked block of text</p>
    <input type="hidden" name="csrf" value="csrf-hidden-0f1e2d">
    <p id="greeting"></p>
    <span id="last4" data-last4="4242" aria-label="Card ending 9876" title="Visa 5511"
      >On file</span>
    <button id="add-line" type="button">Add a line</button>
    <ul id="lines" data-svc-unmask></ul>
    <img src="/nowhere.png" alt="" onerror="top.postMessage('pwned', '*'); top.pwned = 1">
    <script>top.postMessage('pwned', '*'); top.pwned = 1;</script>
  </section>
</body>
</html>"""


def make_app(svc_url: str) -> Flask:
    app = Flask(__name__)
    policy = (
        f"default-src 'self'; script-src 'self' {svc_url}; style-src 'self'; "
        f"connect-src 'self' {svc_url} {FAILING_ORIGIN}; img-src 'self' data: blob: {svc_url}; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    )

    clicks: dict[str, list] = {}

    @app.get("/")
    @app.get("/checkout")
    @app.get("/orders")
    def page():
        html = render_template_string(
            PAGE,
            svc_url=svc_url,
            key=request.args.get("project", ""),
            release=request.args.get("release"),
            widget=request.args.get("widget") != "0",
        )
        return Response(html, headers={"Content-Security-Policy": policy})

    @app.get("/host.js")
    @app.get("/host.css")
    def asset():
        return send_from_directory(HERE, request.path.lstrip("/"), max_age=0)

    @app.route("/api/data", methods=["GET", "POST"])
    def data():
        return jsonify({"items": 2, "total": 41.5})

    @app.get("/api/missing")
    def missing():
        return jsonify({"detail": "no such thing"}), 404

    @app.post("/api/price")
    def price():
        """A JSON answer of about 10 KB, with a secret-looking key among its fields."""
        lines = [{"sku": f"item-{n}", "price": n * 1.5, "name": "x" * 60} for n in range(100)]
        response = jsonify({"total": 41.5, "discount": 0, "token": "price-token-secret",
                            "lines": lines})  # fmt: skip
        response.headers["X-Price-Version"] = "7"
        response.headers["Set-Cookie"] = "cart=abc123; Path=/"
        return response

    @app.post("/clicks")
    def clicked():
        """What the page's own script saw clicked (host.js), per visit, in click order."""
        record = request.get_json(force=True)
        clicks.setdefault(record["visit"], []).append(record)
        return "", 204

    app.clicks = clicks
    return app


class HostSite:
    """The app on a real HTTP server in a thread, at http://localhost:<port>: another origin
    than svc's http://127.0.0.1:<port>."""

    def __init__(self, svc_url: str):
        self.app = make_app(svc_url)
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.url = f"http://localhost:{self.server.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def clicks(self) -> list[list[dict]]:
        """Each visit's clicks in the order they happened (beacons may arrive out of order)."""
        return [
            sorted(visit, key=lambda click: click["number"]) for visit in self.app.clicks.values()
        ]

    def __enter__(self) -> "HostSite":
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.server.shutdown()
        self.thread.join(timeout=5)
