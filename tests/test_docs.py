"""The README and the docs site (mkdocs.yml, docs/): a strict MkDocs build, links and anchors that
resolve, only commands the CLI has, cited repository paths that exist, a README under 250 lines."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from markdown.extensions.toc import slugify
from typer.core import TyperGroup

from cli import app

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_MAX_LINES = 250
BUILD_TIMEOUT_S = 300

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
COMMAND = re.compile(r"^(?:\$\s+)?(?:\S*/)?capplan\s+(\S+)(?:\s+(\S+))?")
PATH_TOKEN = re.compile(r"^[\w.-]+(?:/[\w.-]+)*/?$")
PATH_EXTENSIONS = frozenset(
    {".py", ".md", ".csv", ".json", ".yaml", ".yml", ".sh", ".toml", ".txt", ".png", ".cfg"}
)


def markdown_files() -> list[Path]:
    """Every page a reader meets: the README, the changelog and docs/*.md."""
    return [README, ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]


def split_code(text: str) -> tuple[list[str], list[str]]:
    """The prose lines and the fenced-code lines of a Markdown text."""
    prose: list[str] = []
    code: list[str] = []
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        (code if fenced else prose).append(line)
    return prose, code


def code_spans(prose: list[str]) -> list[str]:
    """The inline code of prose lines, with a table's escaped pipes read as pipes."""
    spans = [m.group(2).strip() for line in prose for m in CODE_SPAN.finditer(line)]
    return [span.replace("\\|", "|") for span in spans]


def links(prose: list[str]) -> list[str]:
    """Link and image targets outside code."""
    return [m.group(1) for line in prose for m in LINK.finditer(CODE_SPAN.sub("", line))]


def anchors(page: Path) -> set[str]:
    """The heading ids MkDocs gives a page (Python-Markdown's toc slugs)."""
    prose, _ = split_code(page.read_text(encoding="utf-8"))
    found = set()
    for line in prose:
        match = HEADING.match(line)
        if match:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(2)).replace("`", "")
            found.add(slugify(text.replace("*", ""), "-"))
    return found


def broken_links(page: Path) -> list[str]:
    """The relative links of a page whose file or anchor does not exist."""
    prose, _ = split_code(page.read_text(encoding="utf-8"))
    broken = []
    for target in links(prose):
        if re.match(r"^[a-z]+:", target):
            continue
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target} (no file {linked})")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target} (no heading #{anchor} in {linked.name})")
    return broken


def command_tree() -> dict[str, set[str]]:
    """Each command of the typer app, with the subcommands of a group (empty for a command)."""
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    tree = {}
    for name, command in root.commands.items():
        tree[name] = set(command.commands) if isinstance(command, TyperGroup) else set()
    return tree


def command_mentions(text: str) -> Iterator[str]:
    """Every `capplan ...` command line written in inline code or in a code block."""
    prose, code = split_code(text)
    for line in [*code_spans(prose), *(line.strip() for line in code)]:
        if COMMAND.match(line):
            yield line


def unknown_commands(text: str, tree: dict[str, set[str]]) -> list[str]:
    """The command lines of a text that name no command (or no subcommand) of the CLI."""
    unknown = []
    for line in command_mentions(text):
        match = COMMAND.match(line)
        assert match is not None
        name, sub = match.group(1), match.group(2) or ""
        if name.startswith("-") or name.isupper():  # `capplan --help`, `capplan COMMAND`
            continue
        subcommands = tree.get(name)
        named = {part for part in sub.split("|") if part and part[0].islower()}
        if subcommands is None or (subcommands and not named <= subcommands):
            unknown.append(line)
    return unknown


def ignored_patterns() -> list[str]:
    """The .gitignore patterns: paths a fresh clone lacks until something makes them."""
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return [line.strip().rstrip("/") for line in lines if line.strip() and not line.startswith("#")]


def is_ignored(path: str, patterns: list[str]) -> bool:
    """Whether a repository path, or a folder it lies in, is ignored."""
    parts = path.rstrip("/").split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(fnmatch.fnmatch(prefix, pattern) for prefix in prefixes for pattern in patterns)


def is_path_like(token: str, top: set[str]) -> bool:
    """Whether a word names a repository path: it starts at a top-level entry and names a
    folder (`planner/engine/`) or a file of a known kind (`app.py`), not a dotted name
    (`ui/text.plain`)."""
    if not PATH_TOKEN.match(token) or token.split("/", maxsplit=1)[0] not in top:
        return False
    suffix = Path(token.rstrip("/").rsplit("/", 1)[-1]).suffix
    return suffix in PATH_EXTENSIONS if suffix else "/" in token


def cited_paths(text: str) -> list[str]:
    """The repository paths a text cites, in inline code or as a word of a code block."""
    prose, code = split_code(text)
    words = [word.strip(",;:()") for line in code for word in line.split()]
    top = {entry.name for entry in ROOT.iterdir()} - {".git"}
    return [token for token in [*code_spans(prose), *words] if is_path_like(token, top)]


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of a config into a folder."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # Material's banner about its successor
    )


def test_readme_is_under_250_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < README_MAX_LINES, f"README.md has {len(lines)} lines"


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    result = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "method" / "index.html").exists()


@pytest.mark.slow
def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    with (tmp_path / "docs" / "index.md").open("a", encoding="utf-8") as page:
        page.write("\n[a page that is not there](no-such-page.md)\n")
    result = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    assert "no-such-page.md" in result.stderr


def test_every_page_is_in_the_site_navigation() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in sorted(DOCS.glob("*.md")):
        assert f": {page.name}" in config, f"{page.name} is not in mkdocs.yml's nav"


@pytest.mark.parametrize("page", markdown_files(), ids=lambda page: page.name)
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_link_check_finds_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Here\n\n[ok](#here) [gone](b.md) [lost](#there)\n")
    assert broken_links(tmp_path / "a.md") == [
        f"b.md (no file {tmp_path / 'b.md'})",
        "#there (no heading #there in a.md)",
    ]


@pytest.mark.parametrize("page", markdown_files(), ids=lambda page: page.name)
def test_every_command_written_is_a_command_of_the_cli(page: Path) -> None:
    assert unknown_commands(page.read_text(encoding="utf-8"), command_tree()) == []


def test_the_command_check_finds_a_command_the_cli_lacks() -> None:
    text = "`capplan plan X.yaml` `capplan frobnicate` `capplan db frobnicate` `capplan db upgrade`"
    assert unknown_commands(text, command_tree()) == ["capplan frobnicate", "capplan db frobnicate"]


def test_the_docs_write_every_command_of_the_cli() -> None:
    text = "\n".join(page.read_text(encoding="utf-8") for page in (README, DOCS / "cli.md"))
    written = " ".join(command_mentions(text))
    for name, subcommands in command_tree().items():
        assert f"capplan {name}" in written, f"`capplan {name}` is not documented"
        for sub in subcommands:
            assert re.search(rf"capplan {name} (\S*\|)?{sub}\b", written), f"{name} {sub}"


@pytest.mark.parametrize("page", markdown_files(), ids=lambda page: page.name)
def test_every_cited_repository_path_exists(page: Path) -> None:
    patterns = ignored_patterns()
    cited = cited_paths(page.read_text(encoding="utf-8"))
    missing = [path for path in cited if not (is_ignored(path, patterns) or (ROOT / path).exists())]
    assert missing == []


def test_the_path_check_reads_inline_code_and_code_blocks() -> None:
    text = "`planner/engine/` `ui/text.plain` `runs/x`\n```bash\nbash scripts/nothing.sh\n```\n"
    assert cited_paths(text) == ["planner/engine/", "scripts/nothing.sh"]
    assert is_ignored("data/capplan.db", ignored_patterns())
    assert is_ignored(".venv/bin/capplan", ignored_patterns())


@pytest.mark.parametrize("page", markdown_files(), ids=lambda page: page.name)
def test_no_page_cites_the_design_notes_as_a_repository_file(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "DESIGN.md" not in text and "../shared" not in text
