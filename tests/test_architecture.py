"""The package's shape: its modules import each other without a cycle, and no two sibling modules have
near-identical names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "lmms_eval_tasks"
PACKAGE = PACKAGE_DIR.name


def package_modules(root: Path = PACKAGE_DIR) -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (file, is a package ``__init__``)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def import_graph(root: Path = PACKAGE_DIR) -> dict[str, set[str]]:
    """module -> the package modules it imports, at module level or inside functions (``ast``).

    ``from a.b import c`` is an import of ``a.b.c`` when that is a module, else of ``a.b``; a module's
    implicit import of its parent packages is not an edge (it is what every submodule does).
    """
    modules = package_modules(root)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            for target in targets:
                resolved = resolve(target) if target.split(".")[0] == PACKAGE else None
                if resolved is not None and resolved != name:
                    graph[name].add(resolved)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, ..., a]``, or None when the graph is acyclic."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_package_import_graph_is_acyclic() -> None:
    graph = import_graph()
    assert len(graph) > 100 and graph[f"{PACKAGE}.host.launcher"]  # the graph was really built
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_function_level_cycles(tmp_path: Path) -> None:
    # a imports b at module level, b imports a inside a function (the kind a lazy import hides)
    package = tmp_path / PACKAGE
    (package / "room").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "room" / "__init__.py").write_text("")
    (package / "room" / "a.py").write_text(f"from {PACKAGE}.room import b\n")
    (package / "room" / "b.py").write_text("def f():\n    from . import a\n    return a\n")
    (package / "room" / "c.py").write_text(f"from {PACKAGE}.room.a import something\n")
    graph = import_graph(package)
    assert graph[f"{PACKAGE}.room.c"] == {f"{PACKAGE}.room.a"}
    assert find_cycle(graph) == [f"{PACKAGE}.room.a", f"{PACKAGE}.room.b", f"{PACKAGE}.room.a"]
    assert find_cycle({"x": {"y"}, "y": set()}) is None


def _edit_distance(first: str, second: str) -> int:
    previous = list(range(len(second) + 1))
    for i, left in enumerate(first, 1):
        current = [i]
        for j, right in enumerate(second, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (left != right)))
        previous = current
    return previous[-1]


def near_homonyms(names: list[str]) -> list[tuple[str, str]]:
    """Pairs of names that differ by a plural ``s``/``es`` or by one edit (both at least 4 letters)."""
    pairs = []
    for index, first in enumerate(names):
        for second in names[index + 1 :]:
            plural = {first + "s", first + "es"} & {second} or {second + "s", second + "es"} & {first}
            close = min(len(first), len(second)) >= 4 and _edit_distance(first, second) <= 1
            if plural or close:
                pairs.append((first, second))
    return pairs


def test_near_homonyms_are_recognised() -> None:
    assert near_homonyms(["report", "reports", "scoring"]) == [("report", "reports")]
    assert near_homonyms(["patch", "patches", "porch"]) == [("patch", "patches")]
    assert near_homonyms(["runner", "runners", "ranner"]) == [("runner", "runners"), ("runner", "ranner")]
    assert near_homonyms(["sections", "section_"]) == [("sections", "section_")]
    assert near_homonyms(["hooks", "tasks", "cli"]) == []


@pytest.mark.parametrize(
    "folder",
    [PACKAGE_DIR, *sorted(path.parent for path in PACKAGE_DIR.glob("*/__init__.py"))],
    ids=lambda path: path.name,
)
def test_no_two_modules_of_a_room_are_near_homonyms(folder: Path) -> None:
    names = sorted(
        path.stem if path.is_file() else path.name
        for path in folder.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__") or (path / "__init__.py").is_file()
    )
    assert near_homonyms(names) == [], f"{folder.relative_to(PACKAGE_DIR.parent)}: {names}"
