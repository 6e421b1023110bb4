"""What a running server says about itself: `/version` and `/v1/models`, read once before the
sweep (an unreachable or refusing server raises EngineError)."""

from __future__ import annotations

import httpx
from pydantic import BaseModel, ConfigDict, Field

from measurements.probe.engines import EngineError
from measurements.probe.redaction import redact_text, redact_url


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


async def server_facts(
    base_url: str,
    api_key: str | None = None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout_s: float = 10,
) -> ServerFacts:
    """Read `/version` and `/v1/models`; an unreachable server raises EngineError."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = base_url.rstrip("/")
    async with httpx.AsyncClient(
        base_url=url, headers=headers, timeout=timeout_s, transport=transport
    ) as client:
        cards = await _model_cards(client, redact_url(url))  # url only names it in errors
        version = await _version(client)
    base = next((c for c in cards if not c.get("parent")), cards[0] if cards else {})
    max_len = base.get("max_model_len")
    return ServerFacts(
        base_url=url,
        version=_text(version.get("version")),
        models=tuple(str(c["id"]) for c in sorted(cards, key=lambda c: bool(c.get("parent")))),
        max_model_len=max_len if isinstance(max_len, int) else None,
        owned_by=_text(base.get("owned_by")),
        lora_adapters=tuple(str(c["id"]) for c in cards if c.get("parent")),
        simulated=version.get("simulated") is True,
        profile=_text(version.get("profile")),
    )


async def _model_cards(client: httpx.AsyncClient, url: str) -> list[dict[str, object]]:
    try:
        answer = await client.get("/v1/models")
    except httpx.HTTPError as exc:
        raise EngineError(
            redact_text(
                f"could not reach {url}/v1/models ({type(exc).__name__}: {exc}); "
                "is the server running and is the base URL right?"
            )
        ) from exc
    if answer.status_code != 200:
        hint = " (set the API key's environment variable)" if answer.status_code == 401 else ""
        raise EngineError(
            redact_text(
                f"{url}/v1/models answered HTTP {answer.status_code}{hint}: {answer.text[:200]!r}"
            )
        )
    try:
        data = answer.json().get("data")
    except (ValueError, AttributeError) as exc:
        raise EngineError(f"{url}/v1/models did not answer an OpenAI model list") from exc
    return [c for c in data if isinstance(c, dict) and "id" in c] if isinstance(data, list) else []


async def _version(client: httpx.AsyncClient) -> dict[str, object]:
    # /version is optional (older trtllm-serve lacks it): its absence is not an error.
    try:
        answer = await client.get("/version")
        body = answer.json() if answer.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _text(value: object) -> str | None:
    return None if value is None else str(value)
