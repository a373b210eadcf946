"""Run ``tablebase generate`` on a Ray cluster of several nodes simulated on this machine.

    python scripts/simulated_cluster.py NODES [--cpus-per-node 1] [--memory-per-node GB] -- GENERATE-ARGS...

Each node is a separate raylet (``ray.cluster_utils.Cluster``) with its own CPUs, memory
resource and object store, so partitions are placed across nodes, sub-tables are read
once per node and routed bytes travel between object stores exactly as on a real cluster
(only the network is loopback). The head node gets no CPU: it holds only the driver. The
generate command's summary lines give the peak memory per worker and per node.

Example (KRRvKRR on 4 nodes of one CPU)::

    python scripts/simulated_cluster.py 4 -- --config configs/six.toml --out /tmp/nodes4
"""

from __future__ import annotations

import argparse
import subprocess
import sys


def main() -> int:
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nodes", type=int)
    parser.add_argument("--cpus-per-node", type=int, default=1)
    parser.add_argument("--memory-per-node", type=float, default=4.0, help="GB of Ray's memory resource per node")
    args = parser.parse_args(argv[:split])
    if args.nodes < 1 or args.cpus_per_node < 1 or args.memory_per_node <= 0:
        parser.error("nodes, --cpus-per-node and --memory-per-node must be positive")
    from ray.cluster_utils import Cluster
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        for _ in range(args.nodes):
            cluster.add_node(num_cpus=args.cpus_per_node, memory=int(args.memory_per_node * 2**30))
        cluster.wait_for_nodes()
        command = [sys.executable, "-m", "tablebase.cli", "generate", *argv[split + 1:], "--address", cluster.address]
        return subprocess.call(command)
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    sys.exit(main())
