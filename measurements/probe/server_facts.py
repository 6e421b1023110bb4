"""What a running server says about itself: `/version` and `/v1/models`, read once before the
sweep (an unreachable or refusing server raises EngineError). Nothing it says is trusted whole:
answers are read up to a bound, control characters (NUL, ESC) and bidi controls (U+202E) in a
string are kept as \\xNN / \\uNNNN escapes, and a string longer than the store keeps (a
300-character version) is cut to SERVER_TEXT_CHARS; each change is noted in the run's notes, so
what a server says can never make a finished sweep unstorable."""

from __future__ import annotations

import json

import httpx
from pydantic import BaseModel, ConfigDict, Field

from measurements.probe.engines import EngineError
from measurements.probe.redaction import redact_text, redact_url
from measurements.safe_text import escape_hidden, has_hidden

SERVER_TEXT_CHARS = 64  # a version, owner or profile as kept (the store's columns hold 128)
MODEL_ID_CHARS = 300  # a served model id as kept (Hugging Face names are far shorter)
MODEL_IDS = 1_000  # served model ids kept, base models first
ANSWER_BYTES = 8 * 1024 * 1024  # of /version or /v1/models, read at most this much


class ServerFacts(BaseModel):
    """What a running server says about itself (`/version`, `/v1/models`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    version: str | None = Field(None, description="`/version` as reported; None when absent")
    models: tuple[str, ...] = Field((), description="Served model ids, base model first")
    max_model_len: int | None = Field(None, description="The base model's max_model_len")
    owned_by: str | None = Field(None, description="`owned_by` of the base model (vllm, ...)")
    lora_adapters: tuple[str, ...] = Field((), description="Models listed with a parent")
    simulated: bool = Field(False, description="True for capplan's simulated engine")
    profile: str | None = Field(None, description="The simulator profile, when simulated")
    notes: tuple[str, ...] = Field((), description="What was cut from what the server said")


async def server_facts(
    base_url: str,
    api_key: str | None = None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout_s: float = 10,
    error_bodies: bool = True,
) -> ServerFacts:
    """Read `/version` and `/v1/models`; an unreachable server raises EngineError quoting the
    start of a refusal's body (error_bodies=False, the app: its HTTP status only)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = base_url.rstrip("/")
    async with httpx.AsyncClient(
        base_url=url,
        headers=headers,
        timeout=timeout_s,
        transport=transport,
        follow_redirects=False,
    ) as client:
        cards = await _model_cards(client, redact_url(url), error_bodies)  # url names it
        version = await _version(client)
    base = next((c for c in cards if not c.get("parent")), cards[0] if cards else {})
    max_len = base.get("max_model_len")
    notes: list[str] = []
    ordered = sorted(cards, key=lambda c: bool(c.get("parent")))
    return ServerFacts(
        base_url=url,
        version=_text(version.get("version"), "/version", notes),
        models=_ids(ordered, "model id", notes),
        max_model_len=max_len if isinstance(max_len, int) and 0 < max_len < 2**40 else None,
        owned_by=_text(base.get("owned_by"), "owned_by of /v1/models", notes),
        lora_adapters=_ids([c for c in cards if c.get("parent")], "LoRA adapter id", notes),
        simulated=version.get("simulated") is True,
        profile=_text(version.get("profile"), "profile of /version", notes),
        notes=tuple(notes),
    )


async def _get(client: httpx.AsyncClient, path: str) -> tuple[int, bytes]:
    """GET `path`: the status and at most ANSWER_BYTES of the body (the rest is never read)."""
    async with client.stream("GET", path) as answer:
        pieces: list[bytes] = []
        size = 0
        async for piece in answer.aiter_bytes():
            pieces.append(piece)
            size += len(piece)
            if size > ANSWER_BYTES:
                break
        return answer.status_code, b"".join(pieces)


def _json(body: bytes) -> object:
    """The decoded body; None when it is not JSON or was cut at the bound."""
    if len(body) > ANSWER_BYTES:
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


async def _model_cards(
    client: httpx.AsyncClient, url: str, error_bodies: bool
) -> list[dict[str, object]]:
    try:
        status, body = await _get(client, "/v1/models")
    except httpx.HTTPError as exc:
        raise EngineError(
            redact_text(
                f"could not reach {url}/v1/models ({type(exc).__name__}: {exc}); "
                "is the server running and is the base URL right?"
            )
        ) from exc
    if status != 200:
        hint = " (set the API key's environment variable)" if status == 401 else ""
        text = redact_text(body[:4096].decode("utf-8", "replace"))  # masked whole, then cut
        said = f": {text[:200]!r}" if error_bodies else " (its body is not shown here)"
        raise EngineError(redact_text(f"{url}/v1/models answered HTTP {status}{hint}{said}"))
    document = _json(body)
    if not isinstance(document, dict):
        raise EngineError(f"{url}/v1/models did not answer an OpenAI model list")
    data = document.get("data")
    return [c for c in data if isinstance(c, dict) and "id" in c] if isinstance(data, list) else []


async def _version(client: httpx.AsyncClient) -> dict[str, object]:
    # /version is optional (older trtllm-serve lacks it): its absence is not an error.
    try:
        status, body = await _get(client, "/version")
    except httpx.HTTPError:
        return {}
    document = _json(body) if status == 200 else None
    return document if isinstance(document, dict) else {}


def _text(value: object, what: str, notes: list[str], limit: int = SERVER_TEXT_CHARS) -> str | None:
    """A string the server sent, secrets masked, control and bidi characters escaped and cut to
    `limit` characters (each change noted)."""
    if value is None:
        return None
    text = redact_text(" ".join(str(value).split()))
    if has_hidden(text):
        text = escape_hidden(text)
        notes.append(
            f"the server's {what} held control or bidi characters (NUL, ESC, U+202E ...): "
            "kept as \\xNN / \\uNNNN escapes"
        )
    if len(text) <= limit:
        return text
    notes.append(f"the server's {what} was {len(text):,} characters: kept the first {limit}")
    return text[: limit - 3] + "..."


def _ids(cards: list[dict[str, object]], what: str, notes: list[str]) -> tuple[str, ...]:
    """The cards' ids as kept: the first MODEL_IDS, each cleaned like any server text (one note
    for all the ids changed, not one per id)."""
    changed: list[str] = []
    texts = (_text(c["id"], what, changed, MODEL_ID_CHARS) for c in cards[:MODEL_IDS])
    ids = tuple(text for text in texts if text)
    if len(cards) > MODEL_IDS:
        notes.append(f"the server listed {len(cards):,} {what}s: kept the first {MODEL_IDS:,}")
    if changed:
        notes.append(
            f"{len(changed)} change(s) to the server's {what}s: control or bidi characters "
            f"kept as escapes, or cut to {MODEL_ID_CHARS} characters"
        )
    return ids
