"""Replay's scripts (docs/replay.md): rrweb's recorder for the widget and its
replayer for the dashboard's player, served from the Node packages `make run` installs
(package-lock.json pins them; nothing of rrweb is in this repository).

- `/widget-replay.js`: rrweb's recorder, kept out of the page's globals, and `recorder.js`, ours,
  which keeps the last seconds of the page in memory. Loaded by the widget only when the project
  records replays.
- `/replay/player`: the page the dashboard frames, sandboxed, to play a replay; its scripts and
  stylesheet under `/replay/`. A recorded page is untrusted content: the player's policy loads
  nothing but these and data: or blob: images, and runs nothing of the recording.

Without the packages (no npm where svc was set up) svc runs as before and replay is
unavailable: `unavailable()` says why, once at start and on the project's settings page.
"""

import hashlib
import json
from functools import cache
from pathlib import Path

from flask import Blueprint, Response, current_app, request

from svc.config import node_modules_folder
from svc.errors import APIError
from svc.widget import public

bp = Blueprint("replay", __name__)

HERE = Path(__file__).resolve().parent
RECORDER = ("@rrweb/record", "umd/record.min.js")
REPLAYER = ("@rrweb/replay", "umd/replay.min.js")
REPLAYER_STYLE = ("@rrweb/replay", "dist/style.min.css")
# The player's files carry rrweb's version (or ours) in their address: kept a year.
IMMUTABLE = "public, max-age=31536000, immutable"


def folder_of(setting: str | None) -> Path:
    """The folder SVC_NODE_MODULES names, else the checkout's node_modules/."""
    return node_modules_folder(setting)


def node_modules() -> Path:
    """The app's folder of Node packages."""
    return folder_of(current_app.config["SVC_NODE_MODULES"])


def _file(package: tuple[str, str], folder: Path | None = None) -> Path:
    return (folder or node_modules()) / package[0] / package[1]


def unavailable(folder: Path | None = None) -> str | None:
    """Why replay cannot be offered here (the app's folder, unless given), or None when it can."""
    folder = folder or node_modules()
    for package in (RECORDER, REPLAYER, REPLAYER_STYLE):
        if not _file(package, folder).is_file():
            return (
                f"rrweb is not installed ({package[0]} missing in {folder}): "
                "install Node.js and npm, then run make run again"
            )
    return None


def rrweb_version() -> str:
    return json.loads((node_modules() / RECORDER[0] / "package.json").read_text())["version"]


@cache
def _assembled(folder: Path) -> tuple[bytes, str]:
    """rrweb's recorder (a UMD bundle) run with `this` an object of ours and no module system in
    sight, so that it touches none of the page's globals; then our recorder, given it."""
    vendor = _file(RECORDER, folder).read_text()
    ours = (HERE / "recorder.js").read_text()
    script = (
        "/*! svc replay recorder (docs/replay.md), with rrweb's recorder (MIT, "
        "github.com/rrweb-io/rrweb) */\n(function () {\nvar rrweb = {};\n"
        f"(function (exports, module, define) {{\n{vendor}\n}}).call(rrweb);\n"
        f"{ours}\nstartSvcReplay(rrweb.rrwebRecord);\n}})();\n"
    ).encode()
    return script, hashlib.sha256(script).hexdigest()[:32]


def _refuse_when_unavailable() -> None:
    reason = unavailable()
    if reason:
        raise APIError(404, f"Replay is unavailable: {reason}")


@bp.get("/widget-replay.js")
def recorder_script():
    """The widget's replay recorder, public and cacheable, for any origin."""
    _refuse_when_unavailable()
    script, etag = _assembled(node_modules())
    answer = Response(script, mimetype="text/javascript")
    answer.set_etag(etag)
    # The widget's script keeps its address: a day, then revalidated by its ETag (as widget.js).
    return public(answer).make_conditional(request)


def _player_files() -> dict[str, tuple[Path, str]]:
    version = rrweb_version()
    return {
        f"rrweb-replay-{version}.js": (_file(REPLAYER), "text/javascript"),
        f"rrweb-replay-{version}.css": (_file(REPLAYER_STYLE), "text/css"),
        "player.js": (HERE / "player.js", "text/javascript"),
        "player.css": (HERE / "player.css", "text/css"),
    }


def _policy() -> str:
    """The player's: its own files, images inline only, nothing from the recorded page."""
    origin = request.host_url.rstrip("/")
    return (
        f"default-src 'none'; script-src {origin}/replay/; style-src {origin}/replay/ "
        "'unsafe-inline'; img-src data: blob:; font-src data:; frame-src 'self' about:; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
    )


@bp.get("/replay/player")
def player():
    """The page the dashboard frames (sandboxed) to play a replay sent to it by postMessage."""
    _refuse_when_unavailable()
    version = rrweb_version()
    html = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Replay</title>
<link rel="stylesheet" href="/replay/rrweb-replay-{version}.css">
<link rel="stylesheet" href="/replay/player.css?v={_digest("player.css")}">
<script src="/replay/rrweb-replay-{version}.js"></script>
<script src="/replay/player.js?v={_digest("player.js")}" defer></script>
</head><body><main id="player" aria-label="Replay"></main></body></html>"""
    answer = Response(html, mimetype="text/html")
    answer.headers["Content-Security-Policy"] = _policy()
    answer.headers["X-Frame-Options"] = "SAMEORIGIN"
    answer.headers["Cache-Control"] = "no-cache"
    answer.headers["Referrer-Policy"] = "no-referrer"
    return answer


# For the API description (svc.openapi), which reads what svc.api.decorators.described records.
def _described(view, description: str, mimetypes: tuple[str, ...], conditional: bool = False):
    responses = {
        "200": {
            "description": description,
            "content": {kind: {"schema": {"type": "string"}} for kind in mimetypes},
        },
        "404": {
            "description": "Replay is unavailable here (rrweb is not installed), or no such file",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        },
    }
    if conditional:
        responses["304"] = {"description": "Not modified (If-None-Match matched the ETag)"}
    view.openapi_extra = {"responses": responses}


@cache
def _digest(name: str) -> str:
    return hashlib.sha256((HERE / name).read_bytes()).hexdigest()[:12]


@bp.get("/replay/<name>")
def player_file(name: str):
    """rrweb's replayer and stylesheet, and the player's own script and style."""
    _refuse_when_unavailable()
    found = _player_files().get(name)
    if found is None:
        raise APIError(404, "Not found")
    path, mimetype = found
    answer = Response(path.read_bytes(), mimetype=mimetype)
    answer.headers["Cache-Control"] = IMMUTABLE
    return answer


_described(recorder_script, "The replay recorder", ("text/javascript",), conditional=True)
_described(player, "The player's page", ("text/html",))
_described(player_file, "A file of the player", ("text/javascript", "text/css"))
