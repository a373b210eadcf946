"""Atomic writes and checksums: every file the store writes appears whole or not at all."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def temporary_name(path: Path) -> Path:
    """Where ``path`` is written before it is renamed into place (hidden, per process)."""
    return path.with_name(f".{path.name}.tmp{os.getpid()}")


def publish(tmp: Path, path: Path) -> None:
    """Flush ``tmp`` to disk and rename it to ``path``."""
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = temporary_name(path)
    with open(tmp, "wb") as f:
        f.write(data)
    publish(tmp, path)
