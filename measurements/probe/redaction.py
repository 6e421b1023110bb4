"""Keep secrets out of what capplan stores and prints: launch commands and engine arguments
with an API key or token in them (`--api-key sk-...`, `--hf-token=...`, `HF_TOKEN=... vllm serve`),
URLs with a password or key in them, and server log lines quoted in error messages.

The probe reads its API key only from the environment variable it is told the NAME of, and
remembers it here (remember_secret): every text redact_text masks has that key masked too,
wherever a server echoed it (a 401 body, an error event, a log line). A key typed into a launch
command (`vllm serve M --api-key sk-...`, `-k sk-...`) or a base URL is masked here before the
RunFile is written, printed or stored."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "MASK",
    "is_secret_env_name",
    "is_secret_name",
    "redact_args",
    "redact_argv",
    "redact_command",
    "redact_text",
    "redact_url",
    "redact_value",
    "remember_command_secrets",
    "remember_secret",
]

MASK = "***"
# Flag or parameter names whose value is a secret: api-key, api_key, hf-token, password, ...
# (ending in the word, so --tokenizer and --max-num-batched-tokens are not secrets).
_SECRET_WORDS = r"api[-_]?key|key|token|secret|password|passwd|pass|credentials?|auth"
_SECRET_NAME = re.compile(rf"(^|[-_])({_SECRET_WORDS})$", re.IGNORECASE)
# Environment variable names: secret when one `_` part is a secret word (HF_TOKEN,
# VLLM_API_KEY, AWS_SECRET_ACCESS_KEY) or the name ends in one (PGPASSWORD); not
# TOKENIZERS_PARALLELISM or MAX_NUM_BATCHED_TOKENS.
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENV_PARTS = frozenset(
    {
        "KEY",
        "APIKEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "AUTH",
        "CREDENTIAL",
        "CREDENTIALS",
    }
)
_ENV_ENDING = re.compile(r"(APIKEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)
_BEARER = re.compile(r"(\b(?:bearer|basic)\s+)[^\s'\",;]+", re.IGNORECASE)
# Short flags that take a key (`-k sk-...`, as several servers and clients spell --api-key).
_SECRET_SHORT_FLAGS = frozenset({"-k", "-K"})
# Keys recognisable by their own shape, wherever they stand: OpenAI/vLLM `sk-`, Hugging Face
# `hf_`, GitHub tokens, Slack tokens, AWS access key ids.
_KEY_SHAPE = re.compile(
    r"\b(?:sk-[\w-]{6,}|hf_\w{6,}|gh[pousr]_\w{6,}|github_pat_\w{6,}|xox[abprs]-[\w-]{6,}"
    r"|AKIA[0-9A-Z]{12,})"
)
_HEADER = re.compile(
    r"(\b(?:proxy-)?authorization|\bx-api-key|\bapi-key)(['\"]?\s*[:=]\s*['\"]?)"
    r"(?!(?:bearer|basic)\s)[^\s'\",;]+",
    re.IGNORECASE,
)
_TEXT_SHORT = re.compile(r"(?<![\w-])(-[kK])(\s+|=)(?!-)('[^']*'|\"[^\"]*\"|[^\s'\",;]+)")
# Secrets this process holds (the API key it read): masked in every text, however echoed.
_KNOWN_SECRETS: set[str] = set()
_MIN_SECRET_CHARS = 6  # shorter values would mask ordinary words
# Free text (log lines, unparseable commands): the patterns redact_text masks.
_TEXT_FLAG = re.compile(
    rf"(?<![\w-])(--?[\w-]*?(?:{_SECRET_WORDS}))(=|\s+)(?!-)('[^']*'|\"[^\"]*\"|['\"]?[^\s'\",]+)",
    re.IGNORECASE,
)
# `['--api-key', 'sk-...']`: an argv printed as a Python list
_TEXT_LISTED = re.compile(rf"(['\"]--?[\w-]*?(?:{_SECRET_WORDS})['\"],\s*)(['\"])[^'\"]*\2", re.I)
_TEXT_ASSIGN = re.compile(r"(?<![\w-])([A-Za-z_][A-Za-z0-9_]*)=([^\s,;&=(){}\[\]]+)")
_TEXT_MAPPING = re.compile(r"(['\"])([\w-]+)\1(\s*:\s*)(\[[^\]]*\]|'[^']*'|\"[^\"]*\"|[^\s,}]+)")
_TEXT_USERINFO = re.compile(r"(\b[a-zA-Z][\w+.-]*://[^\s/@:]*:)[^\s/@]+@")
_TEXT_QUERY = re.compile(r"([?&]([\w-]+)=)([^&\s'\"]+)")


def remember_secret(value: str | None) -> None:
    """Mask this exact value in every text redact_text handles from now on (the API key)."""
    if value and len(value) >= _MIN_SECRET_CHARS:
        _KNOWN_SECRETS.add(value)


def remember_command_secrets(argv: Iterable[str], env: dict[str, str]) -> None:
    """Remember the secrets a launch command carries (secret-named flags' values, `-k KEY`,
    secret environment values): a server that prints them raw in its log is masked too."""
    for name, value in env.items():
        if is_secret_env_name(name):
            remember_secret(value)
    words = list(argv)
    for word, following in zip(words, [*words[1:], ""], strict=True):
        flag, sep, value = word.partition("=")
        if not flag.startswith("-"):
            continue
        if flag in _SECRET_SHORT_FLAGS or is_secret_name(flag.lstrip("-")):
            remember_secret(value if sep else following)


def _mask_known(text: str) -> str:
    for secret in _KNOWN_SECRETS:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def is_secret_name(name: str) -> bool:
    """True for a flag, argument or parameter name that carries a secret."""
    return bool(_SECRET_NAME.search(name.strip()))


def is_secret_env_name(name: str) -> bool:
    """True for an environment variable name that carries a secret (HF_TOKEN, PGPASSWORD)."""
    if not _ENV_NAME.fullmatch(name):
        return False
    return bool(_ENV_PARTS.intersection(name.upper().split("_")) or _ENV_ENDING.search(name))


def redact_args(args: dict[str, str]) -> dict[str, str]:
    """Engine arguments with the values of secret-named flags masked."""
    return {name: MASK if is_secret_name(name) else value for name, value in args.items()}


def redact_argv(argv: Iterable[str]) -> list[str]:
    """An argv with the value after (or `=` of) every secret-named flag masked, secret
    `NAME=value` environment assignments masked, and URL passwords and keys masked."""
    masked: list[str] = []
    hide_next = False
    for word in argv:
        if hide_next and not word.startswith("-"):
            masked.append(MASK)
            hide_next = False
            continue
        hide_next = False
        if word.startswith("-"):
            flag, sep, value = word.partition("=")
            if flag in _SECRET_SHORT_FLAGS or is_secret_name(flag.lstrip("-")):
                hide_next = not sep
                masked.append(f"{flag}={MASK}" if sep else word)
            else:
                masked.append(f"{flag}={_redact_word(value)}" if sep else word)
            continue
        masked.append(_redact_word(word))
    return masked


def _redact_word(word: str) -> str:
    name, sep, _ = word.partition("=")
    if sep and is_secret_env_name(name):
        return f"{name}={MASK}"
    if "://" in word:
        word = redact_url(word)
    word = _KEY_SHAPE.sub(MASK, _mask_known(word))
    return _HEADER.sub(rf"\1\2{MASK}", _BEARER.sub(rf"\1{MASK}", word))


def redact_command(command: str) -> str:
    """A shell command line with secrets masked as redact_argv does; unchanged (as typed)
    when there is nothing to mask."""
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: mask crudely rather than keep a key
        return redact_text(command)
    masked = redact_argv(words)
    return command if masked == words else shlex.join(masked)


def redact_text(text: str) -> str:
    """Free text (a log tail, a message) with secret-looking flag values, `NAME=value`
    assignments, `'api_key': ...` mapping entries, bearer tokens and URL passwords masked."""

    def flag(match: re.Match[str]) -> str:
        return f"{match[1]}{match[2]}{MASK}"

    def assign(match: re.Match[str]) -> str:
        secret = is_secret_env_name(match[1]) or is_secret_name(match[1])
        return f"{match[1]}={MASK}" if secret else match[0]

    def mapping(match: re.Match[str]) -> str:
        if not is_secret_name(match[2]):
            return match[0]
        return f"{match[1]}{match[2]}{match[1]}{match[3]}'{MASK}'"

    def query(match: re.Match[str]) -> str:
        return f"{match[1]}{MASK}" if is_secret_name(match[2]) else match[0]

    text = _mask_known(text)
    text = _TEXT_USERINFO.sub(rf"\1{MASK}@", text)
    text = _TEXT_QUERY.sub(query, text)
    text = _TEXT_FLAG.sub(flag, text)
    text = _TEXT_LISTED.sub(rf"\1'{MASK}'", text)
    text = _TEXT_ASSIGN.sub(assign, text)
    text = _TEXT_MAPPING.sub(mapping, text)
    text = _TEXT_SHORT.sub(flag, text)
    text = _HEADER.sub(rf"\1\2{MASK}", text)
    return _KEY_SHAPE.sub(MASK, _BEARER.sub(rf"\1{MASK}", text))


def redact_value(value: object) -> object:
    """A value quoted in an error message, secrets masked: text, an argv or an args dict."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return type(value)(redact_argv(value))
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return redact_args({str(k): v for k, v in value.items()})
    return value


def redact_url(url: str) -> str:
    """A URL with its password and any secret-named query parameter masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url) if "://" in url else url
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
