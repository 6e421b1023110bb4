"""The simulated engine (`capplan sim-server`): an OpenAI-compatible server with calibrated
profiles, for demos, tests and client benchmarks; what is probed against it is labelled
simulated."""

from __future__ import annotations

from measurements.sim.profiles import PROFILES, SimProfile, get_profile
from measurements.sim.server import serve


def simulator_profile(name: str) -> SimProfile:
    """The named profile (InputError listing the known ones)."""
    return get_profile(name)


def known_profiles() -> list[str]:
    """The profiles the simulator knows, by name."""
    return sorted(PROFILES)


def serve_simulator(host: str, port: int, profile: str, *, time_scale: float = 1.0) -> None:
    """Serve the simulated engine until interrupted (blocks)."""
    serve(host, port, profile, time_scale=time_scale)
