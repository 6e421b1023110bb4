"""Where an AIPerf profile_export_aiperf.json states its load and model: input_config.loadgen
and endpoint.model_names before 0.13; from 0.13 the profiling phase of input_config.phases[]
(`type: concurrency` with `concurrency`, or a rate phase with `rate`) and models.items[].name.
The user's --concurrency / --request-rate is the fallback, never the override."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from measurements.importers.common import DeploymentOverrides, Reader, user_load
from measurements.importers.versions import named
from measurements.run_file import LoadKind

CLIENT = "aiperf"


@dataclass(frozen=True, slots=True)
class Load:
    """The load level a file states, and how it was found."""

    kind: LoadKind
    value: float
    burst: bool
    notes: tuple[str, ...]


def section(reader: Reader, path: str) -> Reader | None:
    """The object at dotted `path` below `reader`, or None when any part is absent."""
    obj: Mapping[str, object] = reader.obj
    for key in path.split("."):
        value = obj.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise reader.fail(path, "expected an object", value)
        obj = value
    return Reader(reader.file, obj, f"{reader.where}{path}.")


NO_LOAD = "is missing: the load (concurrency or request rate) is unknown and is never guessed"


def load_level(config: Reader, requests: int | None) -> Load:
    """Closed loop (concurrency) or open loop (request_rate) as the config states; never guessed."""
    rate = config.number("request_rate")
    concurrency = config.count("concurrency")
    if rate is not None and rate > 0:
        cap = "" if concurrency is None else f", at most {concurrency} in flight (concurrency)"
        return Load(LoadKind.RATE, rate, False, (f"open loop at {rate:g} req/s{cap}",))
    if concurrency is None or concurrency < 1:
        raise config.fail(
            "concurrency", "is missing or below 1 and request_rate is not set: load unknown"
        )
    if requests is not None and concurrency >= requests:
        note = (
            f"concurrency {concurrency} >= request count {requests}: every request was sent at "
            "once (a burst, kept out of curve fits)"
        )
        return Load(LoadKind.CONCURRENCY, float(concurrency), True, (note,))
    return Load(LoadKind.CONCURRENCY, float(concurrency), False, ())


def model_name(config: Reader | None, key: str) -> tuple[str | None, list[str]]:
    """The served model when the config names exactly one, with a note otherwise."""
    names = None if config is None else config.obj.get(key)
    if config is None or names is None:
        return None, []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise config.fail(key, "expected a list of model names", names)
    if len(names) == 1:
        return str(names[0]), []
    return None, [f"{key} lists {len(names)} models ({', '.join(map(str, names))}): pass --model"]


def file_model(config: Reader) -> tuple[str | None, list[str]]:
    """0.13: input_config.models.items[].name; before: input_config.endpoint.model_names."""
    models = section(config, "models")
    items = None if models is None else models.obj.get("items")
    if models is None or not isinstance(items, list):
        return model_name(section(config, "endpoint"), "model_names")
    names = [item.get("name") if isinstance(item, dict) else None for item in items]
    if not all(isinstance(n, str) for n in names):
        raise models.fail("items", "expected a list of {name: ...} objects", items)
    return model_name(Reader(config.file, {"items": names}, models.where), "items")


def _profiling_phase(config: Reader) -> Reader | None:
    """The phase whose numbers the file reports (0.13+): kind `profiling`, else the last one
    not excluded from the results."""
    phases = config.obj.get("phases")
    if not isinstance(phases, list):
        return None
    kept = [
        (i, p)
        for i, p in enumerate(phases)
        if isinstance(p, dict) and p.get("exclude_from_results") is not True
    ]
    chosen = next(((i, p) for i, p in kept if p.get("kind") == "profiling"), None)
    chosen = chosen or (kept[-1] if kept else None)
    return (
        None
        if chosen is None
        else Reader(config.file, chosen[1], f"{config.where}phases[{chosen[0]}].")
    )


def _stated_load(config: Reader) -> Load | None:
    """The load from input_config.loadgen (before 0.13) or the profiling phase (0.13+)."""
    loadgen = section(config, "loadgen")
    if loadgen is not None:
        return load_level(loadgen, loadgen.count("request_count"))
    phase = _profiling_phase(config)
    if phase is None:
        return None
    kind = phase.text("type")
    if kind == "concurrency" or phase.number("rate") is not None:
        renamed = {**phase.obj, "request_rate": phase.obj.get("rate")}
        return load_level(Reader(phase.file, renamed, phase.where), phase.count("requests"))
    return None  # fixed_schedule, user-centric without a rate, ...: the user says


def file_load(config: Reader, overrides: DeploymentOverrides, version: str | None) -> Load:
    """The file's load, else the user's; InputError naming the version and key without either."""
    stated = _stated_load(config)
    given = user_load(overrides)
    if stated is not None:  # the file wins; importers/__init__ notes an unused user load
        return stated
    if given is not None:
        return Load(given.kind, given.value, False, (given.note,))
    raise config.fail(
        "phases",
        f"{NO_LOAD} ({named(CLIENT, version)}: neither input_config.loadgen nor a profiling "
        "phase of type concurrency or with a rate); pass --concurrency or --request-rate (or "
        "fill in the upload form's load field)",
    )
