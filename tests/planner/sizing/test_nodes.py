"""Node shapes: HGX nodes of 8, NVL72 trays of 4 in a 72-GPU NVLink rack, and the override."""

from __future__ import annotations

from planner.inputs.scenario import OptionsSpec
from planner.sizing.costs import Packing
from planner.sizing.nodes import node_shape


def test_an_nvl72_replica_spans_trays_of_one_rack() -> None:
    shape = node_shape(OptionsSpec(), "GB200-NVL72-186GB")
    assert (shape.gpus, shape.domain_gpus) == (4, 72) and "tray" in shape.words
    assert shape.fits(72) and not shape.fits(80)
    assert shape.nodes_per_replica(8) == 2 and shape.replicas_per_node(8) == 1
    assert shape.replicas_per_node(2) == 2 and shape.nodes_per_replica(2) == 1
    assert "NVLink domain" in shape.too_big(80)


def test_an_hgx_replica_never_spans_nodes_and_the_scenario_can_override_the_shape() -> None:
    shape = node_shape(OptionsSpec(), "B200-SXM-180GB")
    assert (shape.gpus, shape.domain_gpus) == (8, 8) and not shape.fits(16)
    forced = node_shape(OptionsSpec(gpus_per_node=4), "GB200-NVL72-186GB")
    assert (forced.gpus, forced.domain_gpus) == (4, 4) and not forced.fits(8)


def test_packing_counts_the_trays_a_spanning_replica_takes() -> None:
    packing = Packing("GB200-NVL72-186GB", 8, 4, 1, 0.0, 730.0, nodes_per_replica=2)
    assert packing.nodes(3) == 6
