"""A capplan RunFile JSON (what `capplan probe` writes) imported again, e.g. on another machine.

The file keeps its own provenance (a probe run stays "measured"); overrides still apply."""

from __future__ import annotations

from measurements.importers.common import (
    OVERRIDE_FIELDS,
    DeploymentOverrides,
    content_key,
    join_notes,
    resolve_deployment,
)
from measurements.run_file import Provenance, RunFile, run_file_from_dict

FORMAT_ID = "runfile"
DESCRIPTION = "capplan RunFile JSON: an object with schema_version, deployment and levels"


def sniff(name: str, doc: object) -> str | None:
    """Describe a RunFile document, else None."""
    if not isinstance(doc, dict) or not {"schema_version", "levels", "deployment"} <= doc.keys():
        return None
    version, source = doc["schema_version"], doc.get("source")
    return f"capplan RunFile (schema_version {version!r}, source {source!r})"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """Validate the RunFile (refusing newer schema versions) and apply the user's overrides."""
    del provenance  # the file states its own; importing it again does not change how it was made
    run = run_file_from_dict(doc, name)
    update: dict[str, object] = {"origin_file": name, "source_sha256": content_key(data)}
    if overrides != DeploymentOverrides():
        stated = DeploymentOverrides.model_validate(
            {field: getattr(run.deployment, field) for field in OVERRIDE_FIELDS}
        )
        merged, notes = resolve_deployment(name, stated, overrides)
        update["deployment"] = run.deployment.model_copy(
            update={field: getattr(merged, field) for field in OVERRIDE_FIELDS}
        )
        update["notes"] = join_notes([run.notes or "", *notes], "\n")
    return [run.model_copy(update=update)]
