"""A scaling model: 6- and 7-piece tables on N nodes, from rates measured here.

    python benchmarks/scaling_model.py [--cpu-seconds S] [--routed B] [--routed-ply B]
        [--cores C] [--link GB/s] [--nodes 1,4,16,64] [MATERIAL ...]

Nothing here is measured: it multiplies the inputs, which come from measurements on this
machine (``docs/scaling.md`` says which command gave each), by the index sizes of the
tables. For each table and number of nodes (``--cores`` CPUs each, ``PARTITIONS_PER_WORKER``
partitions per CPU as the executor runs them):

* memory per node: the partitions' values (``BYTES_PER_POSITION`` per index position,
  both sides to move, spread evenly), 0.4 GB per partition process, and the sub-table
  values init reads (2 bytes per sub-table position, held once per node in Ray's object
  store);
* bytes routed between nodes: the measured bytes of predecessors routed per index
  position (``--routed``, in all; ``--routed-ply``, at the ply that routes most), of
  which a share (N - 1) / N crosses nodes (partitions are spread evenly);
* time: CPU-seconds per index position (``--cpu-seconds``) over all the cluster's CPUs,
  plus the bytes crossing nodes over the links (``--link`` GB/s per node, all at once).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablebase.distributed.executor import PARTITIONS_PER_WORKER  # noqa: E402
from tablebase.endgame.index import IndexScheme  # noqa: E402
from tablebase.generate.partition import BYTES_PER_POSITION, WORKER_BYTES, subtable_reads  # noqa: E402


def model(key: str, nodes: int, cores: int, cpu_seconds: float, routed: float, routed_ply: float,
          link: float) -> dict:
    positions = 2 * IndexScheme.of(key).size
    subtables = max(subtable_reads(key, stm) for stm in (0, 1))
    memory = (BYTES_PER_POSITION * positions / nodes + PARTITIONS_PER_WORKER * cores * WORKER_BYTES
              + 2 * subtables)
    crossing = (nodes - 1) / nodes
    network = routed * positions * crossing
    seconds = cpu_seconds * positions / (nodes * cores) + (network / nodes / (link * 1e9) if nodes > 1 else 0.0)
    return {"positions": positions, "memory": memory, "subtables": 2 * subtables, "network": network,
            "network_ply": routed_ply * positions * crossing, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("materials", nargs="*", default=["KRRvKRR", "KQRvKQR", "KRPvKRP", "KRRPvKRR", "KQRPvKQR"])
    parser.add_argument("--cpu-seconds", type=float, required=True, help="CPU-seconds per index position")
    parser.add_argument("--routed", type=float, required=True, help="bytes routed per index position, in all")
    parser.add_argument("--routed-ply", type=float, required=True,
                        help="bytes routed per index position at the ply that routes most")
    parser.add_argument("--cores", type=int, default=16)
    parser.add_argument("--link", type=float, default=1.25, help="GB/s between a node and the others")
    parser.add_argument("--nodes", default="1,4,16,64")
    args = parser.parse_args()
    print("| table | index positions | nodes | memory per node, GB | of which sub-tables, GB "
          "| between nodes, GB (worst ply) | hours |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key in args.materials:
        for n in (int(x) for x in args.nodes.split(",")):
            m = model(key, n, args.cores, args.cpu_seconds, args.routed, args.routed_ply, args.link)
            print(f"| {key} | {m['positions']:.3g} | {n} | {m['memory'] / 1e9:,.1f} | {m['subtables'] / 1e9:,.1f} "
                  f"| {m['network'] / 1e9:,.0f} ({m['network_ply'] / 1e9:,.1f}) | {m['seconds'] / 3600:,.2f} |")


if __name__ == "__main__":
    main()
