"""A staging site with a deliberately broken checkout, for reproductions (docs/repro-kit.md, "The
runner"): Pay posts /api/pay, which answers 500 while the site is broken, and a second later
the page reads a property of undefined (a TypeError). `site.broken = False` is the fix.

Beside it: a page whose script asks another origin for something (the sandbox aborts it), one
that redirects to another origin (the proxy refuses it), and one that never answers.
"""

import threading
import time

from flask import Flask, Response, jsonify, redirect, render_template_string, request
from markupsafe import Markup
from werkzeug.serving import make_server

# The widget's one tag, where the site is given svc's address.
WIDGET = """{% if svc_url %}<script src="{{ svc_url }}/widget.js"
  data-project-key="{{ key }}" async></script>{% endif %}"""

PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Checkout</title>
{{ widget }}</head>
<body>
  <h1>Checkout</h1>
  <p>Two items in your cart.</p>
  <button id="pay" type="button">Pay now</button>
  <a href="/away">Leave</a>
  <a href="/stuck">Stuck</a>
  <p id="out"></p>
  <script>
    document.getElementById('pay').addEventListener('click', () => {
      // The answer is read a second later (after its spinner): the error comes well after the
      // failed request, as a real page's often does, and a run must wait for both.
      fetch('/api/pay', {method: 'POST'})
        .then((r) => new Promise((done) => setTimeout(() => done(r.json()), 1000)))
        .then((body) => {
          document.getElementById('out').textContent = 'Paid: ' + body.order.id;
        });
    });
    {% if elsewhere %}fetch('{{ elsewhere }}/track').catch(() => null);{% endif %}
  </script>
</body>
</html>"""


# Every kind of element a reporter clicks (docs/repro-kit.md, "Steps that run"): each click the
# page sees is posted to /seen, so that a test compares the reporter's clicks with a replay's.
CORPUS = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Account</title>
{{ widget }}</head>
<body>
  <h1>Account</h1>
  <form id="profile"><label>Nickname <input name="nickname"></label>
    <button type="submit">Save profile</button></form>
  <a href="#details">Details</a>
  <table><tr><td>Order 1001</td><td>Shipped</td></tr></table>
  <p><span>Plain words in a span</span></p>
  <div>Text in a div</div>
  <button data-qa="buy" type="button">Buy</button>
  <div id="shadow-host"></div>
  <script>
    const root = document.getElementById('shadow-host').attachShadow({mode: 'open'});
    root.innerHTML = '<button type="button">Inside the shadow</button>';
    const profile = document.getElementById('profile');
    profile.addEventListener('submit', (event) => event.preventDefault());
    document.addEventListener('click', (event) => {
      const path = event.composedPath();
      if (path.some((node) => node.hasAttribute && node.hasAttribute('data-svc-widget'))) return;
      navigator.sendBeacon('/seen', (path[0].textContent || path[0].localName).trim().slice(0, 40));
    }, true);
  </script>
</body>
</html>"""


class CheckoutSite:
    """The site on a real HTTP server in a thread at http://127.0.0.1:<port>; `hits` counts
    requests by path; `elsewhere` another origin its page asks, `redirect_to` where /away goes."""

    def __init__(self, svc_url: str | None = None, elsewhere: str = "", redirect_to: str = ""):
        self.svc_url = svc_url
        self.broken = True
        self.hits: dict[str, int] = {}
        self.seen: list[str] = []  # what the corpus page saw clicked, in order
        app = Flask(__name__)

        @app.before_request
        def count():
            self.hits[request.path] = self.hits.get(request.path, 0) + 1

        @app.get("/")
        @app.get("/checkout")
        def page():
            html = render_template_string(PAGE, widget=self.widget(), elsewhere=elsewhere)
            return Response(html)

        @app.get("/account")
        def corpus():
            html = render_template_string(CORPUS, widget=self.widget())
            return Response(html)

        @app.post("/seen")
        def seen():
            self.seen.append(request.get_data(as_text=True))
            return "", 204

        @app.post("/api/pay")
        def pay():
            if self.broken:
                return jsonify({"detail": "payment service down"}), 500
            return jsonify({"order": {"id": "A-1001"}})

        @app.get("/away")
        def away():
            return redirect(f"{redirect_to}/landing", 302)

        @app.get("/stuck")
        def stuck():
            time.sleep(120)
            return "late"

        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def widget(self):
        """The widget's tag for the project whose key the page's address holds."""
        return Markup(render_template_string(
            WIDGET, svc_url=self.svc_url, key=request.args.get("project", "")
        ))  # fmt: skip

    def __enter__(self) -> "CheckoutSite":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.thread.join(timeout=5)
