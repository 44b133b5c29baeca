"""/mcp on the service's own address (docs/mcp.md): the SDK's Streamable HTTP app (ASGI,
stateless, JSON answers) served from the same gunicorn workers as the API through a2wsgi,
so that users have one address and the operator one process to run. Why not a process of
its own: docs/mcp.md, "How it is served".

Each worker builds the server on its first /mcp request (importing the SDK costs memory only
where it is used), with one event-loop thread that runs the SDK's session manager (a2wsgi never
runs an ASGI lifespan). GET /mcp is a 405: the SDK would open an event stream there that holds a
sync worker until gunicorn's timeout.
"""

import asyncio
import json
import threading

from flask import Flask

PATH = "/mcp"


class Endpoint:
    """WSGI: /mcp to the MCP server, everything else to the Flask app unchanged."""

    def __init__(self, app: Flask, wsgi_app):
        self.app = app
        self.wsgi_app = wsgi_app
        self._served = None
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") != PATH:
            return self.wsgi_app(environ, start_response)
        if environ.get("REQUEST_METHOD") == "GET":
            body = json.dumps({"detail": "POST JSON-RPC messages to /mcp (no event stream)"})
            start_response("405 METHOD NOT ALLOWED", [("Content-Type", "application/json"),
                                                     ("Allow", "POST, DELETE")])  # fmt: skip
            return [body.encode()]
        return self._server()(environ, start_response)

    def _server(self):
        with self._lock:
            if self._served is None:
                self._served = self._start()
            return self._served

    def _start(self):
        from a2wsgi import ASGIMiddleware

        from svc.mcp import server

        mcp = server.build(self.app)
        asgi = mcp.streamable_http_app(
            streamable_http_path=PATH,
            json_response=True,
            stateless_http=True,
            transport_security=server.allowed_hosts(self.app.config.get("SVC_PUBLIC_URL")),
        )
        loop = asyncio.new_event_loop()
        started = threading.Event()

        async def run_manager():
            async with mcp.session_manager.run():
                started.set()
                await asyncio.Event().wait()

        threading.Thread(target=loop.run_forever, name="mcp", daemon=True).start()
        asyncio.run_coroutine_threadsafe(run_manager(), loop)
        started.wait(timeout=10)
        return ASGIMiddleware(asgi, loop=loop)
