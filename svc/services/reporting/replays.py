"""Replays (docs/replay.md): the widget's gzipped rrweb events, checked, redacted
and stored in the object store beside the screenshots, whose rows, clean-up and deletion they
share (a replay is an upload like them; `Screenshot.content_type` tells them apart)."""

import gzip
import zlib

import orjson

from svc import storage
from svc.config import setting
from svc.errors import Invalid, TooLarge, not_found, size_in_words
from svc.models import Project, Screenshot, User
from svc.services.reporting import redaction, screenshots

MAX_INFLATED_BYTES = 10 * 1024 * 1024


def _inflate(body: bytes) -> bytes:
    """The gzip body's content, refused past MAX_INFLATED_BYTES without inflating further."""
    inflater = zlib.decompressobj(wbits=31)  # gzip framing only
    try:
        data = inflater.decompress(body, MAX_INFLATED_BYTES + 1)
    except zlib.error:
        raise Invalid({"body": ["Not gzip: send the events as gzip-compressed JSON."]}) from None
    if len(data) > MAX_INFLATED_BYTES:
        raise TooLarge(
            f"Replay too large: the limit is {size_in_words(MAX_INFLATED_BYTES)} inflated"
        )
    if not inflater.eof:
        raise Invalid({"body": ["The gzip stream ends early."]})
    return data


def _events(data: bytes) -> list:
    try:
        events = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise Invalid({"body": ["Not JSON: send a JSON array of rrweb events."]}) from None
    if not isinstance(events, list) or not all(isinstance(event, dict) for event in events):
        raise Invalid({"body": ["A JSON array of rrweb events (objects) is expected."]})
    if not events:
        raise Invalid({"body": ["The replay holds no events."]})
    return events


def upload(project: Project, body: bytes) -> Screenshot:
    """Check the events, apply the redaction of reports (§6) to every URL and text in them, and
    store them gzipped; the row is written once the object is in the store (as a screenshot's)."""
    events = redaction.redact_strings(_events(_inflate(body)), setting("SVC_REDACT_NAMES"))
    packed = gzip.compress(orjson.dumps(events), compresslevel=6)
    stored = storage.save_bytes(storage.current_store(), packed, "json.gz", storage.REPLAY_TYPE)
    return screenshots.record(project, stored)


def read_for(user: User, key: str) -> bytes:
    """The stored (gzipped) events of a replay of one of the user's projects; else 404."""
    replay = screenshots.find_for(user, key)
    if replay.content_type != storage.REPLAY_TYPE:
        raise not_found("Replay not found")
    stream = storage.current_store().open(key)
    if stream is None:
        raise not_found("Replay not found")
    with stream:
        return stream.read()
