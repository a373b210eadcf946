"""Shared test helpers: where the oracle tables live."""

from __future__ import annotations

from pathlib import Path

import pytest

#: The oracle data sits beside the repository: /work/main -> /work/shared/oracle.
ORACLE = Path(__file__).resolve().parents[1].parent / "shared" / "oracle"


@pytest.fixture(scope="session")
def oracle_dir() -> Path:
    """The oracle folder (``syzygy/``, ``gaviota/``, ``epd/``); skips the test when it is absent."""
    if not ORACLE.is_dir():
        pytest.skip(f"oracle tables not found at {ORACLE} (they sit beside the repository, in shared/oracle)")
    return ORACLE
