"""The object store as an S3-compatible bucket (AWS S3, MinIO, SeaweedFS, Ceph, R2...), through
boto3. Credentials come from where boto3 looks for them (AWS_ACCESS_KEY_ID and the rest, or the
credential files). An upload is spooled on local disk and sent with boto3's managed transfer: one
PUT, or a multipart upload that S3 shows under its key only once it is complete."""

from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import boto3
from boto3.exceptions import S3UploadFailedError
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from svc import storage

PRESIGNED_SECONDS = 60
SINGLE_PUT_BYTES = 8 * 1024 * 1024  # boto3's own threshold for a multipart upload
_DELETE_BATCH = 1000  # the most one DeleteObjects request takes
_MISSING = {"404", "NoSuchKey", "NotFound"}


class S3Store:
    kind = "s3"
    keeps_spool_file = False

    def __init__(self, url: str, bucket: str, prefix: str, instance_path: Path, options):
        options = options or storage.S3Options()
        addressing = options.addressing
        if addressing == "auto":
            addressing = "path" if options.endpoint_url else "virtual"
        self.location = url
        self.bucket = bucket
        self.prefix = f"{prefix}/" if prefix else ""
        self.spool_dir = instance_path / ".incoming"
        self.presigned = options.presigned_downloads
        # A store that is down must fail a request in seconds (a 503), not hold a worker.
        self.client = boto3.session.Session().client(
            "s3",
            endpoint_url=options.endpoint_url,
            region_name=options.region,
            config=Config(
                s3={"addressing_style": addressing},
                signature_version="s3v4",  # presigned URLs too: SigV2 is gone from most stores
                connect_timeout=3,
                read_timeout=20,
                retries={"total_max_attempts": 2, "mode": "standard"},
            ),
        )

    def _name(self, key: str) -> str:
        if not storage.is_key(key):
            raise ValueError(f"not a key of svc's: {key!r}")
        return self.prefix + key

    def put_file(self, key: str, path: Path, content_type: str) -> None:
        with _unavailable_on_failure():
            if path.stat().st_size < SINGLE_PUT_BYTES:
                # One PUT: boto3's managed transfer costs a thread pool per call (bench.storage).
                with open(path, "rb") as file:
                    self.client.put_object(
                        Bucket=self.bucket, Key=self._name(key), Body=file, ContentType=content_type
                    )
            else:
                self.client.upload_file(
                    str(path), self.bucket, self._name(key), ExtraArgs={"ContentType": content_type}
                )
        storage.remove_file(path)

    def put_stream(self, key: str, stream: BinaryIO, content_type: str) -> None:
        with _unavailable_on_failure():
            self.client.upload_fileobj(
                stream, self.bucket, self._name(key), ExtraArgs={"ContentType": content_type}
            )

    def open(self, key: str) -> BinaryIO | None:
        if not storage.is_key(key):
            return None
        with _unavailable_on_failure():
            try:
                return self.client.get_object(Bucket=self.bucket, Key=self._name(key))["Body"]
            except ClientError as exc:
                if _code(exc) in _MISSING:
                    return None
                raise

    def size_of(self, key: str) -> int | None:
        if not storage.is_key(key):
            return None
        with _unavailable_on_failure():
            try:
                head = self.client.head_object(Bucket=self.bucket, Key=self._name(key))
            except ClientError as exc:
                if _code(exc) in _MISSING:
                    return None
                raise
        return head["ContentLength"]

    def local_path(self, key: str) -> Path | None:
        return None

    def download_url(self, key: str, content_type: str) -> str | None:
        if not self.presigned:
            return None
        return self.client.generate_presigned_url(
            "get_object",
            Params={
                "Bucket": self.bucket,
                "Key": self._name(key),
                "ResponseContentType": content_type,
                # svc's own download answers say the same: never rendered as a page of the
                # store's origin, never kept by a shared cache (the URL works for 60 s).
                "ResponseContentDisposition": "attachment",
                "ResponseCacheControl": "private, no-store",
            },
            ExpiresIn=PRESIGNED_SECONDS,
        )

    def delete(self, keys: Iterable[str]) -> None:
        names = [self._name(key) for key in keys if storage.is_key(key)]
        for start in range(0, len(names), _DELETE_BATCH):
            batch = names[start : start + _DELETE_BATCH]
            with _unavailable_on_failure():
                answer = self.client.delete_objects(
                    Bucket=self.bucket,
                    Delete={"Objects": [{"Key": name} for name in batch], "Quiet": True},
                )
            # Quiet: only the objects it could not delete are listed (a missing one counts as
            # deleted).
            if answer.get("Errors"):
                raise storage.storage_unavailable(f"{len(answer['Errors'])} objects not deleted")

    def is_empty(self) -> bool:
        with _unavailable_on_failure():
            listed = self.client.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix, MaxKeys=1)
        return not listed.get("KeyCount")

    def check(self) -> None:
        with _unavailable_on_failure():
            self.client.head_bucket(Bucket=self.bucket)


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


@contextmanager
def _unavailable_on_failure():
    """What the store does not answer, or refuses, is a StorageUnavailable (a 503 with
    Retry-After); a missing object is the caller's to decide."""
    try:
        yield
    except (BotoCoreError, ClientError, S3UploadFailedError) as error:
        if isinstance(error, ClientError) and _code(error) in _MISSING:
            raise
        storage.log.warning("object store: %s", error)
        raise storage.storage_unavailable("unreachable or refusing") from error
