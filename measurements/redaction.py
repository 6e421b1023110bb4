"""Keep secrets out of what capplan stores and prints: launch commands and engine arguments
with an API key or token in them, and URLs with a password or key in them.

The probe reads its API key only from the environment variable it is told the NAME of; a key
typed into a launch command (`vllm serve M --api-key sk-...`) or a base URL is still masked here
before the RunFile is written, printed or stored."""

from __future__ import annotations

import re
import shlex
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["MASK", "is_secret_name", "redact_args", "redact_command", "redact_url"]

MASK = "***"
# Flag or parameter names whose value is a secret: api-key, api_key, hf-token, password, ...
# (ending in the word, so --tokenizer and --max-num-batched-tokens are not secrets).
_SECRET_NAME = re.compile(
    r"(^|[-_])(api[-_]?key|key|token|secret|password|passwd|pass|credentials?)$", re.IGNORECASE
)


def is_secret_name(name: str) -> bool:
    """True for a flag, argument or parameter name that carries a secret."""
    return bool(_SECRET_NAME.search(name.strip()))


def redact_args(args: dict[str, str]) -> dict[str, str]:
    """Engine arguments with the values of secret-named flags masked."""
    return {name: MASK if is_secret_name(name) else value for name, value in args.items()}


def redact_command(command: str) -> str:
    """A shell command line with the value after (or `=` of) every secret-named flag masked."""
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: mask crudely rather than keep a key
        return re.sub(
            r"(--?[\w-]*(?:key|token|secret|passw\w*)[\w-]*[= ])\S+",
            rf"\1{MASK}",
            command,
            flags=re.I,
        )
    masked: list[str] = []
    hide_next = False
    for word in words:
        if hide_next and not word.startswith("-"):
            masked.append(MASK)
            hide_next = False
            continue
        hide_next = False
        if word.startswith("-"):
            name, sep, _ = word.lstrip("-").partition("=")
            if is_secret_name(name) and sep:
                masked.append(f"{word.split('=', 1)[0]}={MASK}")
                continue
            hide_next = is_secret_name(name)
        masked.append(redact_url(word) if "://" in word else word)
    return shlex.join(masked)


def redact_url(url: str) -> str:
    """A URL with its password and any secret-named query parameter masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{MASK}@{host}" if ":" in userinfo else f"{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if is_secret_name(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
