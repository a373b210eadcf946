"""Storage: Parquet shards per (material, side to move, slice) plus ``manifest.json``.

This package owns the shard schema. A table is complete only when its manifest exists and
every shard it lists is present with the recorded size and sha256.
"""

from .shards import (FORMAT_VERSION, SCHEMA, CorruptTableError, ShardInfo, TableManifest, load_table,
                     read_manifest, read_shard_values, table_complete, write_manifest, write_shard)

__all__ = ["FORMAT_VERSION", "SCHEMA", "CorruptTableError", "ShardInfo", "TableManifest", "load_table",
           "read_manifest", "read_shard_values", "table_complete", "write_manifest", "write_shard"]
