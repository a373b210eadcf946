"""Job configuration (TOML): one place that knows every key and checks it before work starts.

Example (``configs/default.toml``)::

    pieces = [3, 4]
    out = "data/tables"
    workers = 2
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .endgame.material import MAX_PIECES, all_materials, normalize_key
from .errors import ConfigError  # noqa: F401  (raised here; re-exported for old imports)

KEYS = {
    "materials": "list of material keys, e.g. [\"KQvKR\"]",
    "pieces": "list of piece counts: every table with that many pieces, e.g. [3, 4]",
    "out": "output folder (tables go to OUT/MATERIAL/)",
    "workers": "CPUs to use (0 = every CPU of the machine or cluster)",
    "executor": "\"ray\" (default) or \"local\" (one process, no Ray)",
    "address": "Ray address of an existing cluster (\"auto\" inside `ray job submit`); empty: start Ray locally",
    "split_above": "positions per side above which a table is split over partition actors, 2 per worker CPU "
                   "(smaller: one task); default 8,000,000",
    "checkpoint_seconds": "seconds between checkpoints of a table in progress (a re-run resumes from the last); "
                          "0 = after every ply",
    "dtz": "true (default): also the 50-move rule's WDL50 and DTZ; false: WDL and DTM only (fewer bytes, "
           "faster)",
}


@dataclass
class JobConfig:
    materials: list[str] = field(default_factory=list)
    pieces: list[int] = field(default_factory=list)
    out: Path = Path("data/tables")
    workers: int = 0
    executor: str = "ray"
    address: str = ""
    split_above: int | None = None  # None: the generator's default
    checkpoint_seconds: float = 300.0
    dtz: bool = True

    def tables(self) -> list[str]:
        """The requested tables (sub-tables are added by the scheduler)."""
        keys = [normalize_key(k) for k in self.materials]
        for n in self.pieces:
            keys += all_materials(n)
        return list(dict.fromkeys(keys))

    def cpus(self) -> int:
        return self.workers or os.cpu_count() or 1

    def as_dict(self) -> dict:
        return {"materials": self.materials, "pieces": self.pieces, "workers": self.workers,
                "executor": self.executor, "dtz": self.dtz}

    @classmethod
    def from_dict(cls, data: dict, source: str = "config") -> "JobConfig":
        unknown = sorted(set(data) - set(KEYS))
        if unknown:
            known = ", ".join(sorted(KEYS))
            raise ConfigError(f"{source}: unknown key {unknown[0]!r} (known keys: {known})")
        cfg = cls()
        if "materials" in data:
            mats = data["materials"]
            if not isinstance(mats, list) or not all(isinstance(m, str) for m in mats):
                raise ConfigError(f"{source}: 'materials' must be {KEYS['materials']}")
            try:
                cfg.materials = [normalize_key(m) for m in mats]
            except ValueError as e:
                raise ConfigError(f"{source}: 'materials': {e}") from None
        if "pieces" in data:
            p = data["pieces"]
            if not isinstance(p, list) or not all(isinstance(n, int) and 2 <= n <= MAX_PIECES for n in p):
                raise ConfigError(f"{source}: 'pieces' must be {KEYS['pieces']} (each 2..{MAX_PIECES}), got {p!r}")
            cfg.pieces = p
        if "out" in data:
            if not isinstance(data["out"], str) or not data["out"]:
                raise ConfigError(f"{source}: 'out' must be a folder path string")
            cfg.out = Path(data["out"])
        if "workers" in data:
            w = data["workers"]
            if not isinstance(w, int) or isinstance(w, bool) or w < 0:
                raise ConfigError(f"{source}: 'workers' must be an integer >= 0, got {w!r}")
            cfg.workers = w
        if "executor" in data:
            if data["executor"] not in ("ray", "local"):
                raise ConfigError(f"{source}: 'executor' must be \"ray\" or \"local\", got {data['executor']!r}")
            cfg.executor = data["executor"]
        for name in ("split_above", "checkpoint_seconds"):
            if name in data:
                v = data[name]
                if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0 or v != v:
                    raise ConfigError(f"{source}: '{name}' must be a number >= 0 ({KEYS[name]}), got {v!r}")
                setattr(cfg, name, int(v) if name == "split_above" else float(v))
        if "dtz" in data:
            if not isinstance(data["dtz"], bool):
                raise ConfigError(f"{source}: 'dtz' must be true or false ({KEYS['dtz']}), got {data['dtz']!r}")
            cfg.dtz = data["dtz"]
        if "address" in data:
            if not isinstance(data["address"], str):
                raise ConfigError(f"{source}: 'address' must be a string")
            cfg.address = data["address"]
        return cfg

    @classmethod
    def load(cls, path: Path) -> "JobConfig":
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except FileNotFoundError:
            raise ConfigError(f"config file {path} not found") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: not valid TOML ({e})") from None
        return cls.from_dict(data, str(path))
