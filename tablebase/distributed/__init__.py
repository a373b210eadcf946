"""Distribution on Ray: the only package (with ``jobs/``) that imports ray.

Small tables run whole inside one Ray task each, independent ones concurrently; a large
table is split into partitions held by Ray actors that exchange only the frontier.
"""

from .executor import InsufficientMemoryError, RayPartitions, check_memory, generate_on_ray

__all__ = ["InsufficientMemoryError", "RayPartitions", "check_memory", "generate_on_ray"]
