"""One run of a generated test in a browser, as a process of its own: Playwright's test runner
(npm's @playwright/test, from the lockfile) in Chromium (SVC_REPRO_BROWSER), in a folder of its
own that holds the test, its configuration and the sandbox (sandbox.mjs, progress.mjs).

What the run can reach (docs/security.md): the staging origin alone. Every other request is
aborted by the sandbox's route and counted; a navigation's redirect, which a route does not
see, meets a proxy that answers nothing for every host but the staging one. A fresh context,
no stored credentials, no service workers; the process tree is killed at the limit. The
reporter's text reaches the process only inside the test file, as escaped string literals
and comments: never a shell, never an argument, never the environment.
"""

import contextlib
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from svc.config import node_modules_folder

HERE = Path(__file__).resolve().parent
SANDBOX_FILES = ("sandbox.mjs", "progress.mjs")
RUNNER = ("@playwright/test", "cli.js")
# Beyond the test's own limit: Node's and Chromium's start, the trace's writing.
GRACE_SECONDS = 30
# A step that finds nothing to click fails in this time, not at the run's limit.
ACTION_MS = 10_000
# Where every host but the staging one is sent: a port nothing answers on (discard).
NOWHERE_PROXY = "http://127.0.0.1:9"
# The background-networking flags keep Chromium from dialling Google.
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Playwright's runner refuses an older Node.js (Debian 12's is 18).
NODE_MAJOR = 20


@functools.cache
def _node_major(node: str) -> int:
    """The major version of the Node.js at `node` (asked once a process)."""
    try:
        said = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10)
        return int(said.stdout.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.SubprocessError):
        return 0


@dataclass
class Outcome:
    """What a run left: the progress file's records, in order, and its files."""

    records: list[dict] = field(default_factory=list)
    killed: bool = False  # at the wall-clock limit
    duration_ms: int = 0
    trace: Path | None = None
    screenshot: Path | None = None
    output: str = ""  # the last of what the runner printed, for the log


def browser_path(setting: str) -> str | None:
    """The Chromium SVC_REPRO_BROWSER names, if it is there."""
    if setting == "off":
        return None
    if setting == "auto":
        return shutil.which("chromium-headless-shell") or shutil.which("chromium")
    return setting if os.access(setting, os.X_OK) else None


def unavailable(config) -> str | None:
    """Why reports cannot be run on this host, in words; None when they can."""
    if config["SVC_REPRO_BROWSER"] == "off":
        return "SVC_REPRO_BROWSER is off"
    if browser_path(config["SVC_REPRO_BROWSER"]) is None:
        return "no Chromium found (install chromium-headless-shell, or set SVC_REPRO_BROWSER)"
    node = shutil.which("node")
    if node is None:
        return "Node.js is not installed"
    if _node_major(node) < NODE_MAJOR:
        return f"Playwright needs Node.js {NODE_MAJOR} or newer ({node} is older)"
    runner = node_modules_folder(config["SVC_NODE_MODULES"]).joinpath(*RUNNER)
    if not runner.is_file():
        return f"Playwright's test runner is not installed ({runner} missing): run make run"
    return None


def _proxy_args(origin: str) -> list[str]:
    """Every host but the staging origin's through a proxy that answers nothing (loopback
    too: Chromium would otherwise never proxy it)."""
    parts = urlsplit(origin)
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
    bypass = f"{host}:{parts.port}" if parts.port else host
    # `<-loopback>` first: after it, Chromium read the host's rule as undone (tried).
    return [f"--proxy-server={NOWHERE_PROXY}", f"--proxy-bypass-list=<-loopback>;{bypass}"]


def _config(browser: str, origin: str, timeout_seconds: int) -> str:
    args = CHROMIUM_ARGS + _proxy_args(origin)
    if os.geteuid() == 0:  # Chromium refuses to start its own sandbox as root
        args.append("--no-sandbox")
    settings = {
        "testDir": ".",
        "outputDir": "./results",
        "timeout": timeout_seconds * 1000,
        "retries": 0,
        "workers": 1,
        "reporter": [["./progress.mjs"]],
        "use": {
            "trace": "on",
            "screenshot": "on",
            "serviceWorkers": "block",
            "acceptDownloads": False,
            "actionTimeout": ACTION_MS,
            "navigationTimeout": ACTION_MS * 3,
            "launchOptions": {"executablePath": browser, "args": args},
        },
    }
    return f"export default {json.dumps(settings, indent=2)};\n"


def run(spec: str, origin: str, timeout_seconds: int, folder: Path, config) -> Outcome:
    """Run `spec` (written for the sandbox: `import ... from './sandbox.mjs'`) in `folder`."""
    browser = browser_path(config["SVC_REPRO_BROWSER"])
    modules = node_modules_folder(config["SVC_NODE_MODULES"])
    for name in SANDBOX_FILES:
        shutil.copyfile(HERE / name, folder / name)
    (folder / "node_modules").symlink_to(modules)
    (folder / "report.spec.ts").write_text(spec, encoding="utf-8")
    (folder / "playwright.config.mjs").write_text(_config(browser, origin, timeout_seconds))
    progress = folder / "progress.jsonl"
    progress.touch()
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "CI": "1",
        "PLAYWRIGHT_BROWSERS_PATH": str(folder / "no-downloads"),
        "SVC_REPRO_ORIGIN": origin,
        "SVC_REPRO_PROGRESS": str(progress),
    }
    command = ["node", str(modules.joinpath(*RUNNER)), "test", "--config", "playwright.config.mjs"]
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=folder,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the browser goes with it
    )
    outcome = Outcome()
    try:
        output, _ = process.communicate(timeout=timeout_seconds + GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        outcome.killed = True
        _kill(process)
        output, _ = process.communicate()
    finally:
        _kill(process)  # what the runner left behind (a browser's helpers)
    outcome.duration_ms = int((time.monotonic() - started) * 1000)
    outcome.output = _ANSI.sub("", output.decode("utf-8", "replace"))[-2000:]
    outcome.records = _records(progress)
    outcome.trace = next(iter(sorted(folder.glob("results/**/trace.zip"))), None)
    outcome.screenshot = next(iter(sorted(folder.glob("results/**/*.png"))), None)
    return outcome


def _kill(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _records(progress: Path) -> list[dict]:
    records = []
    for line in progress.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut by the kill
        if isinstance(record, dict):
            records.append(record)
    return records


def plain(message) -> str:
    """A message of the runner's in one line of text: its colours off, at most 300 characters."""
    text = _ANSI.sub("", str(message or "")).strip()
    return " ".join(text.split())[:300]
