"""The compiled-model cache's files: each verified before it is unpickled or given to LLVM.

Why
---
The entries of :mod:`compare.accel.compiled_cache` are pickles (numba's
environments, PyTensor functions) and machine code that LLVM links and the
process then runs. A damaged entry must therefore never be read: garbled bytes
handed to LLVM ended every later run of the model with "LLVM bitcode parsing
error", six flipped bits in the machine code with a segmentation fault, until
the user found and deleted the folder. And a folder another user can write to
would let that user run code in ours.

What
----
An entry is ``MAGIC``, one JSON header line and the payload. The header holds
the entry's format (:data:`FORMAT`), its kind (``code``, ``graphs``,
``functions``), the key it was written for, the payload's length and its SHA-256.
:func:`read` returns the payload only when all of them match what the caller
asks for; anything else is a miss, said in one ``note:`` line on stderr
(once per file and process), and the caller compiles again and rewrites the
entry. What is checked:

- absent: a plain miss, nothing said;
- truncated, empty, garbled, bits flipped anywhere (machine code included): the
  length or the checksum differs;
- another model's or another version's entry under this key: the header's key
  or format differs;
- a file that is not a regular file of this user's, or that others may write
  to: not read (as ssh treats its keys).

:func:`usable_folder` refuses, with one line, a cache folder (or the folder
holding it) that is not this user's or that other users may write to, and the
run goes on without the cache; it makes a missing folder with mode 0700. An
unwritable folder is a miss too (:func:`write` says so once). Writes are atomic:
a temporary file of mode 0600, then ``os.replace``.

While a process compiles a model that is not in the cache it holds the entry's
``.lock`` file (:func:`compiling`: an advisory ``flock``, released by the kernel
if the process dies, with the holder's pid written in it); another process that
wants the same model waits and then loads what the first wrote. A lock whose
holder is stopped (or gone, the lock passed to a child) is stale: the waiter says
so and compiles itself, as it does after :data:`LOCK_WAIT_SECONDS`, or at once
when the lock file cannot be opened.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from compare.accel.cache_root import make_folder

__all__ = [
    "FORMAT",
    "LOCK_WAIT_SECONDS",
    "MAGIC",
    "compiling",
    "note",
    "read",
    "usable_folder",
    "write",
]

#: The first line of every entry.
MAGIC = b"bayes-compare cache entry\n"
#: The entry layout; bumped when it changes (part of every header).
FORMAT = 1
#: Longest header line read (a damaged file never makes us read more).
_HEADER_LIMIT = 4096

_noted: set[str] = set()
_noted_lock = threading.Lock()


def note(message: str, *, once: str | None = None) -> None:
    """One ``note:`` line on stderr, once per ``once`` (default: the message) per process."""
    tag = message if once is None else once
    with _noted_lock:
        if tag in _noted:
            return
        _noted.add(tag)
    with contextlib.suppress(Exception):  # a closed stderr must not fail the run
        sys.stderr.write(f"note: {message}\n")
        sys.stderr.flush()


def _unsafe(info: os.stat_result) -> str | None:
    """Why a file or folder with these stats may be changed by another user, or None."""
    uid = os.getuid()
    if info.st_uid not in (uid, 0):
        return f"it belongs to another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"other users may write to it (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def usable_folder(folder: Path, *, make: bool = True) -> bool:
    """Whether ``folder`` may hold the cache: made (mode 0700) if missing; refused with
    one line when it, or the folder that holds it, is another user's or writable by
    others (the entries are pickles: whoever can write one runs code in this process).
    ``make=False`` only looks (a missing folder is usable: it would be made so)."""
    if not make and not folder.exists():
        return True
    try:
        if make:
            make_folder(folder)
        if not folder.is_dir():
            raise NotADirectoryError(f"{folder} is not a folder")
    except OSError as err:
        note(
            f"cannot make the compiled-model cache folder {folder} ({err.strerror or err}); "
            "models are compiled in each process",
            once=f"mkdir {folder}",
        )
        return False
    for place in (folder, folder.parent):
        try:
            info = place.stat()
        except OSError:
            return False
        reason = _unsafe(info)
        if reason is not None:
            note(
                f"the compiled-model cache {place} is not used: {reason}, and its entries "
                f"are pickles; run `chmod go-w {place}` (or set BAYES_COMPARE_CACHE_DIR "
                "to a folder of your own). This run goes on without the cache",
                once=f"unsafe {place}",
            )
            return False
    return True


def _header(kind: str, key: str, payload: bytes) -> bytes:
    header = {
        "format": FORMAT,
        "kind": kind,
        "key": key,
        "size": len(payload),
        "sha256": hashlib.sha256(payload).hexdigest(),
    }
    return MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n"


def _damaged(path: Path, reason: str) -> None:
    note(
        f"the compiled-model cache entry {path.name} is unusable ({reason}): the model is "
        "compiled again and the entry rewritten",
        once=f"damaged {path}",
    )


def read(path: Path, *, kind: str, key: str) -> bytes | None:
    """The payload stored at ``path`` for ``key``, verified; None on any miss.

    Nothing of the payload is interpreted here: the caller unpickles or links it
    only after its length and checksum matched the header, and the header's key,
    kind and format matched what was asked.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as err:
        _damaged(path, f"cannot be opened: {err.strerror or err}")
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            _damaged(path, "not a regular file")
            return None
        unsafe = _unsafe(info)
        if unsafe is not None:
            _damaged(path, unsafe)
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read()
    except OSError as err:
        _damaged(path, f"cannot be read: {err.strerror or err}")
        return None
    finally:
        os.close(fd)
    if not data.startswith(MAGIC):
        _damaged(path, "empty" if not data else "not an entry of this cache")
        return None
    end = data.find(b"\n", len(MAGIC), len(MAGIC) + _HEADER_LIMIT)
    if end < 0:
        _damaged(path, "its header is cut or garbled")
        return None
    try:
        header = json.loads(data[len(MAGIC) : end])
        fields = (header["format"], header["kind"], header["key"], header["size"])
        digest = header["sha256"]
    except (ValueError, KeyError, TypeError):
        _damaged(path, "its header is garbled")
        return None
    payload = data[end + 1 :]
    if fields[0] != FORMAT:
        _damaged(path, f"written in another format ({fields[0]!r})")
        return None
    if fields[1] != kind or fields[2] != key:
        _damaged(path, "it holds another model's entry")
        return None
    if fields[3] != len(payload):
        _damaged(path, f"truncated or extended: {len(payload)} bytes of {fields[3]!r}")
        return None
    if hashlib.sha256(payload).hexdigest() != digest:
        _damaged(path, "its checksum does not match: bytes changed")
        return None
    return payload


def write(path: Path, *, kind: str, key: str, payload: bytes) -> bool:
    """Store ``payload`` for ``key`` at ``path`` atomically (mode 0600); False (and one
    line) when the folder cannot be written: the run goes on without storing."""
    tmp = None
    try:
        make_folder(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".entry")
        with os.fdopen(fd, "wb") as handle:  # mkstemp's file: mode 0600
            handle.write(_header(kind, key, payload))
            handle.write(payload)
        os.replace(tmp, path)
        tmp = None
        return True
    except OSError as err:
        note(
            f"cannot write to the compiled-model cache {path.parent} "
            f"({err.strerror or err}): models are compiled in each process until it can",
            once=f"write {path.parent}",
        )
        return False
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


#: Longest wait for another process compiling the same model; then compile here too.
LOCK_WAIT_SECONDS = 900.0
#: Seconds of waiting after which a line says whom we wait for.
LOCK_SAY_SECONDS = 20.0


def _holder(fd: int) -> int | None:
    """The pid the lock's holder wrote in the lock file, if any."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _stale(pid: int) -> str | None:
    """Why the process ``pid`` will not release its lock (stopped, a zombie, gone), or
    None when it runs (or this system cannot tell)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return "gone" if os.path.isdir("/proc/self") else None
    except (OSError, IndexError):
        return None
    return {"T": "stopped", "t": "stopped", "Z": "a zombie", "X": "gone"}.get(state)


@contextlib.contextmanager
def compiling(path: Path) -> Iterator[None]:
    """Hold ``path``'s ``.lock`` file while the model is compiled and stored (see the
    module). Best effort: a lock that cannot be had is said in one line, and the caller
    compiles unguarded."""
    lock = path.with_suffix(".lock")
    try:
        make_folder(path.parent)
        fd = os.open(lock, os.O_CREAT | os.O_RDWR | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as err:
        note(
            f"cannot use the compile lock {lock.name} ({err.strerror or err}): compiling "
            "without it",
            once=f"lock {lock}",
        )
        yield
        return
    try:
        started = time.monotonic()
        said = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                pass
            else:
                with contextlib.suppress(OSError):  # whom a waiter waits for
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                break
            holder = _holder(fd)
            stale = None if holder is None else _stale(holder)
            waited = time.monotonic() - started
            if stale is not None:
                note(
                    f"the compile lock {lock.name} is held by process {holder}, which is "
                    f"{stale}: compiling here",
                    once=f"stale {lock}",
                )
                break
            if waited > LOCK_WAIT_SECONDS:
                note(
                    f"waited {LOCK_WAIT_SECONDS:g} s for process {holder} compiling the "
                    "same model: compiling here",
                    once=f"waited {lock}",
                )
                break
            if waited > LOCK_SAY_SECONDS and not said:
                note(f"waiting for process {holder}, which is compiling the same model")
                said = True
            time.sleep(0.1)
        yield
    finally:
        os.close(fd)  # releases the lock
