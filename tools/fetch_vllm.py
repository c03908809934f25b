#!/usr/bin/env python3
"""Download, verify and unpack pinned vLLM release sources (and the 0.34.0 wheel).

    python tools/fetch_vllm.py VERSION [VERSION ...] [--cache DIR] [--wheel | --wheel-only]
    python tools/fetch_vllm.py --all [--cache DIR]
    python tools/fetch_vllm.py --check-index --all        # compare the lock with the index

For every VERSION the release sdist named in requirements/vllm-releases.lock.json is
located through the package index's JSON simple API (PEP 691), downloaded, checked
against the sha256 in the lock file, and the members ``vllm/``, ``tests/`` and
``requirements/`` are unpacked into ``<cache>/vllm-src/<VERSION>/``.  Nothing else of the
sdist is kept; the archive itself is deleted after extraction.  ``<cache>`` defaults to
``$VLLM_GUARD_CACHE``, else the user cache (``factories.locations.cache_dir``).

* Idempotent: a version whose directory carries a marker file (``.fetch_vllm.json``)
  recording the locked sha256 is skipped without network access.
* Safe to run concurrently: each version / wheel is guarded by its own lock file in
  ``<cache>/locks/``; leftovers of an interrupted run are removed under that lock.
* Atomic: each version is unpacked into a temporary sibling directory that is renamed
  into place only once complete (marker written last), so an interrupted run leaves no
  half-extracted tree under its final name.
* ``--wheel`` additionally downloads the locked wheel for this machine (the lock has one
  for 0.34.0, x86_64) into ``<cache>/wheels/``, verified the same way; ``--wheel-only``
  skips the sources.
* stdout: one line per result (an extracted directory or a wheel path); progress goes to
  stderr.  Any error (unknown version, hash mismatch, network failure) prints one line
  and exits with status 2.

The index URL is never hard-coded: it comes from ``--index-url``, else ``PIP_INDEX_URL``,
else pip's own configuration (``pip config list``), else pip's built-in default.  Only the
Python standard library is used (pip, if present, is consulted for its configuration).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import html.parser
import json
import os
import platform
import shutil
import ssl
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_LOCK = os.path.join(REPO_ROOT, "requirements", "vllm-releases.lock.json")
sys.path.insert(0, REPO_ROOT)
from factories.errors import FetchError  # noqa: E402  (stdlib only: runs before the venv)
from factories.locations import cache_dir  # noqa: E402  (stdlib only too)

DEFAULT_CACHE = str(cache_dir())
PROJECT = "vllm"
KEEP_TOP = ("vllm", "tests", "requirements")  # sdist members that are unpacked
MARKER = ".fetch_vllm.json"
MARKER_FORMAT = 1  # bump when the extracted layout changes, so old trees are redone
JSON_ACCEPT = "application/vnd.pypi.simple.v1+json"
CHUNK = 1 << 20
RETRIES = 3
TIMEOUT_S = 60


def log(msg: str) -> None:
    print(f"[fetch_vllm] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- lock file


def load_lock(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            lock = json.load(fh)
    except FileNotFoundError:
        raise FetchError(f"lock file not found: {path}") from None
    except (OSError, ValueError) as exc:
        raise FetchError(f"cannot read lock file {path}: {exc}") from None
    if not isinstance(lock.get("releases"), dict):
        raise FetchError(f"lock file {path} has no 'releases' table")
    return lock


def lock_entry(lock: dict, version: str, lock_path: str) -> dict:
    rel = lock["releases"].get(version)
    if rel is None:
        known = ", ".join(sorted(lock["releases"], key=_version_key))
        raise FetchError(f"vllm {version} is not in {os.path.relpath(lock_path)} (known: {known})")
    return rel


def _version_key(v: str):
    return tuple(int(p) if p.isdigit() else p for p in v.replace("-", ".").split("."))


def wheel_for_machine(rel: dict):
    """The locked wheel entry for this machine, or None."""
    wheels = rel.get("wheels") or {}
    return wheels.get(platform.machine())


# --------------------------------------------------------------------------- index access


def _pip_config() -> dict:
    """Values from `pip config list` (env-derived ones under ':env:.key')."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    values = {}
    for line in out.splitlines():
        key, sep, val = line.partition("=")
        if sep:
            values[key.strip()] = val.strip().strip("'\"")
    return values


def index_urls(explicit: str | None) -> list[str]:
    """[primary, *extra] index URLs, derived at run time (never hard-coded)."""
    cfg = None
    primary = explicit or os.environ.get("PIP_INDEX_URL")
    if not primary:
        cfg = _pip_config()
        for key in (":env:.index-url", "install.index-url", "global.index-url"):
            if cfg.get(key):
                primary = cfg[key]
                break
    if not primary:
        try:
            from pip._internal.models.index import PyPI  # pip's own default index

            primary = PyPI.simple_url
        except Exception:
            raise FetchError(
                "cannot determine the package index URL: pass --index-url or set "
                "PIP_INDEX_URL (pip is not importable to supply its default)"
            ) from None
    urls = [primary]
    if not explicit:
        extra = os.environ.get("PIP_EXTRA_INDEX_URL")
        if extra is None:
            cfg = cfg if cfg is not None else _pip_config()
            for key in (
                ":env:.extra-index-url",
                "install.extra-index-url",
                "global.extra-index-url",
            ):
                if cfg.get(key):
                    extra = cfg[key]
                    break
        for url in (extra or "").split():
            # local file:// indexes are static HTML trees without a JSON API
            if url.startswith(("http://", "https://")) and url not in urls:
                urls.append(url)
    return urls


def _ssl_context() -> ssl.SSLContext:
    cafile = os.environ.get("PIP_CERT") or None
    if cafile and not os.path.exists(cafile):
        cafile = None
    return ssl.create_default_context(cafile=cafile)


def _open(url: str, accept: str | None = None):
    headers = {"User-Agent": "fetch_vllm (urllib)"}
    if accept:
        headers["Accept"] = accept
    req = urllib.request.Request(url, headers=headers)
    kwargs = {"timeout": TIMEOUT_S}
    if url.startswith("https://"):
        kwargs["context"] = _ssl_context()
    return urllib.request.urlopen(req, **kwargs)


def _retrying(what: str, fn):
    delay = 2.0
    for attempt in range(1, RETRIES + 1):
        try:
            return fn()
        except urllib.error.HTTPError as exc:
            if exc.code < 500 or attempt == RETRIES:
                raise FetchError(f"{what}: HTTP {exc.code} {exc.reason}") from None
            err = f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            reason = getattr(exc, "reason", exc)
            if attempt == RETRIES:
                raise FetchError(f"{what}: network error: {reason}") from None
            err = str(reason)
        log(f"{what}: {err}; retrying in {delay:.0f}s ({attempt}/{RETRIES})")
        time.sleep(delay)
        delay *= 2
    raise AssertionError("unreachable")


class _Anchors(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.links.append(href)


def project_files(index_url: str) -> dict[str, dict]:
    """filename -> {"url", "sha256"} for the project on one index (JSON API, HTML fallback)."""
    page = index_url.rstrip("/") + f"/{PROJECT}/"

    def get():
        with _open(page, accept=f"{JSON_ACCEPT}, text/html;q=0.01") as resp:
            return resp.headers.get("Content-Type", ""), resp.read(), resp.geturl()

    ctype, body, final_url = _retrying(f"index page {page}", get)
    files = {}
    if "json" in ctype:
        try:
            data = json.loads(body)
            for f in data["files"]:
                files[f["filename"]] = {
                    "url": urllib.parse.urljoin(final_url, f["url"]),
                    "sha256": (f.get("hashes") or {}).get("sha256"),
                    "yanked": bool(f.get("yanked")),
                }
        except (ValueError, KeyError, TypeError) as exc:
            raise FetchError(f"index page {page}: malformed JSON simple API reply: {exc}") from None
    else:  # PEP 503 HTML page (an index without the JSON API)
        parser = _Anchors()
        parser.feed(body.decode("utf-8", "replace"))
        for href in parser.links:
            url = urllib.parse.urljoin(final_url, href)
            path, _, frag = url.partition("#")
            name = urllib.parse.unquote(path.rsplit("/", 1)[-1])
            sha = frag[len("sha256=") :] if frag.startswith("sha256=") else None
            files[name] = {"url": path, "sha256": sha, "yanked": False}
    return files


class Index:
    """Lazily queried package indexes (one GET per index per run)."""

    def __init__(self, explicit_url: str | None):
        self._explicit = explicit_url
        self._urls = None
        self._files = {}

    def locate(self, filename: str, sha256: str) -> str:
        if self._urls is None:
            self._urls = index_urls(self._explicit)
        for url in self._urls:
            if url not in self._files:
                log(f"querying index {url}")
                self._files[url] = project_files(url)
            entry = self._files[url].get(filename)
            if entry is None:
                continue
            if entry["sha256"] and entry["sha256"].lower() != sha256.lower():
                raise FetchError(
                    f"{filename}: index lists sha256 {entry['sha256']}, lock has {sha256}"
                )
            return entry["url"]
        raise FetchError(f"{filename} not found on index {', '.join(self._urls)}")

    def listed_sha256(self, filename: str):
        if self._urls is None:
            self._urls = index_urls(self._explicit)
        for url in self._urls:
            if url not in self._files:
                self._files[url] = project_files(url)
            if filename in self._files[url]:
                return self._files[url][filename]["sha256"]
        return None


# --------------------------------------------------------------------------- download


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def download(url: str, dest: str, entry: dict) -> None:
    """Stream url to dest (via dest.part), verifying size and sha256."""
    name = entry["filename"]
    part = dest + ".part"

    def attempt():
        h = hashlib.sha256()
        got = 0
        t0 = last = time.monotonic()
        with _open(url) as resp, open(part, "wb") as out:
            total = int(resp.headers.get("Content-Length") or entry.get("size") or 0)
            while True:
                block = resp.read(CHUNK)
                if not block:
                    break
                out.write(block)
                h.update(block)
                got += len(block)
                now = time.monotonic()
                if now - last >= 2.0:
                    last = now
                    pct = f"{100 * got / total:.0f}%, " if total else ""
                    log(f"  {name}: {_human(got)} ({pct}{_human(got / (now - t0))}/s)")
        return got, h.hexdigest(), time.monotonic() - t0

    try:
        got, digest, secs = _retrying(f"download {name}", attempt)
        if digest != entry["sha256"]:
            raise FetchError(
                f"sha256 mismatch for {name}: expected {entry['sha256']}, got {digest}"
            )
        os.replace(part, dest)
        log(f"  {name}: {_human(got)} in {secs:.1f}s, sha256 ok")
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(part)


# --------------------------------------------------------------------------- extraction


def _read_marker(path: str):
    try:
        with open(os.path.join(path, MARKER), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def is_extracted(dest: str, entry: dict) -> bool:
    m = _read_marker(dest)
    return bool(
        m
        and m.get("sha256") == entry["sha256"]
        and m.get("filename") == entry["filename"]
        and m.get("format") == MARKER_FORMAT
    )


def _selected_members(tar: tarfile.TarFile, prefix: str, skipped: list):
    """Yield the members under <prefix>/{vllm,tests,requirements}/, paths rebased."""

    def rebase(name: str):
        if name.startswith("./"):
            name = name[2:]
        if not name.startswith(prefix + "/"):
            return None
        rel = name[len(prefix) + 1 :]
        if os.path.isabs(rel) or ".." in rel.split("/"):
            raise FetchError(f"unsafe path in archive: {name}")
        return rel if rel.split("/", 1)[0] in KEEP_TOP else None

    for m in tar:
        rel = rebase(m.name)
        if rel is None:
            continue
        if m.issym():  # allowed only if it points inside the kept tree
            target = os.path.normpath(os.path.join(os.path.dirname(rel), m.linkname))
            if os.path.isabs(m.linkname) or target.split(os.sep, 1)[0] not in KEEP_TOP:
                skipped.append(m.name)
                continue
        elif m.islnk():  # hard link: names another (kept) member of the archive
            target = rebase(m.linkname)
            if target is None:
                skipped.append(m.name)
                continue
            m.linkname = target
        elif not (m.isfile() or m.isdir()):
            skipped.append(m.name)
            continue
        m.name = rel
        yield m


def extract_sdist(archive: str, entry: dict, version: str, dest: str) -> int:
    """Unpack the kept members into a temp dir next to dest, then rename it into place."""
    parent = os.path.dirname(dest)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".tmp-{version}-", dir=parent)
    prefix = entry["filename"][: -len(".tar.gz")]
    skipped: list = []
    count = 0
    try:
        t0 = time.monotonic()
        with tarfile.open(archive, "r|gz") as tar:
            kwargs = {}
            if hasattr(tarfile, "data_filter"):  # 3.10.12+, 3.11.4+, 3.12+
                kwargs["filter"] = "data"

            def counting():
                nonlocal count
                for m in _selected_members(tar, prefix, skipped):
                    count += 1
                    yield m

            tar.extractall(tmp, members=counting(), **kwargs)
        if count == 0:
            raise FetchError(f"{entry['filename']}: no {'/, '.join(KEEP_TOP)}/ members found")
        missing = [t for t in ("vllm", "tests") if not os.path.isdir(os.path.join(tmp, t))]
        if missing:
            raise FetchError(f"{entry['filename']}: archive lacks {', '.join(missing)}/")
        marker = {
            "format": MARKER_FORMAT,
            "version": version,
            "filename": entry["filename"],
            "sha256": entry["sha256"],
            "members": list(KEEP_TOP),
            "files": count,
            "extracted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        with open(os.path.join(tmp, MARKER), "w", encoding="utf-8") as fh:
            json.dump(marker, fh, indent=1)
            fh.write("\n")
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        old = None
        if os.path.lexists(dest):  # stale or incomplete tree: move it aside first
            old = tempfile.mkdtemp(prefix=f".old-{version}-", dir=parent)
            os.replace(dest, os.path.join(old, "tree"))
        os.replace(tmp, dest)
        tmp = None
        if old:
            shutil.rmtree(old, ignore_errors=True)
        log(
            f"  extracted {count} entries to {dest} in {time.monotonic() - t0:.1f}s"
            + (f" (skipped {len(skipped)} unsafe/special entries)" if skipped else "")
        )
    except tarfile.TarError as exc:
        raise FetchError(f"{entry['filename']}: corrupt archive: {exc}") from None
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return count


def _clean_stale(parent: str, prefixes) -> None:
    """Remove leftovers of an interrupted run on one item (caller holds its lock)."""
    if not os.path.isdir(parent):
        return
    for name in os.listdir(parent):
        if name.startswith(tuple(prefixes)):
            path = os.path.join(parent, name)
            log(f"removing leftover {path}")
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)


@contextlib.contextmanager
def item_lock(cache: str, item: str):
    """Serialise concurrent runs working on the same item (advisory flock, POSIX only).

    Locks are per item (one version's sources, one wheel), so two runs on the same cache
    can fetch different items in parallel (tools/setup_env.sh relies on that).
    """
    lock_dir = os.path.join(cache, "locks")
    os.makedirs(lock_dir, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX
        yield
        return
    with open(os.path.join(lock_dir, item + ".lock"), "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            log(f"waiting for another fetch_vllm run working on {item} ...")
            fcntl.flock(fh, fcntl.LOCK_EX)
        yield


# --------------------------------------------------------------------------- commands


def fetch_sources(version: str, rel: dict, cache: str, index: Index) -> str:
    with item_lock(cache, f"src-{version}"):
        return _fetch_sources_locked(version, rel["sdist"], cache, index)


def _fetch_sources_locked(version: str, entry: dict, cache: str, index: Index) -> str:
    src_root = os.path.join(cache, "vllm-src")
    dl_dir = os.path.join(cache, "downloads")
    dest = os.path.join(src_root, version)
    _clean_stale(src_root, (f".tmp-{version}-", f".old-{version}-"))
    _clean_stale(dl_dir, (entry["filename"] + ".part",))
    if is_extracted(dest, entry):
        log(f"vllm {version}: sources already in {dest} (sha256 {entry['sha256'][:12]}…)")
        return dest
    log(f"vllm {version}: fetching {entry['filename']}")
    os.makedirs(dl_dir, exist_ok=True)
    archive = os.path.join(dl_dir, entry["filename"])
    if os.path.exists(archive) and sha256_of(archive) == entry["sha256"]:
        log(f"  reusing verified {archive} from an interrupted run")
    else:
        download(index.locate(entry["filename"], entry["sha256"]), archive, entry)
    try:
        extract_sdist(archive, entry, version, dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(archive)
    return dest


def fetch_wheel(version: str, entry: dict, cache: str, index: Index) -> str:
    with item_lock(cache, f"wheel-{entry['filename']}"):
        return _fetch_wheel_locked(version, entry, cache, index)


def _fetch_wheel_locked(version: str, entry: dict, cache: str, index: Index) -> str:
    wheel_dir = os.path.join(cache, "wheels")
    os.makedirs(wheel_dir, exist_ok=True)
    _clean_stale(wheel_dir, (entry["filename"] + ".part",))
    dest = os.path.join(wheel_dir, entry["filename"])
    if os.path.exists(dest):
        if (
            os.path.getsize(dest) == entry.get("size", os.path.getsize(dest))
            and sha256_of(dest) == entry["sha256"]
        ):
            log(f"vllm {version}: wheel already in {dest} (sha256 ok)")
            return dest
        log(f"vllm {version}: cached {entry['filename']} fails verification; re-downloading")
        os.unlink(dest)
    log(f"vllm {version}: fetching {entry['filename']}")
    download(index.locate(entry["filename"], entry["sha256"]), dest, entry)
    return dest


def check_index(versions, lock, lock_path, index: Index) -> int:
    bad = 0
    for v in versions:
        rel = lock_entry(lock, v, lock_path)
        for entry in [rel["sdist"], *(rel.get("wheels") or {}).values()]:
            listed = index.listed_sha256(entry["filename"])
            ok = listed is not None and listed.lower() == entry["sha256"].lower()
            bad += not ok
            print(
                f"{'ok ' if ok else 'BAD'} {entry['filename']} lock={entry['sha256']} "
                f"index={listed or 'missing'}"
            )
    if bad:
        raise FetchError(f"{bad} lock entr{'y' if bad == 1 else 'ies'} disagree with the index")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description="Fetch and verify pinned vLLM release sources (see module docstring)."
    )
    ap.add_argument("versions", nargs="*", metavar="VERSION", help="e.g. 0.34.0")
    ap.add_argument("--all", action="store_true", help="every version in the lock file")
    ap.add_argument(
        "--cache",
        default=DEFAULT_CACHE,
        help="cache directory (default: $VLLM_GUARD_CACHE, else the user cache: %(default)s)",
    )
    ap.add_argument(
        "--print-cache-dir", action="store_true", help="print the cache directory and exit"
    )
    ap.add_argument(
        "--wheel",
        action="store_true",
        help="also download the locked wheel for this machine into <cache>/wheels/ "
        "(only VERSIONs with a locked wheel; the lock has 0.34.0 x86_64)",
    )
    ap.add_argument(
        "--wheel-only", action="store_true", help="like --wheel, but do not fetch the sources"
    )
    ap.add_argument("--lock", default=DEFAULT_LOCK, help="lock file (default: %(default)s)")
    ap.add_argument(
        "--index-url", default=None, help="simple index base URL (default: pip's configured index)"
    )
    ap.add_argument(
        "--check-index",
        action="store_true",
        help="only compare the lock's sha256 values with the index; no download",
    )
    args = ap.parse_args(argv)
    if args.print_cache_dir:
        print(os.path.abspath(args.cache))
        return 0

    lock = load_lock(args.lock)
    versions = list(args.versions)
    if args.all:
        versions += [v for v in sorted(lock["releases"], key=_version_key) if v not in versions]
    if not versions:
        ap.error("give at least one VERSION or --all")
    versions = list(dict.fromkeys(versions))
    rels = {v: lock_entry(lock, v, args.lock) for v in versions}  # fail before any work
    index = Index(args.index_url)

    if args.check_index:
        return check_index(versions, lock, args.lock, index)

    want_wheel = args.wheel or args.wheel_only
    wheels = {}
    if want_wheel:
        for v, rel in rels.items():
            w = wheel_for_machine(rel)
            if w:
                wheels[v] = w
        if not wheels:
            raise FetchError(
                f"no locked {platform.machine()} wheel for {', '.join(versions)} "
                f"(the lock has wheels for: "
                f"{', '.join(v for v, r in lock['releases'].items() if r.get('wheels')) or 'none'})"
            )

    cache = os.path.abspath(args.cache)
    t0 = time.monotonic()
    if not args.wheel_only:
        for v in versions:
            print(fetch_sources(v, rels[v], cache, index), flush=True)
    for v, w in wheels.items():
        print(fetch_wheel(v, w, cache, index), flush=True)
    log(f"done in {time.monotonic() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except FetchError as exc:
        print(f"fetch_vllm: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("fetch_vllm: interrupted", file=sys.stderr)
        sys.exit(130)
    except OSError as exc:  # disk full, permissions, ...
        print(f"fetch_vllm: error: {exc}", file=sys.stderr)
        sys.exit(2)
