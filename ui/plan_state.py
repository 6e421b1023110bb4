"""The Plan page's inputs kept for the session and carried in the page's link.

Streamlit forgets a widget's value when a run draws another page, so leaving the Plan page
through the menu would reset every input. The page keeps the scenario it planned last under a
key no widget owns and, when it opens with its widgets gone, puts that scenario back. The same
scenario rides in the link (`?scenario=...`: compact JSON, zlib, base64url), so a copied or
reloaded link opens the plan it shows.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib

import streamlit as st

from errors import CapplanError
from planner.inputs.scenario import SCENARIO_LIMITS, Scenario
from ui import plan_form
from workflows.scenario_files import load_json, scenario_from_dict

KEPT = "plan_kept_scenario"  # not a widget key: survives a visit to another page
PARAM = "scenario"
ALIVE = "plan_name"  # a widget that every drawn Plan page has
MAX_LINK_BYTES = 64 * 1024  # a link is a page of settings, not a file


def encode(scenario: Scenario) -> str:
    """The scenario as a link parameter (the settings that differ from the defaults)."""
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    data["name"], data["model"] = scenario.name, scenario.model
    # Characters as themselves: shorter than \u escapes, and an emoji stays one character.
    text = json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    packed = zlib.compress(text.encode("utf-8"), 9)
    return base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def decode(value: str) -> Scenario:
    """A link parameter back to a scenario; a damaged or hostile one raises CapplanError."""
    if len(value) > MAX_LINK_BYTES:
        raise CapplanError(f"the link's scenario is {len(value):,} characters; at most 65,536")
    try:
        packed = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        inflater = zlib.decompressobj()
        text = inflater.decompress(packed, MAX_LINK_BYTES * 4)
        if inflater.unconsumed_tail:
            raise CapplanError("the link's scenario unpacks to more than 256 KiB")
        if not inflater.eof:  # not a whole zlib stream (cut short, or not one at all)
            raise ValueError("incomplete")
        decoded = text.decode("utf-8")
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError):
        raise CapplanError("the link's scenario is damaged (not one capplan wrote)") from None
    # A JSON parser, not YAML's: YAML refuses the \ud83d\ude80 pair an emoji was written as by
    # links of earlier versions. The scenario file's limits (depth, size, lists, numbers).
    data = load_json(decoded, "the page's link", SCENARIO_LIMITS)
    return scenario_from_dict(data, "the page's link")


def restore() -> None:
    """Before the widgets are drawn: when they are gone (another page was open, or this is a
    new session), fill them from the kept scenario, else from the link."""
    if ALIVE in st.session_state:
        return
    kept = st.session_state.get(KEPT)
    if isinstance(kept, Scenario):
        plan_form.apply_scenario(kept)
        return
    value = st.query_params.get(PARAM)
    if not value:
        return
    try:
        plan_form.apply_scenario(decode(value))
    except CapplanError as exc:
        st.session_state["plan_flash"] = f"the page's link could not be opened: {exc}"
        return
    st.session_state["plan_flash"] = "opened the scenario in the page's link"


def keep(scenario: Scenario) -> None:
    """After the inputs gave a valid scenario: keep it for the session and put it in the link."""
    st.session_state[KEPT] = scenario
    value = encode(scenario)
    if st.query_params.get(PARAM) != value:
        st.query_params[PARAM] = value
