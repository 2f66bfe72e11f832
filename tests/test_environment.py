"""The pack's environment variables: one table (``lmms_eval_tasks.environment``), one reader, one docs page.

Host and library variables (``HF_*``, ``OPENAI_*``, ``MODEL_VERSION``, ``NLTK_DATA``, ...) are read where
they are used; every ``LMMS_EVAL_TASKS_*`` read goes through ``environment``, at call time.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from lmms_eval_tasks import PACKAGE_DIR, environment

REPOSITORY = PACKAGE_DIR.parent
READER = PACKAGE_DIR / "environment.py"
# Modules that read host variables by a key computed at run time (a loop over names), with why; their keys
# cannot be resolved statically, so they are named here (a pack variable among them would be a defect).
HOST_LOOP_READERS = {
    "host/datasets_cache.py": "the HF offline and proxy variables, by list",
    "judges/config.py": "_first_env: the host's OpenAI/Azure names (the pack's go through environment.value)",
    "doctor.py": "_redact: the host's key variables (the pack's key through environment.value)",
}
PACK_NAME = re.compile(r"(?<!\[)LMMS_EVAL_TASKS_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_<*])")  # "[...]": a text marker


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            if isinstance(node.value.value, str):
                found.update({t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)})
    return found


def _key_text(key: ast.expr, constants: dict[str, str]) -> str | None:
    """The variable name a read asks for (its start, for an f-string), or None when not known statically."""
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    if isinstance(key, ast.Name):
        return constants.get(key.id)
    if isinstance(key, ast.JoinedStr) and key.values:
        return _key_text(
            key.values[0].value if isinstance(key.values[0], ast.FormattedValue) else key.values[0], constants
        )
    return None


def _is_environ(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name)


def environment_reads(path: Path) -> list[tuple[int, str | None]]:
    """(line, variable or None when unknown) of every ``os.environ.get``/``os.getenv``/``os.environ[...]``/
    ``... in os.environ`` read in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    constants = _constants(tree)
    reads = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if (node.func.attr == "get" and _is_environ(node.func.value)) or node.func.attr == "getenv":
                key = node.args[0]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value):
            key = node.slice
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            key = node.left
        if key is not None:
            reads.append((node.lineno, _key_text(key, constants)))
    return reads


def direct_pack_reads(root: Path = PACKAGE_DIR) -> list[str]:
    """``file:line: variable`` of every read of a pack variable outside ``environment.py``, and of every read
    whose key is unknown outside the named host readers."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path == READER:
            continue
        relative = path.relative_to(root).as_posix()
        for line, name in environment_reads(path):
            if name is None and relative not in HOST_LOOP_READERS:
                found.append(f"{relative}:{line}: a variable named at run time")
            elif name is not None and name.startswith(environment.PREFIX):
                found.append(f"{relative}:{line}: {name}")
    return found


def test_no_module_outside_environment_reads_a_pack_variable() -> None:
    assert direct_pack_reads() == []


def test_the_read_finder_finds_direct_reads(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        'import os\nNAME = "LMMS_EVAL_TASKS_X"\nPREFIX = "LMMS_EVAL_TASKS_JUDGE"\n'
        'os.environ.get(NAME)\nos.getenv("LMMS_EVAL_TASKS_Y")\nos.environ[f"{PREFIX}_CACHE"]\n'
        '"LMMS_EVAL_TASKS_Z" in os.environ\nos.environ.get("HF_HOME")\nfor n in []:\n    os.environ.get(n)\n'
    )
    assert direct_pack_reads(tmp_path) == [
        "a.py:4: LMMS_EVAL_TASKS_X",
        "a.py:5: LMMS_EVAL_TASKS_Y",
        "a.py:6: LMMS_EVAL_TASKS_JUDGE",
        "a.py:7: LMMS_EVAL_TASKS_Z",
        "a.py:10: a variable named at run time",
    ]


def test_every_pack_variable_the_code_names_is_declared() -> None:
    """A name in the code (constants, messages, docstrings) that is no declared variable is a variable read
    around the table, or a stale name; families (``..._<TASK>``, ``..._*_CONTEXTUAL``) are left out."""
    undeclared = set()
    for path in PACKAGE_DIR.rglob("*.py"):
        for match in PACK_NAME.finditer(path.read_text(encoding="utf-8")):
            if not environment.declared(match.group()):
                undeclared.add(f"{path.relative_to(PACKAGE_DIR).as_posix()}: {match.group()}")
    assert sorted(undeclared) == []


def test_the_docs_page_is_the_table() -> None:
    page = (REPOSITORY / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert environment.markdown_table() in page, "run: python -c 'from lmms_eval_tasks import environment; "
    "print(environment.markdown_table())' and paste it into docs/configuration.md"
    assert "docs/configuration.md" in (REPOSITORY / "README.md").read_text(encoding="utf-8")


def test_accessors_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LMMS_EVAL_TASKS_VRB_SEED", raising=False)
    assert environment.value("LMMS_EVAL_TASKS_VRB_SEED") is None
    assert environment.integer("LMMS_EVAL_TASKS_VRB_SEED", 7, 0) == 7
    monkeypatch.setenv("LMMS_EVAL_TASKS_VRB_SEED", " 3 ")
    assert environment.text("LMMS_EVAL_TASKS_VRB_SEED") == "3"
    assert environment.integer("LMMS_EVAL_TASKS_VRB_SEED", 7, 0) == 3
    monkeypatch.setenv("LMMS_EVAL_TASKS_VRB_SEED", "-1")
    with pytest.raises(ValueError, match=r"LMMS_EVAL_TASKS_VRB_SEED=-1: must be >= 0"):
        environment.integer("LMMS_EVAL_TASKS_VRB_SEED", 7, 0)
    monkeypatch.setenv("LMMS_EVAL_TASKS_VRB_SEED", "x")
    with pytest.raises(ValueError, match=r"LMMS_EVAL_TASKS_VRB_SEED='x': expected an integer"):
        environment.integer("LMMS_EVAL_TASKS_VRB_SEED", 7, 0)
    with pytest.raises(KeyError, match="not declared"):
        environment.value("LMMS_EVAL_TASKS_NO_SUCH_THING")


@pytest.mark.parametrize(
    ("raw", "flag", "yes"),
    [(None, False, False), ("", False, False), ("0", False, False), ("off", False, False),
     ("1", True, True), ("TRUE", True, True), ("2", True, False), ("enabled", True, False)],
)  # fmt: skip
def test_switches(monkeypatch: pytest.MonkeyPatch, raw: str | None, flag: bool, yes: bool) -> None:
    """``flag``: on unless an off spelling (the launcher's switches); ``yes``: on only for 1/true/yes/on
    (ConTextual's opt-ins), as each reader did before the table."""
    name = "LMMS_EVAL_TASKS_CONTEXTUAL_IMAGE_JUDGE"
    if raw is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, raw)
    assert (environment.flag(name), environment.yes(name)) == (flag, yes)


def test_judge_settings_per_task_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MODEL", "global")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MODEL_HALLUSIONBENCH", "")
    assert environment.judge_setting("model", "hallusionbench") == "global"  # empty: not set
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MODEL_HALLUSIONBENCH", "one")
    assert environment.judge_setting("model", "hallusionbench") == "one"
    assert environment.judge_setting("model", "contextual") == "global"
    assert not environment.declared("LMMS_EVAL_TASKS_JUDGE_NO_SUCH_SETTING")


def test_overridden_restores(monkeypatch: pytest.MonkeyPatch) -> None:
    name = "LMMS_EVAL_TASKS_JUDGE_BASE_URL"
    monkeypatch.delenv(name, raising=False)
    with environment.overridden(name, "http://127.0.0.1:1/v1"):
        assert environment.value(name) == "http://127.0.0.1:1/v1"
    assert environment.value(name) is None
