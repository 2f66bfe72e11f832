"""Everything the README and docs/ cite exists: repository files and folders (test files included), links
between pages, and task names (the pages drifted: moved test files, a task `vrb_fog_s3` that never
existed, 14 headline keys where the task YAML lists 8)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT

PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
ROOTS = ("lmms_eval_tasks/", "tests/", "docs/", "scripts/", "benchmarks/", "constraints/")
TASK_PREFIXES = (
    "dare", "hallusionbench", "vrb", "tdiuc", "tallyqa", "dvqa", "vqdv1", "contextual", "revisiting",
)  # fmt: skip
# Backticked names with a task prefix that are not tasks: a corruption profile, judge prompt names, the
# group `lmms-eval-tasks robustness` writes, report keys.
NOT_TASKS = {
    "vrb_official", "vrb_robustness", "vrb_seed", "vrb_llava", "contextual_gpt4_judge",
    "hallusionbench_correctness_judge",
}  # fmt: skip
# Paths of a run's output and of architecture.md's example benchmark, not of the repository.
NOT_PATHS = {
    "lmms_eval_tasks/latest.json", "docs/mybench.md", "lmms_eval_tasks/tasks/mybench/",
    "tests/mybench/test_mybench.py",
}  # fmt: skip


def _code_spans(text: str) -> list[str]:
    """Every inline code span and every word of a fenced block (commands cite paths and tasks too)."""
    spans = re.findall(r"(?<!`)`([^`\n]+)`(?!`)", re.sub(r"```.*?```", "", text, flags=re.S))
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        spans += re.split(r"[\s=,\"']+", block)
    return spans


def _cited_paths(text: str) -> set[str]:
    found = set()
    for span in _code_spans(text):
        for word in re.split(r"[\s(),;:]+", span):
            word = word.rstrip(".").split("::")[0].split("#")[0]
            if word.startswith(ROOTS) and not re.search(r"[<>*{}\[\]$]", word):
                found.add(word)
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"[a-z]+:", link) and not link.startswith("#"):
            found.add(link.split("#")[0])
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda path: path.name)
def test_every_cited_file_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    base = page.parent
    missing = sorted(
        path
        for path in _cited_paths(text)
        if not (REPO_ROOT / path).exists() and not (base / path).exists() and path not in NOT_PATHS
    )
    assert not missing, f"{page.name} cites paths that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda path: path.name)
def test_every_cited_task_exists(page: Path) -> None:
    from lmms_eval_tasks.framework.task_index import pack_names

    known = pack_names()
    cited = {
        word
        for word in _code_spans(page.read_text(encoding="utf-8"))
        if re.fullmatch(rf"(?:{'|'.join(TASK_PREFIXES)})(?:_[a-z0-9]+)*", word)
    }
    from lmms_eval_tasks.framework.registry import benchmarks

    unknown = sorted(cited - known - set(benchmarks()) - NOT_TASKS)
    assert not unknown, f"{page.name} cites tasks the pack does not define: {unknown}"


def test_hallusionbench_page_counts_the_headline_keys_the_yaml_lists() -> None:
    from lmms_eval_tasks.framework.registry import get_benchmark

    headline = get_benchmark("hallusionbench").headline_metrics
    text = (REPO_ROOT / "docs" / "hallusionbench.md").read_text(encoding="utf-8")
    assert f"{len(headline)} headline keys" in text
    assert all(f"`{key}`" in text for key in headline)


def _message_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of the string literals of a module that are not docstrings nor ``docs=`` registry
    values (which name the page inside the repository, for the tests and the architecture)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant):
                skipped.add(id(body[0].value))
        if isinstance(node, ast.keyword) and node.arg == "docs":
            skipped.add(id(node.value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped
    ]


def test_messages_cite_no_repository_docs_path() -> None:
    """A pip install has no docs/ folder: messages cite `documentation.doc(page)` (the installed copy)."""
    package = REPO_ROOT / "lmms_eval_tasks"
    found = [
        f"{path.relative_to(REPO_ROOT)}:{line}: {text[:80]!r}"
        for path in sorted(package.rglob("*.py"))
        for line, text in _message_strings(path)
        if re.search(r"docs/[a-z_]+\.md", text)
    ]
    assert not found, found


def test_doc_gives_a_path_that_exists() -> None:
    from lmms_eval_tasks.documentation import doc

    assert Path(doc("models.md")).is_file()
    assert doc("judges.md#cache").endswith("judges.md#cache")
    assert doc("no_such_page.md") == "no_such_page.md in the lmms-eval-tasks documentation"
