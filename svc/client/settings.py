"""Where `svc login` keeps the address and the token: one JSON file in the user's configuration
directory, readable by its owner only. SVC_URL and SVC_TOKEN override it."""

import contextlib
import json
import os
from pathlib import Path


def path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "svc" / "credentials.json"


def load() -> dict:
    """{"url": ..., "token": ...} as saved, with the environment's values winning."""
    saved = {}
    with contextlib.suppress(OSError, ValueError):  # none saved yet, or not ours to read
        saved = json.loads(path().read_text())
    for key, variable in (("url", "SVC_URL"), ("token", "SVC_TOKEN")):
        if os.environ.get(variable):
            saved[key] = os.environ[variable]
    return saved


def save(url: str, token: str) -> Path:
    target = path()
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # Created with 0600 from the start: the token is never readable by others, not even briefly.
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump({"url": url, "token": token}, file)
    os.chmod(target, 0o600)  # an older file keeps its mode through O_TRUNC
    return target


def forget() -> bool:
    try:
        path().unlink()
    except FileNotFoundError:
        return False
    return True
