"""`capplan models list|show|add|remove`: the model catalog (every shipped config.json and the
ones this store added from local files; never a download)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.common import (
    DbOption,
    JsonOption,
    acting,
    app,
    fail,
    guard,
    open_engine,
    out,
    print_json,
)

models_app = typer.Typer(
    help="The model catalog: shipped and added Hugging Face config.json files.",
    no_args_is_help=True,
)
app.add_typer(models_app, name="models")


@models_app.command("list")
def list_cmd(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Every model capplan knows: name, size, active size, attention, where its config is from."""
    from workflows.models import catalog_entries, sync_catalog  # noqa: PLC0415

    guard(lambda: sync_catalog(open_engine(db)))
    found = catalog_entries()
    if as_json:
        print_json([_entry_json(e.model, e.origin, e.source, e.facts, e.problem) for e in found])
        return
    for e in found:
        what = e.facts.summary() if e.facts else f"cannot be read: {e.problem}"
        out.print(f"{e.model} ({e.origin}): {what}", markup=False, highlight=False)


@models_app.command("show")
def show_cmd(name: str, db: DbOption = None, as_json: JsonOption = False) -> None:
    """One model's facts by any spelling of its name ('Llama-3.1-70B (nvidia FP8 ckpt)')."""
    from errors import InputError  # noqa: PLC0415
    from workflows.models import resolve_model, sync_catalog  # noqa: PLC0415

    guard(lambda: sync_catalog(open_engine(db)))
    found = resolve_model(name)
    if isinstance(found, str):
        fail(InputError(found, field="name", value=name))
    document = _entry_json(found.model, "", found.source, found, None)
    if as_json:
        print_json(document)
        return
    out.print(f"{found.model}: {found.summary()}", markup=False, highlight=False)
    for key, value in document.items():
        if key not in ("model", "summary", "origin", "problem"):
            out.print(f"  {key}: {value}", markup=False, highlight=False)


@models_app.command("add")
def add_cmd(
    path: Annotated[Path, typer.Argument(help="A config.json, or a folder of them.")],
    name: Annotated[str | None, typer.Option(help="The model's name (one file only).")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add a model from its local config.json (a folder adds every config in it)."""
    from workflows.models import add_models  # noqa: PLC0415

    engine = open_engine(db)
    actor = acting(engine)
    added = guard(lambda: add_models(engine, path, name, actor=actor))
    if as_json:
        print_json([_entry_json(a.name, "added", a.source, a.facts, a.problem) for a in added])
    else:
        for a in added:
            line = f"added {a.name}: {a.facts.summary()}" if a.facts else f"refused: {a.problem}"
            out.print(line, markup=False, highlight=False)
    if any(a.facts is None for a in added):
        raise typer.Exit(2)


@models_app.command("remove")
def remove_cmd(name: str, db: DbOption = None) -> None:
    """Forget a model this store added (shipped configs stay)."""
    from errors import InputError  # noqa: PLC0415
    from workflows.models import remove_model  # noqa: PLC0415

    engine = open_engine(db)
    actor = acting(engine)
    if not guard(lambda: remove_model(engine, name, actor=actor)):
        fail(InputError("no added model of that name", field="name", value=name))
    out.print(f"removed {name}", markup=False, highlight=False)


def _entry_json(
    model: str, origin: str, source: str, facts: object, problem: str | None
) -> dict[str, object]:
    from planner.physics.models import ModelFacts  # noqa: PLC0415

    if not isinstance(facts, ModelFacts):
        return {"model": model, "origin": origin, "source": source, "problem": problem}
    return {
        "model": model,
        "origin": origin,
        "source": source,
        "summary": facts.summary(),
        "total_params": facts.total_params,
        "active_params": facts.active_params,
        "layers": facts.layers,
        "attention": facts.attention,
        "experts": facts.experts,
        "experts_per_token": facts.top_k,
        "moe_layers": facts.moe_layers,
        "kv_elements_per_token": facts.kv_elements_per_token,
        "sliding_window_tokens": facts.window_tokens,
        "state_bytes_per_sequence": facts.state_bytes_per_seq,
        "checkpoint_precision": facts.checkpoint,
        "notes": list(facts.notes),
    }
