"""Writing files safely: every output is written to a temporary name beside it and renamed (atomic on POSIX), and an
output path is checked before a long computation, so a bad path fails in one line and a crash leaves no half file."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

from .errors import OutputError


def check_output(path: str | os.PathLike[str], what: str = "output",
                 inputs: tuple[str | os.PathLike[str] | None, ...] = ()) -> Path:
    """The path, once its folder exists and is writable, the path is not a folder and not one of the command's
    `inputs` (a report or profile written over the measurements it read would destroy them: found by review); else
    OutputError."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise OutputError(f"{what} {p}: is a folder; expected a file path")
    for src in inputs:
        if src is not None and _same_file(p, Path(src)):
            raise OutputError(f"{what} {p}: is the input file {src}; writing there would overwrite it (choose "
                              "another path)")
    if not parent.exists():
        raise OutputError(f"{what} {p}: folder {parent} does not exist")
    if not parent.is_dir():
        raise OutputError(f"{what} {p}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {p}: folder {parent} is not writable")
    return p


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (through links and relative parts; a path that does not exist yet is
    compared by its resolved name)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_output_dir(path: str | os.PathLike[str], what: str = "output folder", create: bool = True) -> Path:
    """The folder, created if missing (with its parents), once it is a writable folder; else OutputError. With
    create=False (a dry run) a missing folder is returned as it is, the same checks made of one that exists."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise OutputError(f"{what} {p}: is a file; expected a folder")
    if not create and not p.exists():
        return p
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{what} {p}: cannot create it ({e.strerror or e})") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {p}: not writable")
    return p


def tmp_name(path: Path) -> Path:
    """A temporary name beside `path`, unique to this process and call (concurrent writers never share one)."""
    return path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")


def write_atomic(path: str | os.PathLike[str], write: Callable[[Path], object], what: str = "output") -> Path:
    """Call write(tmp) to fill a temporary file, fsync it and rename it onto `path`; OSError -> OutputError."""
    p = check_output(path, what)
    tmp = tmp_name(p)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except OSError as e:
        raise OutputError(f"{what} {p}: cannot write ({e.strerror or e})") from None
    finally:
        tmp.unlink(missing_ok=True)
    return p


def write_text(path: str | os.PathLike[str], text: str, what: str = "output") -> Path:
    return write_atomic(path, lambda t: t.write_text(text, encoding="utf-8"), what)


def write_bytes(path: str | os.PathLike[str], data: bytes, what: str = "output") -> Path:
    return write_atomic(path, lambda t: t.write_bytes(data), what)
