"""Durable files of a sweep directory: every file is written to a temporary name beside it, flushed and renamed
(atomic on POSIX); a manifest is created once (a hard link: a complete file or none); a finished file is sealed with
its SHA-256 (DIR/checksums), so a changed byte is named as corruption; an OSError becomes one OutputError line; and a
crashed writer's temporary files are recognised for clean-up. No pricing here: store.py lays out the shards."""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import OutputError
from ..files import tmp_name

MERGED = "sweep.parquet"           # the merged file in DIR (the shards are in DIR/shards)


def synced_tmp(path: Path, data: bytes) -> Path:
    """A temporary file beside `path` holding `data`, flushed to disk (none left behind when the write fails)."""
    tmp = tmp_name(path)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def atomic_bytes(path: Path, data: bytes) -> None:
    os.replace(synced_tmp(path, data), path)


def atomic_with(path: Path, write: Callable[[Path], Any]) -> Any:
    tmp = tmp_name(path)
    try:
        r = write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return r


@contextmanager
def os_errors(path: Path, what: str) -> Iterator[None]:
    """An OSError writing under `path` becomes one OutputError line naming it (found by review: a full disk, a removed
    shards folder or a file where a folder belongs gave tracebacks, after the shard was computed)."""
    try:
        yield
    except OSError as e:
        where = f" ({e.filename})" if getattr(e, "filename", None) else ""
        raise OutputError(f"{what} {path}: cannot write{where}: {e.strerror or e}") from None


def create_once(path: Path, data: bytes) -> bool:
    """Create `path` with `data` only if it does not exist, atomically (a complete file appears or nothing): False
    if another writer created it first. Two sweeps of different specs into one new directory each wrote a manifest
    and mixed their shards (found by review); a hard link of the finished temporary file cannot replace one."""
    tmp = synced_tmp(path, data)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:            # a file system without hard links: the rename, last writer wins (as before)
            if path.exists():
                return False
            os.replace(tmp, path)
        return True
    finally:
        tmp.unlink(missing_ok=True)


def checksum_path(path: Path) -> Path:
    """DIR/checksums/NAME.sha256 for DIR/shards/NAME (apart from the shards, which readers glob) and for the merged
    DIR/sweep.parquet (found by review: its checksum was looked for outside DIR, so it was never sealed)."""
    top = path.parent if path.name == MERGED else path.parent.parent   # by the file: a DIR may itself be "shards"
    return top / "checksums" / (path.name + ".sha256")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def seal(path: Path) -> None:
    """Record a finished shard's SHA-256 beside it (atomically, after the shard is in place): a shard whose bytes no
    longer match is corrupt, one without its checksum unfinished; both are recomputed on resume."""
    ck = checksum_path(path)
    ck.parent.mkdir(exist_ok=True)
    atomic_bytes(ck, (sha256(path) + "\n").encode())


# A temporary file a sweep writes (files.tmp_name of a shard, the merged file or the manifest): .NAME.PID-XXXXXXXX.tmp
OWN_TMP = re.compile(r"^\.(shard-\d+-of-\d+\.parquet|sweep\.parquet|manifest\.json)\.(\d+)-[0-9a-f]{8}\.tmp$")
# A temporary file untouched this long is a crashed writer's: a live one (a shard in progress, on this host or on
# another sharing the folder, whose process this host cannot see) writes row groups or is renamed in far less.
STALE_TMP_S = 3600.0


def crashed_writer(tmp: Path) -> bool:
    """Whether a temporary file is a crashed sweep writer's, to delete: one of the names a sweep writes, untouched for
    STALE_TMP_S, and its process gone from this host. Found by review: every dot-file ending .tmp had been deleted (a
    user's own files; a live writer's in another PID namespace, whose run then failed)."""
    m = OWN_TMP.match(tmp.name)
    if m is None:
        return False
    try:
        if time.time() - tmp.stat().st_mtime < STALE_TMP_S:
            return False
        os.kill(int(m.group(2)), 0)
    except ProcessLookupError:
        return True
    except OSError:          # gone already, or not ours to signal: leave it
        return False
    return False


__all__ = ["MERGED", "OWN_TMP", "STALE_TMP_S", "atomic_bytes", "atomic_with", "checksum_path", "crashed_writer",
           "create_once", "os_errors", "seal", "sha256", "synced_tmp"]
