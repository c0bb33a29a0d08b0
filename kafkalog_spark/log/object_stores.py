"""Log dirs in object storage (S3 and S3-compatible servers, Google Cloud Storage, Azure) as pyarrow filesystems.

The stores are fsspec's (s3fs, gcsfs, adlfs), not pyarrow's own S3 and GCS filesystems, for what each request
costs: pyarrow opens every file with a HEAD request for its size and cannot be given the size a listing already
returned, while fsspec's files take it and its filesystems keep their listings. Reading a log dir then costs one
LIST per 1,000 keys (the log dir is listed recursively, once) and one ranged GET per chunk of a `.log` file.

Credentials, endpoints and regions come from each cloud's own chain (for S3: ``AWS_ENDPOINT_URL``, the keys,
``AWS_REGION``, ``AWS_PROFILE`` and its config files, instance roles), unless :class:`StoreOptions` (the source's
``storeEndpoint``, ``storeRegion`` and ``storeAnonymous``, the CLI's ``--store-*``) say otherwise. The options
travel with the source's options to the executors, which :func:`configure` their worker process with them.
Everything here only lists and reads: no call writes, renames or deletes in a store.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import datetime
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

# URI scheme -> (fsspec protocol, the package that implements it)
SCHEMES = {
    "s3": ("s3", "s3fs"), "s3a": ("s3", "s3fs"), "s3n": ("s3", "s3fs"),
    "gs": ("gcs", "gcsfs"), "gcs": ("gcs", "gcsfs"),
    "abfs": ("abfs", "adlfs"), "abfss": ("abfs", "adlfs"), "az": ("abfs", "adlfs"),
}
EXTRAS = {"s3fs": "s3", "gcsfs": "gcs", "adlfs": "azure"}  # package -> the extra of ours that installs it
# The environment each cloud's credential chain reads: a change (a test's server, a new profile) is a new store.
_ENVIRONMENT = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE",
                "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "STORAGE_EMULATOR_HOST",
                "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT_NAME",
                "AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_SAS_TOKEN")
# Throttling (503 SlowDown) and dropped connections are retried with the SDK's exponential backoff and jitter.
MAX_ATTEMPTS = 5
CONNECT_TIMEOUT_S = 10
READ_TIMEOUT_S = 60


class ObjectStoreError(OSError):
    """A store that cannot be used as asked: its package is not installed, or its URI names no bucket."""


@dataclass(frozen=True)
class StoreOptions:
    """What a user may set beyond the cloud's own environment: an S3-compatible server's (or a GCS or Azure
    emulator's) endpoint, the region, and anonymous access to public buckets."""

    endpoint: str | None = None
    region: str | None = None
    anonymous: bool = False
    # A directory on this host where a job keeps the small files it read whole from a store, for its other reads
    # (:func:`file_cache`); set by a job whose processes all run on this host, not by users.
    file_cache: str | None = None

    def to_options(self) -> dict[str, str]:
        """As the source's options (none for the defaults)."""
        return {k: v for k, v in (("storeEndpoint", self.endpoint), ("storeRegion", self.region),
                                  ("storeAnonymous", "true" if self.anonymous else None),
                                  ("storeFileCache", self.file_cache)) if v is not None}

    @classmethod
    def from_options(cls, options: dict[str, str]) -> StoreOptions:
        """From the source's options (keys in lower case, as Spark hands them over)."""
        anonymous = options.get("storeanonymous", "false").lower()
        if anonymous not in ("true", "false"):
            raise ValueError(f"kafkalog: storeAnonymous must be true or false, not {anonymous!r}")
        return cls(options.get("storeendpoint") or None, options.get("storeregion") or None, anonymous == "true",
                   options.get("storefilecache") or None)


_configured = StoreOptions()


def configure(options: StoreOptions) -> None:
    """The options this process opens stores with: the CLI's on the driver, the source's in each task."""
    global _configured
    _configured = options


def configured() -> StoreOptions:
    return _configured


# Whole files up to this size read from a store are kept in a job's file cache: indexes, transaction indexes,
# snapshots and checkpoints, which several views of one job read (an active segment's preallocated 10 MiB index is
# fetched by each).
FILE_CACHE_MAX_BYTES = 8 << 20


@contextmanager
def file_cache(enabled: bool) -> Iterator[None]:
    """For the block, a fresh directory on this host keeps the small files read whole from a store
    (:func:`read_whole`), so that the job's views, its planning and its tasks fetch each once; removed at the end.
    Only for a job whose processes all run on this host (a local session): a cluster's executors would keep their
    copies where no one removes them. Nothing when not ``enabled``."""
    if not enabled:
        yield
        return
    before = _configured
    directory = tempfile.mkdtemp(prefix="kafkalog-file-cache-")
    configure(replace(before, file_cache=directory))
    try:
        yield
    finally:
        configure(before)
        shutil.rmtree(directory, ignore_errors=True)


def read_whole(uri: str, size: int, length: int, read: Callable[[], bytes]) -> bytes:
    """The first ``length`` bytes of the object at ``uri`` (``size`` bytes as listed): ``read()``'s, kept in the
    job's file cache when one is configured, or the cache's copy when it holds them. A cache that cannot be read or
    written costs a request, never a result; files are written whole under a temporary name, then renamed, so a
    process never reads another's half-written copy."""
    cache = _configured.file_cache
    if not cache or length > FILE_CACHE_MAX_BYTES or not is_object_store(uri):
        return read()
    path = os.path.join(cache, hashlib.sha256(f"{uri}\0{size}\0{length}".encode()).hexdigest())
    try:
        with open(path, "rb") as f:
            data = f.read()
        if len(data) == length:
            return data
    except OSError:
        pass
    data = read()
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(temporary, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except OSError:
        with suppress(OSError):
            os.remove(temporary)
    return data


def is_object_store(path: str) -> bool:
    return path.partition("://")[0].lower() in SCHEMES


def split(uri: str) -> tuple[str, str, str]:
    """(fsspec protocol, Azure account or "", path inside the store) of a store URI: ``bucket/key`` for S3 and
    GCS, ``container/path`` for Azure (``abfss://container@account.dfs.core.windows.net/path``)."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    protocol, _ = SCHEMES[scheme]
    bucket, _, host = parts.netloc.partition("@")
    if not bucket:
        raise ObjectStoreError(f"{uri}: expected {scheme}://BUCKET/path")
    account = host.split(".", 1)[0] if protocol == "abfs" else ""
    return protocol, account, f"{bucket}/{parts.path.lstrip('/')}".rstrip("/")


def resolve(uri: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path inside it) for a store URI, the filesystem shared by every call with the same options
    and environment."""
    protocol, account, inner = split(uri)
    env = tuple(os.environ.get(name) for name in _ENVIRONMENT)
    return _filesystem(protocol, account, replace(_configured, file_cache=None), env), inner


_LIVE: dict[tuple, pafs.PyFileSystem] = {}


def _filesystem(protocol: str, account: str, options: StoreOptions, env: tuple) -> pafs.FileSystem:
    key = (protocol, account, options, env)
    if key not in _LIVE:
        if len(_LIVE) >= 16:  # environments come and go (tests); a process keeps a few stores, not all
            _LIVE.pop(next(iter(_LIVE)))
        _LIVE[key] = pafs.PyFileSystem(ObjectStoreHandler(_fsspec(protocol, account, options)))
    return _LIVE[key]


def _fsspec(protocol: str, account: str, options: StoreOptions):
    package = next(p for proto, p in SCHEMES.values() if proto == protocol)
    try:
        module = importlib.import_module(package)
    except ImportError:
        raise ObjectStoreError(f"reading {protocol} URIs needs the {package} package: "
                               f"pip install 'kafkalog-spark[{EXTRAS[package]}]'") from None
    common = {"skip_instance_cache": True}
    if protocol == "s3":
        client = {"region_name": options.region} if options.region else {}
        if options.endpoint:
            client["endpoint_url"] = options.endpoint
        return module.S3FileSystem(
            anon=options.anonymous, client_kwargs=client, default_cache_type="none",
            config_kwargs={"retries": {"mode": "standard", "max_attempts": MAX_ATTEMPTS},
                           "connect_timeout": CONNECT_TIMEOUT_S, "read_timeout": READ_TIMEOUT_S}, **common)
    if protocol == "gcs":
        extra = {"endpoint_url": options.endpoint} if options.endpoint else {}
        # Under STORAGE_EMULATOR_HOST, anonymous, as Google's own client library (google-cloud-storage) is there:
        # gcsfs would first try the default credentials, which ask the GCE metadata server (off this machine).
        emulator = os.environ.get("STORAGE_EMULATOR_HOST", "") not in ("", "default")
        # gcsfs.core's filesystem, the JSON API alone: since gcsfs 2026.3 `gcsfs.GCSFileSystem` is by default its
        # ExtendedGcsFileSystem (GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT), which asks the Storage Control API over gRPC
        # for a bucket's layout before it lists or opens, and where that cannot be answered (an emulator, a
        # network or role that allows the JSON API only) retries for 60 s and asks again at the next call. What it
        # adds (HNS folder operations, gRPC reads of zonal buckets) kafkalog does not use.
        gcs = importlib.import_module("gcsfs.core")
        # gcsfs logs each request it gives up on, with its traceback, and then raises: the error reaches the user
        # once, as a finding or a one-line error naming the URI. An application that set gcsfs's level keeps it.
        if logging.getLogger("gcsfs").level == logging.NOTSET:
            logging.getLogger("gcsfs").setLevel(logging.CRITICAL)
        return gcs.GCSFileSystem(token="anon" if options.anonymous or emulator else None, **extra, **common)
    extra = {}
    if options.endpoint:
        scheme, sep, host = options.endpoint.partition("://")
        if sep and scheme.lower() == "http":
            # An emulator over plain HTTP (Azurite: http://127.0.0.1:10000/devstoreaccount1): adlfs makes
            # https://{account_host} of a host, so only a connection string can name an http endpoint; it carries
            # the account's key or SAS token from the environment, as adlfs would have read them.
            name = account or os.environ.get("AZURE_STORAGE_ACCOUNT_NAME")
            key, sas = os.environ.get("AZURE_STORAGE_ACCOUNT_KEY"), os.environ.get("AZURE_STORAGE_SAS_TOKEN")
            creds = ("" if options.anonymous else f"AccountName={name};AccountKey={key};" if name and key
                     else f"SharedAccessSignature={sas.lstrip('?')};" if sas else "")
            extra["connection_string"] = f"BlobEndpoint={options.endpoint.rstrip('/')};{creds}"
        else:  # a host (a sovereign cloud's, a private endpoint's), with or without https://
            extra["account_host"] = host.rstrip("/") if sep else options.endpoint
    return module.AzureBlobFileSystem(account_name=account, anon=options.anonymous or None, **extra, **common)


class ObjectStoreHandler(pafs.FSSpecHandler):
    """pyarrow's view of an fsspec store: read-only, listings from one request per 1,000 keys (kept until
    :func:`fresh_listings`), files opened without a request when their size is known, and each object's time
    of last modification as its mtime (a store keeps no file times: an upload's time stands for it)."""

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        base = selector.base_dir.rstrip("/")
        with store_errors():
            try:
                entries = (self.find(base).values() if selector.recursive else self.fs.ls(base, detail=True))
            except FileNotFoundError:
                if selector.allow_not_found:
                    return []
                raise
            entries = [e for e in entries if e["name"].rstrip("/") != base or e["type"] != "directory"]
            if len(entries) == 1 and entries[0]["name"].rstrip("/") == base:
                raise NotADirectoryError(base)
            if not entries and not self.fs.exists(base):
                raise FileNotFoundError(base)
        return [self._info(e["name"], e) for e in entries]

    def find(self, base: str) -> dict[str, dict]:
        """Everything under ``base`` (one paginated listing with no delimiter), kept as the listing of each directory
        in it (and of ``base``) that the store's filesystem did not keep itself: s3fs and gcsfs keep them, adlfs does
        not, so each directory's listing and each open that follows would ask again (two listings a directory)."""
        found = self.fs.find(base, withdirs=True, detail=True)
        listings: dict[str, list[dict]] = {base: []}
        for name, entry in found.items():
            name = name.rstrip("/")
            if name == base:
                continue
            listings.setdefault(name.rpartition("/")[0], []).append(entry)
            if entry["type"] == "directory":
                listings.setdefault(name, [])
        for directory, entries in listings.items():
            if directory not in self.fs.dircache:
                self.fs.dircache[directory] = entries
        return found

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        out = []
        with store_errors():
            for path in paths:
                try:
                    out.append(self._info(path, self.fs.info(path)))
                except FileNotFoundError:
                    out.append(pafs.FileInfo(path, pafs.FileType.NotFound))
        return out

    @staticmethod
    def _info(path: str, info: dict) -> pafs.FileInfo:
        kind = {"file": pafs.FileType.File, "directory": pafs.FileType.Directory}.get(info["type"],
                                                                                    pafs.FileType.Unknown)
        mtime = next((info[k] for k in _MTIME_KEYS if info.get(k) is not None), None)
        if isinstance(mtime, str):
            mtime = datetime.fromisoformat(mtime.replace("Z", "+00:00"))
        return pafs.FileInfo(path.rstrip("/"), kind, size=info.get("size") if kind == pafs.FileType.File else None,
                             mtime=mtime)

    def open_sized(self, path: str, size: int) -> pa.NativeFile:
        """``path`` (``size`` bytes, as listed) for random access: each ``read_at`` is one ranged GET."""
        details = {"name": path, "size": size, "type": "file"}
        with store_errors():
            file_class = _LOOKS_UP_ON_OPEN.get(type(self.fs).__module__.partition(".")[0])
            if file_class:
                f = _open_with_details(file_class, self.fs, path, details)
            else:
                f = self.fs.open(path, mode="rb", size=size, cache_type="none")
                if getattr(f, "_details", True) is None:  # s3fs would ask for them (a HEAD) on the first read
                    f.details = details
        return pa.PythonFile(_StoreFile(f), mode="r")

    def open_input_file(self, path: str) -> pa.NativeFile:
        with store_errors():
            return pa.PythonFile(_StoreFile(self.fs.open(path, mode="rb", cache_type="none")), mode="r")

    def remember_listing(self, path: str, sizes: dict[str, int]) -> None:
        """Take a directory's listing as another process made it (the driver's, in a task), so that its files
        open without a request each."""
        self.fs.dircache[path] = [{"name": f"{path}/{name}", "size": size, "type": "file"}
                                  for name, size in sizes.items()]

    def _refuse(self, *args, **kwargs):
        raise PermissionError("kafkalog never writes to the store it reads log dirs from")

    create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = delete_file = _refuse
    move = copy_file = open_output_stream = open_append_stream = _refuse


@contextmanager
def store_errors() -> Iterator[None]:
    """A store's failures as the OSErrors the readers report as findings (they catch nothing else): the SDKs raise
    their own types for missing credentials, expired tokens and timeouts. Their messages name no secret."""
    try:
        yield
    except OSError:
        raise
    except Exception as e:
        name = type(e).__name__
        # Azure's SDK says a refused key only by the status of its HttpResponseError (Google's by a code)
        status = getattr(e, "status_code", None) or getattr(e, "code", None)
        denied = status in (401, 403) or any(word in name for word in ("Credential", "Auth", "Token", "Signature"))
        raise (PermissionError if denied else OSError)(f"{name}: {e}") from None


# The stores whose files look their object up when opened for reading (gcsfs's for its content type and metadata,
# adlfs's for its properties), whatever size they are given: a request each (an object GET and a listing for gcsfs)
# where the process keeps no listing of the file's directory, as in a task that reads one `.log` split. Such files
# are made with the details the listing gave instead. (package -> its read-file class: module, name)
_LOOKS_UP_ON_OPEN = {"gcsfs": ("gcsfs.core", "GCSFile"), "adlfs": ("adlfs.spec", "AzureBlobFile")}


def _open_with_details(file_class: tuple[str, str], fs, path: str, details: dict):
    """``file_class``'s read-mode file of ``path``, its lookup answered by ``details``: both classes ask for
    ``details`` (fsspec's property, which makes the request only while ``_details`` is unset) in their constructor,
    so it is set first. Opening the same file through ``fs.open`` differs only in that request."""
    cls = getattr(importlib.import_module(file_class[0]), file_class[1])
    f = cls.__new__(cls)
    f._details = details
    cls.__init__(f, fs, path, mode="rb", cache_type="none")  # the size, too, from the details
    return f


class _StoreFile:
    """An fsspec file whose reads raise OSErrors only (:func:`store_errors`), for pyarrow to wrap."""

    def __init__(self, f) -> None:
        self._f = f

    def read(self, n: int = -1) -> bytes:
        with store_errors():
            return self._f.read(n)

    def readinto(self, b) -> int:
        with store_errors():
            return self._f.readinto(b)

    def __getattr__(self, name: str):
        return getattr(self._f, name)


# Where each store's listing says when an object was last written: s3fs, gcsfs, adlfs.
_MTIME_KEYS = ("LastModified", "updated", "last_modified", "mtime")


def fresh_listings() -> None:
    """Forget every listing this process keeps: a planning pass or a task sees the store as it is now."""
    for fs in _LIVE.values():
        fs.handler.fs.invalidate_cache()


def prefetch_listing(fs: pafs.FileSystem, inner: str, *, recursive: bool = True) -> None:
    """List a store's ``inner`` (everything under it, in one paginated request with no delimiter: 1,000 keys a
    request), so that the listings of its directories and the opens of its files that follow are answered from
    it; nothing for other filesystems. A failure is left to the listing or the read that follows to report."""
    if is_store_filesystem(fs):
        try:
            with store_errors():
                if recursive:
                    fs.handler.find(inner)
                else:
                    fs.handler.fs.ls(inner, detail=True)
        except OSError:
            pass


def is_store_filesystem(fs: pafs.FileSystem) -> bool:
    return isinstance(getattr(fs, "handler", None), ObjectStoreHandler)


def remember_listing(path: str, sizes: dict[str, int]) -> None:
    """A store directory's files and sizes as listed elsewhere (:meth:`ObjectStoreHandler.remember_listing`);
    nothing for other filesystems."""
    if is_object_store(path):
        fs, inner = resolve(path)
        fs.handler.remember_listing(inner, sizes)


def open_sized(fs: pafs.FileSystem, inner: str, size: int) -> pa.NativeFile:
    """``inner`` in the store ``fs`` (:func:`is_store_filesystem`), opened without asking the store its size."""
    return fs.handler.open_sized(inner, size)
