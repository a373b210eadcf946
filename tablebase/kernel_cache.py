"""Where numba caches this package's compiled kernels: by their path inside the package.

numba's own locator for ``$NUMBA_CACHE_DIR`` files a kernel under a hash of its source
file's absolute folder, so a copy of the same source elsewhere compiles everything again:
Ray's working dir of a submitted job is such a copy, fresh for every job. numba (0.68 and
later) stamps a cached kernel with its source's content hash, so the path inside the
package is all that has to match; :func:`tablebase._key_numba_cache` keys the folder by
the whole package's source, and names this locator first in ``NUMBA_CACHE_LOCATOR_CLASSES``
(numba's own locators after it, for other packages' kernels).
"""

from __future__ import annotations

from pathlib import Path

from numba.core.caching import UserProvidedCacheLocator

PACKAGE = Path(__file__).resolve().parent


class PackageCacheLocator(UserProvidedCacheLocator):
    """numba's ``$NUMBA_CACHE_DIR`` locator, with a kernel's folder named by its module's
    path inside this package (``generate``, ``endgame``, ...); kernels of other packages
    are left to the next locator."""

    @classmethod
    def get_suitable_cache_subpath(cls, py_file: str) -> str:
        return Path(py_file).resolve().parent.relative_to(PACKAGE).as_posix()

    @classmethod
    def from_function(cls, py_func, py_file: str):
        if not Path(py_file).resolve().is_relative_to(PACKAGE):
            return None
        return super().from_function(py_func, py_file)
