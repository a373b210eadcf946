"""Checkpoints of a table being generated: every partition's state at the end of a ply.

Layout, in the table's folder: ``.checkpoint/part-{p}-ply{n}.npz`` (one per partition,
written by the partition) and ``.checkpoint/checkpoint.json``, written last by the driver,
which names the ply, the partition bounds and each state file with its sha256. Only a
checkpoint named by ``checkpoint.json`` counts, so a run killed while writing one falls
back to the one before; a truncated or altered state file fails its checksum.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .files import atomic_write_bytes, sha256_of

CHECKPOINT_DIR = ".checkpoint"


class CorruptCheckpointError(RuntimeError):
    """A checkpoint state file that does not match its recorded checksum."""


@dataclass
class StateFile:
    file: str
    sha256: str


@dataclass
class Checkpoint:
    """The last complete checkpoint of a table: resume after ``ply``."""

    material: str
    ply: int
    bounds: list[int]
    states: list[StateFile]
    legal: int = 0
    decided: int = 0


def checkpoint_folder(table_folder: Path) -> Path:
    return Path(table_folder) / CHECKPOINT_DIR


def write_state(folder: Path, part: int, ply: int, state: dict[str, np.ndarray]) -> StateFile:
    """Write one partition's state atomically; returns its file name and sha256."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = f"part-{part}-ply{ply}.npz"
    tmp = folder / f".{name}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        np.savez(f, **state)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, folder / name)
    return StateFile(name, sha256_of(folder / name))


def read_state(folder: Path, state: StateFile) -> dict[str, np.ndarray]:
    path = Path(folder) / state.file
    if not path.is_file() or sha256_of(path) != state.sha256:
        raise CorruptCheckpointError(f"checkpoint state {path} is missing or does not match its sha256")
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def write_checkpoint(folder: Path, checkpoint: Checkpoint) -> None:
    """Record ``checkpoint`` as the one to resume from, then drop older state files."""
    folder = Path(folder)
    atomic_write_bytes(folder / "checkpoint.json", json.dumps(asdict(checkpoint), indent=1).encode())
    keep = {s.file for s in checkpoint.states}
    for path in folder.glob("part-*.npz"):
        if path.name not in keep:
            path.unlink(missing_ok=True)


def read_checkpoint(folder: Path, material: str) -> Checkpoint | None:
    """The last complete checkpoint of ``material`` in ``folder``, or None when there is none
    (or it is unreadable: generation then starts over, which is always correct)."""
    try:
        data = json.loads((Path(folder) / "checkpoint.json").read_text())
        cp = Checkpoint(**{**data, "states": [StateFile(**s) for s in data["states"]]})
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return cp if cp.material == material else None


def remove_checkpoints(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
