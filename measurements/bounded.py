"""Bounded parsing: every JSON and YAML document capplan reads (uploads, run files, scenarios,
backups) goes through load_json / load_yaml, which refuse, with an InputError naming the file, the
place and a bounded preview, what would take unbounded time or memory downstream: nesting deeper
than `max_depth`, YAML aliases that expand past `max_alias_nodes` extra values (a "billion laughs"
file is a few KB), lists longer than `max_list`, numbers beyond `max_abs_number` and keys given
twice (the last silently won). The YAML merge key `<<:` is supported.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass

import yaml

from errors import InputError, preview

Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Limits:
    """What one document may hold."""

    max_bytes: int | None = None  # of the text; files are size-checked before they are read
    max_depth: int = 64
    max_alias_nodes: int = 100_000  # values aliases add beyond those written out
    max_list: int = 5_000_000
    max_abs_number: float = 1e21  # nanosecond timestamps (~1.8e18) fit


DEFAULT_LIMITS = Limits()


def load_json(text: str | bytes, file: str, limits: Limits = DEFAULT_LIMITS) -> object:
    """Parse one JSON document within the limits (InputError otherwise)."""
    _check_size(text, file, limits)
    try:
        value = json_loads(text)
    except DuplicateKeyError as exc:
        raise InputError(str(exc), file=file) from None
    except RecursionError:
        raise InputError(_too_deep(limits), file=file) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid JSON: {exc}", file=file) from None
    check(value, file, limits)
    return value


def load_yaml(text: str, file: str, limits: Limits = DEFAULT_LIMITS) -> object:
    """Parse one YAML document (safe tags only) within the limits (InputError otherwise)."""
    documents = load_yaml_all(text, file, limits)
    if len(documents) > 1:
        raise InputError(f"expected one YAML document, found {len(documents)}", file=file)
    return documents[0] if documents else None


def load_yaml_all(text: str, file: str, limits: Limits = DEFAULT_LIMITS) -> list[object]:
    """Parse every YAML document of a stream (safe tags only) within the limits."""
    _check_size(text, file, limits)
    loader = _Loader(text)
    try:
        documents: list[object] = []
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                break
            _check_aliases(node, file, limits)
            documents.append(loader.construct_document(node))
    except RecursionError:
        raise InputError(_too_deep(limits), file=file) from None
    except yaml.YAMLError as exc:
        raise InputError(_yaml_problem(exc), file=file) from None
    finally:
        loader.dispose()
    for document in documents:
        check(document, file, limits)
    return documents


def check(value: object, file: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse a decoded document deeper, longer or with larger numbers than the limits."""
    stack: list[tuple[object, Path]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > limits.max_depth:
            raise InputError(_too_deep(limits), file=file, field=_dotted(path))
        if isinstance(item, dict):
            stack.extend((v, (*path, str(k))) for k, v in item.items())
        elif isinstance(item, list | tuple):
            if len(item) > limits.max_list:
                raise InputError(
                    f"a list of {len(item):,} items; at most {limits.max_list:,} are read",
                    file=file,
                    field=_dotted(path),
                )
            stack.extend((v, (*path, i)) for i, v in enumerate(item))
        elif isinstance(item, int | float) and not isinstance(item, bool):
            _check_number(item, path, file, limits)


def _check_size(text: str | bytes, file: str, limits: Limits) -> None:
    if limits.max_bytes is not None and len(text) > limits.max_bytes:
        raise InputError(
            f"{len(text):,} characters; at most {limits.max_bytes:,} are read", file=file
        )


def _check_number(number: float, path: Path, file: str, limits: Limits) -> None:
    # NaN and infinities pass: tools write NaN for a statistic they could not compute, and the
    # RunFile models refuse them where a number is needed.
    if isinstance(number, float) and not math.isfinite(number):
        return
    if abs(number) > limits.max_abs_number:
        raise InputError(
            f"a number beyond +-{limits.max_abs_number:g}",
            file=file,
            field=_dotted(path),
            value=number,
        )


class DuplicateKeyError(ValueError):
    """A JSON object that gives one key twice (json.loads would keep the last silently)."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"key {preview(key)} is given twice in one object")


def json_loads(text: str | bytes) -> object:
    """json.loads that raises DuplicateKeyError for a key given twice; no other limit (check()
    bounds the result)."""
    return json.loads(text, object_pairs_hook=_unique_pairs)


def _unique_pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise DuplicateKeyError(key)
        found[key] = value
    return found


# libyaml's parser where PyYAML was built with it (the wheels are): ~10x the pure-Python one.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):  # type: ignore[misc,valid-type]
    """SafeLoader that refuses a key given twice in one mapping (merged keys may be overridden,
    as YAML's merge key means)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[object, object]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: the base constructor says so
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {preview(key)} is given twice", key_node.start_mark
                )
            seen.add(key)
        mapping: dict[object, object] = super().construct_mapping(node, deep=deep)
        return mapping


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        yield from node.value
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key
            yield value


def _check_aliases(root: yaml.Node, file: str, limits: Limits) -> None:
    """Refuse aliases that expand to more than max_alias_nodes values beyond the written ones,
    or refer to themselves: counted on the node graph (each node once), never expanded."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        key = id(node)
        if closing:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise InputError("a YAML alias refers to a value that contains it", file=file)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    expanded, written = sizes[id(root)], len(sizes)
    if expanded - written > limits.max_alias_nodes:
        raise InputError(
            f"YAML aliases expand {written:,} written values to {expanded:,}; at most "
            f"{limits.max_alias_nodes:,} more are read (an alias bomb?)",
            file=file,
        )


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or str(exc)
    return f"not valid YAML{where}: {problem}"


def _too_deep(limits: Limits) -> str:
    return f"nested deeper than {limits.max_depth} levels"


def _dotted(path: Path) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    return (text if len(text) <= 120 else text[:117] + "...") if text else "(top level)"
