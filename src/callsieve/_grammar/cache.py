"""Strategy: keep a compiled grammar's derived tables across processes (a per-user cache
folder) and within one (a memo that builds each grammar once, however many threads ask).

What it does: ``digest`` names a grammar by everything its derived tables depend on: the
joined grammar text and dialects, this cache's format, the callsieve, Lark and Python
versions, and the source of the modules that derive the tables (so an edited checkout never
reads tables an older derivation wrote). ``read``/``write`` keep one pickle per digest in
``cache_dir()``: ``$CALLSIEVE_CACHE_DIR`` if set (``""``, ``off``, ``0``, ``false`` or
``none``: no cache), else ``$XDG_CACHE_HOME/callsieve``, else ``~/.cache/callsieve`` — never
next to the package. ``OncePerKey`` is the process's memo of loaded grammars.
What it guarantees: a cache problem is never an error: a folder that cannot be made or
written means no cache; a file that is missing, unreadable, truncated, corrupt or from
another digest is ignored (the caller rebuilds it, and the rebuild replaces it). A write goes
to a temporary file in the same folder, then ``os.replace``, so a process never reads a
half-written file; a file whose content does not match the sha-256 it starts with is not
read. Reading unpickles only plain data and the globals the caller allows (no other class or
function is ever looked up). ``OncePerKey`` makes each value once per key even when many
threads ask at once (a lock per key, taken only when the value is missing; a hit is one
``dict`` lookup, no lock).
What it costs: reading the few derivation sources once per process (a sha-256 of ~60 kB);
per grammar loaded, one file read (~0.5 MB for the built-in grammar), its sha-256 and an
unpickle (~1 ms in all); at most ``KEEP_FILES`` such files on disk; nothing once a grammar
is loaded.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = ["ENV_VAR", "OncePerKey", "cache_dir", "digest", "read", "write"]

ENV_VAR = "CALLSIEVE_CACHE_DIR"
#: Bumped whenever what ``write`` stores changes shape.
FORMAT = 1
_OFF = ("", "off", "0", "false", "none")
#: Grammar tables kept in the folder; past it the least recently written are dropped.
KEEP_FILES = 64
#: The modules whose code decides what a grammar's derived tables hold.
#: (Found beside this file, in a checkout and in a wheel.)
_DERIVERS = (
    "../_base/re_internals.py",
    "compiled.py",
    "specs.py",
    "derive.py",
    "sources.py",
    "automaton.py",
    "prefix.py",
    "patterns.py",
    "cache.py",
    "namespace.py",
    "dialects.py",
    "no_lexer.py",
    "names.py",
    "rule_sets.py",
    "entry_tables.py",
    "lark_internals.py",
)
_code_digest: str | None = None

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def cache_dir() -> Path | None:
    """The cache folder (not made yet), or None when caching is off (read at each call)."""
    value = os.environ.get(ENV_VAR)
    if value is not None:
        if value.strip().lower() in _OFF:
            return None
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # (the XDG spec: a relative path is ignored)
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):  # no home folder to be found
            return None
    return Path(base) / "callsieve"


def _derivers_digest() -> str:
    """A digest of the derivation modules' source (empty where it cannot be read)."""
    global _code_digest
    if _code_digest is None:
        h = hashlib.sha256()
        here = Path(__file__).resolve().parent
        for name in _DERIVERS:
            try:
                h.update((here / name).read_bytes())
            except OSError:
                h.update(b"?")
            h.update(b"\0")
        _code_digest = h.hexdigest()
    return _code_digest


def digest(text: str, parts: Iterable[str] = ()) -> str:
    """The cache key (hex) of a grammar text and any other ``parts`` it was built with."""
    import lark

    package = __name__.partition(".")[0]  # (the top package, ``callsieve``)
    version = getattr(sys.modules.get(package), "__version__", "")
    h = hashlib.sha256()
    for item in (
        str(FORMAT),
        str(version),
        str(lark.__version__),
        sys.version,
        str(sys.implementation.cache_tag),
        _derivers_digest(),
        *parts,
        text,
    ):
        h.update(item.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


class _Unpickler(pickle.Unpickler):
    """Unpickles plain data and the few globals it is given; anything else is refused."""

    def __init__(self, data: bytes, allowed: dict[tuple[str, str], Any]) -> None:
        super().__init__(io.BytesIO(data))
        self._allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        try:
            return self._allowed[module, name]
        except KeyError:
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed here") from None


def _path(folder: Path, key: str) -> Path:
    return folder / f"grammar-{key}.pickle"


def read(key: str, allowed: dict[tuple[str, str], Any]) -> Any:
    """What ``write`` stored under ``key``, or None (no cache, no file, or a bad one)."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        data = _path(folder, key).read_bytes()
    except OSError:
        return None
    check, _, body = data.partition(b"\n")
    if check != hashlib.sha256(body).hexdigest().encode():
        return None  # truncated or damaged
    try:
        payload = _Unpickler(body, allowed).load()
    except Exception:  # noqa: BLE001 - corrupt: ignored, rebuilt by the caller
        return None
    if not isinstance(payload, dict) or payload.get("key") != key:
        return None
    return payload.get("value")


def write(key: str, make: Callable[[], Any]) -> bool:
    """Store ``make()`` under ``key`` (atomically); False if there is no cache to write to
    (then ``make`` is not called: what it costs is spent only on a file that will be kept)."""
    folder = cache_dir()
    if folder is None:
        return False
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".grammar-{key[:16]}-", suffix=".tmp", dir=folder)
    except OSError:
        return False
    done = False
    try:
        with os.fdopen(fd, "wb") as f:
            body = pickle.dumps({"key": key, "value": make()}, protocol=pickle.HIGHEST_PROTOCOL)
            f.write(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        os.replace(tmp, _path(folder, key))
        done = True
    except OSError:
        return False
    finally:
        if not done:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    _prune(folder)
    return True


def _prune(folder: Path) -> None:
    """Drop the least recently written tables past ``KEEP_FILES`` (every edit of a grammar,
    and every upgrade, makes a new digest) and temporary files a killed writer left behind
    over an hour ago. Best effort: a file another process removes first is no error."""
    try:
        entries = [
            (e.stat().st_mtime, e.path, e.name)
            for e in os.scandir(folder)
            if e.name.startswith(("grammar-", ".grammar-"))
        ]
    except OSError:
        return
    tables = sorted((m, p) for m, p, n in entries if n.endswith(".pickle"))
    stale = [p for m, p in tables[: max(0, len(tables) - KEEP_FILES)]]
    now = time.time()
    stale += [p for m, p, n in entries if n.endswith(".tmp") and now - m > 3600]
    for path in stale:
        try:
            os.unlink(path)
        except OSError:
            pass


class OncePerKey(Generic[K, V]):
    """A memo of at most ``limit`` values (the oldest made is dropped first) in which each
    value is made once per key: concurrent callers for a missing key wait for the one
    making it. A failed ``make`` stores nothing (the next caller tries again)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._values: dict[K, V] = {}
        self._locks: dict[K, threading.Lock] = {}
        self._guard = threading.Lock()  # guards the two dicts' updates, held briefly

    def get(self, key: K) -> V | None:
        return self._values.get(key)

    def get_or_make(self, key: K, make: Callable[[K], V]) -> V:
        value = self._values.get(key)
        if value is not None:
            return value
        with self._guard:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = threading.Lock()
        with lock:
            value = self._values.get(key)
            if value is None:
                value = make(key)
                with self._guard:
                    while len(self._values) >= self._limit:
                        del self._values[next(iter(self._values))]
                    self._values[key] = value
                    self._locks.pop(key, None)
        return value

    def clear(self) -> None:
        with self._guard:
            self._values.clear()
