"""Storage: Parquet shards per (material, side to move, slice) plus the manifests.

This package owns the shard schema and is the only code that reads or writes shards. A
table is complete only when both sides' manifests exist and every shard they list is
present with the recorded size and sha256.
"""

from .manifest import (FORMAT_VERSION, SCHEMA, CorruptTableError, ShardInfo, TableFormatError, TableManifest,
                       is_table_folder, read_manifest, write_manifest)
from .shards import (DEFAULT_CODING, Coding, ShardReader, TableReader, check_shard, remove_other_format, table_complete,
                     write_shard)

__all__ = ["DEFAULT_CODING", "FORMAT_VERSION", "SCHEMA", "Coding", "CorruptTableError", "ShardInfo", "ShardReader",
           "TableFormatError", "TableManifest", "TableReader", "check_shard", "is_table_folder", "read_manifest", "remove_other_format",
           "table_complete",
           "write_manifest", "write_shard"]
