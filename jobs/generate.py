"""Entry point for ``ray job submit``: generate the tables of a config on the cluster.

    ray job submit --working-dir . -- python jobs/generate.py --config configs/default.toml

Inside a submitted job Ray sets ``RAY_ADDRESS``, so the generator attaches to the
cluster instead of starting a local instance; complete tables in the output folder are
skipped, so resubmitting a job resumes it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tablebase.cli import main  # noqa: E402

if __name__ == "__main__":
    argv = ["generate", *sys.argv[1:]]
    if "--address" not in argv:
        argv += ["--address", os.environ.get("RAY_ADDRESS", "auto")]
    sys.exit(main(argv))
