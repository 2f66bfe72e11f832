"""The package's shape: its modules import each other without a cycle, no two rooms (the top-level
subpackages and modules: framework, host, reporting, cli, ...) import each other in both directions, no
module imports a private (``_name``) name or module of another room, and no two sibling modules have
near-identical names; each benchmark's ``scoring.py`` defines its entry points (``Options``, ``score``,
``evaluate``) before its private helpers, so it reads top down."""

from __future__ import annotations

import ast
import re
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


def room_of(module: str) -> str:
    """The room of a package module: its top-level subpackage or module (``framework``, ``demo``, ...)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<package>"


def room_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(room, room it imports) -> the module imports behind that room import."""
    edges: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for source, targets in graph.items():
        for target in sorted(targets):
            if room_of(source) != room_of(target):
                edges.setdefault((room_of(source), room_of(target)), []).append((source, target))
    return edges


def two_way_rooms(graph: dict[str, set[str]]) -> list[str]:
    """Each pair of rooms importing each other, with the imports of both directions."""
    edges = room_edges(graph)
    pairs = []
    for first, second in sorted(edges):
        if first < second and (second, first) in edges:
            shown = [f"{a} -> {b}" for a, b in [*edges[(first, second)], *edges[(second, first)]]]
            pairs.append(f"{first} <-> {second}: " + "; ".join(shown))
    return pairs


def private_imports(root: Path = PACKAGE_DIR) -> list[str]:
    """``file:line`` of every import of a private name (or private module) of another room."""
    modules = package_modules(root)
    found = []
    for name, (path, _) in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [(node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [(alias.name, "") for alias in node.names]
            else:
                continue
            for module, imported in targets:
                if module.split(".")[0] != PACKAGE or room_of(module) == room_of(name):
                    continue
                private = [part for part in [*module.split("."), imported] if part.startswith("_")]
                if any(not part.startswith("__") for part in private):
                    found.append(
                        f"{path.relative_to(root.parent)}:{node.lineno}: {module} {imported}".strip()
                    )
    return found


def test_no_two_rooms_import_each_other() -> None:
    graph = import_graph()
    assert room_edges(graph)[("host", "framework")]  # the room graph was really built
    assert two_way_rooms(graph) == []


def test_no_module_imports_a_private_name_of_another_room() -> None:
    assert private_imports() == []


def test_the_room_checks_find_two_way_rooms_and_private_imports(tmp_path: Path) -> None:
    # room a imports room b at module level, b imports a inside a function, and a private name of a
    package = tmp_path / PACKAGE
    for room in ("a", "b"):
        (package / room).mkdir(parents=True)
        (package / room / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "a" / "one.py").write_text(f"from {PACKAGE}.b import two\n_hidden = 1\n")
    (package / "b" / "two.py").write_text(
        f"def f():\n    from {PACKAGE}.a.one import _hidden\n    return _hidden\n"
    )
    (package / "b" / "three.py").write_text(f"import {PACKAGE}.a._inner\n")
    (package / "a" / "_inner.py").write_text("")
    graph = import_graph(package)
    assert two_way_rooms(graph) == [
        f"a <-> b: {PACKAGE}.a.one -> {PACKAGE}.b.two; {PACKAGE}.b.three -> {PACKAGE}.a._inner; "
        f"{PACKAGE}.b.two -> {PACKAGE}.a.one"
    ]
    assert private_imports(package) == [
        f"{PACKAGE}/b/three.py:1: {PACKAGE}.a._inner",
        f"{PACKAGE}/b/two.py:2: {PACKAGE}.a.one _hidden",
    ]


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


ARCHITECTURE_DOC = PACKAGE_DIR.parent / "docs" / "architecture.md"
WALK_HEADING = "## The walk: one sample through a run, one `score` call"
WALK_CALL = re.compile(r"`([\w/]+\.py):([\w.]+)`")


def walk_calls(text: str) -> list[tuple[str, str]]:
    """Every ``file:function`` the walk section of docs/architecture.md names, in order."""
    section = text.split(WALK_HEADING, 1)[1].split("\n## ", 1)[0]
    return WALK_CALL.findall(section)


def defines(path: Path, dotted: str) -> bool:
    """True when ``path`` defines ``dotted``: a module-level function, class or name, or ``Class.method``."""
    scope: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    *owners, name = dotted.split(".")
    for owner in owners:
        classes = [node for node in scope if isinstance(node, ast.ClassDef) and node.name == owner]
        if not classes:
            return False
        scope = classes[0].body
    for node in scope:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return True
    return False


def missing_calls(calls: list[tuple[str, str]], root: Path = PACKAGE_DIR) -> list[str]:
    """The ``file:function`` calls whose file or function does not exist under ``root``."""
    return [
        f"{file}:{name}"
        for file, name in calls
        if not (root / file).is_file() or not defines(root / file, name)
    ]


def test_every_call_of_the_architecture_walk_exists() -> None:
    calls = walk_calls(ARCHITECTURE_DOC.read_text(encoding="utf-8"))
    assert len(calls) >= 30  # the walk was really read: a run and a `score` call, step by step
    assert ("framework/task_pipeline.py", "score_and_report") in calls
    assert missing_calls(calls) == []


def test_the_walk_check_finds_missing_files_and_functions(tmp_path: Path) -> None:
    (tmp_path / "room").mkdir()
    (tmp_path / "room" / "mod.py").write_text("X = 1\ndef f(): pass\nclass C:\n    def m(self): pass\n")
    text = f"{WALK_HEADING}\n`room/mod.py:f` `room/mod.py:C.m` `room/mod.py:X` `room/mod.py:C.n`\n"
    text += "`room/mod.py:g` `room/gone.py:f`\n## Next\n`room/mod.py:h`"
    calls = walk_calls(text)
    assert len(calls) == 6  # the next section is not part of the walk
    assert missing_calls(calls, tmp_path) == ["room/mod.py:C.n", "room/mod.py:g", "room/gone.py:f"]


# ---- each benchmark's scoring.py reads top down: its entry points before its private helpers ----------

ENTRY_POINTS = ("Options", "score", "evaluate")


def entry_points_after_helpers(path: Path) -> list[str]:
    """The entry points (``score`` and the ones it calls first) defined after a private (``_name``)
    top-level function or class of ``path``: "entry (line) after helper (line)"."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    definitions = [
        node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    private = [node for node in definitions if node.name.startswith("_")]
    if not private:
        return []
    first = min(private, key=lambda node: node.lineno)
    return [
        f"{node.name} (line {node.lineno}) after {first.name} (line {first.lineno})"
        for node in definitions
        if node.name in ENTRY_POINTS and node.lineno > first.lineno
    ]


SCORING_FILES = sorted((PACKAGE_DIR / "tasks").glob("*/scoring.py"))


def test_every_benchmark_has_a_scoring_module_with_score() -> None:
    text = {path.parent.name: path.read_text(encoding="utf-8") for path in SCORING_FILES}
    with_score = [name for name, source in text.items() if "\ndef score(" in source]
    assert len(with_score) >= 8, with_score


@pytest.mark.parametrize("path", SCORING_FILES, ids=lambda path: path.parent.name)
def test_scoring_entry_points_come_before_private_helpers(path: Path) -> None:
    assert entry_points_after_helpers(path) == [], f"{path.parent.name}/scoring.py reads bottom up"


def test_the_top_down_check_finds_an_entry_point_below_a_helper(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text("X = 1\n\n\ndef score(r):\n    return _h(r)\n\n\ndef _h(r):\n    return r\n")
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def _h(r):\n    return r\n\n\ndef score(r):\n    return _h(r)\n\n\nclass Options:\n    pass\n"
    )
    assert entry_points_after_helpers(good) == []
    assert entry_points_after_helpers(bad) == [
        "score (line 5) after _h (line 1)",
        "Options (line 9) after _h (line 1)",
    ]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=" ".join)
def test_the_code_is_ruff_clean(command: list[str]) -> None:
    """`ruff check` and `ruff format --check` pass on the package, its tests and benchmarks (`make lint`)."""
    import subprocess
    import sys

    folders = ["lmms_eval_tasks", "tests", "benchmarks"]
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", *command, *folders],
        cwd=PACKAGE_DIR.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ruff.returncode == 0, ruff.stdout[-3000:] + ruff.stderr[-2000:]
