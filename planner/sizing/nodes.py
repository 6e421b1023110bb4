"""The unit a GPU is rented or bought as (an 8-GPU HGX node; a 4-GPU compute tray of a 72-GPU
NVL72 rack) and how replicas sit on it: several small replicas to a node, or one replica over
several nodes of one NVLink domain (an NVL72 rack), never across domains.

The shape comes from the GPU catalog; a scenario's options.gpus_per_node, when set, overrides it
for every GPU (an n-GPU node that is its own NVLink domain, as before racks were known).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hardware.gpus import DEFAULT_NODE_GPUS, gpu_catalog
from planner.inputs.scenario import OptionsSpec


@dataclass(frozen=True, slots=True)
class NodeShape:
    """GPUs per node, the node in words, and the GPUs one replica may span over NVLink."""

    gpus: int
    words: str  # "8-GPU HGX node", "4-GPU NVL72 compute tray"
    domain_gpus: int

    def fits(self, gpus_per_replica: int) -> bool:
        """Whether a replica of that many GPUs fits one NVLink domain."""
        return gpus_per_replica <= self.domain_gpus

    def replicas_per_node(self, gpus_per_replica: int) -> int:
        """Replicas one node holds (1 when a replica spans nodes)."""
        return max(1, self.gpus // max(gpus_per_replica, 1))

    def nodes_per_replica(self, gpus_per_replica: int) -> int:
        """Nodes one replica takes (1 when several replicas share a node)."""
        return max(1, math.ceil(gpus_per_replica / self.gpus))

    def too_big(self, gpus_per_replica: int) -> str:
        """Why a replica of that many GPUs cannot be placed."""
        if self.domain_gpus == self.gpus:
            return (
                f"a replica needs {gpus_per_replica} GPUs, more than the {self.gpus} GPUs of "
                f"one {self.words} (a replica never spans nodes)"
            )
        return (
            f"a replica needs {gpus_per_replica} GPUs, more than the {self.domain_gpus} GPUs "
            f"one NVLink domain of {self.words}s joins"
        )


def node_shape(options: OptionsSpec, gpu: str) -> NodeShape:
    """The node shape a plan uses for a GPU: the scenario's gpus_per_node when set, else the
    GPU catalog's (an unknown GPU: an 8-GPU node)."""
    if options.gpus_per_node is not None:
        count = options.gpus_per_node
        return NodeShape(count, f"{count}-GPU node", count)
    spec = gpu_catalog().find(gpu)
    if spec is None:
        return NodeShape(DEFAULT_NODE_GPUS, f"{DEFAULT_NODE_GPUS}-GPU node", DEFAULT_NODE_GPUS)
    return NodeShape(spec.node_gpus, spec.node_words, spec.nvlink_domain_gpus)
