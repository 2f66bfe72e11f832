"""`lmms-eval-tasks new-benchmark NAME`: write a working benchmark (`lmms_eval --model random_guess --tasks
NAME_sample` runs it) to edit: in a clone, lmms_eval_tasks/tasks/NAME/, tests/NAME/ and docs/NAME.md; with
`--out DIR`, a package of its own that the pack finds once installed (`pip install --no-deps -e DIR`)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import keyword
import sys
from pathlib import Path
from typing import Any

SKELETON = Path(__file__).resolve().parent / "skeleton"
PACK_ROOT = Path(__file__).resolve().parents[2]  # in a clone: holds lmms_eval_tasks/, tests/ and docs/
TEMPLATES = ("__init__.py", "behaviour.py", "scoring.py", "hooks.py", "generate.py")


def skeleton_files(name: str, package: str) -> dict[str, str]:
    """{path relative to the root: text} of the hand-written files of benchmark ``name`` in ``package``
    (``lmms_eval_tasks.tasks.NAME`` in the pack, ``NAME`` as a package of its own)."""
    folder = package.replace(".", "/")
    tests = "tests" if package == name else f"tests/{name}"
    files = {f"{folder}/{template}": f"{template}.txt" for template in TEMPLATES}
    files.update({f"{tests}/test_{name}.py": "test.py.txt", f"docs/{name}.md": "docs.md.txt"})
    own_package = {"pyproject.toml": "pyproject.toml.txt"}
    files.update(own_package if package == name else {f"{tests}/__init__.py": ""})
    texts = {}
    for path, template in files.items():
        text = (SKELETON / template).read_text(encoding="utf-8") if template else ""
        for key, value in (("name", name), ("package", package), ("folder", folder)):
            text = text.replace("{{" + key + "}}", value)
        texts[path] = text
    return texts


def write_benchmark(name: str, out: Path | None = None) -> list[Path]:
    """Write benchmark ``name`` (into the pack's clone, or as a package in ``out``) with its generated
    files; returns the files written. ValueError (one line) for a bad name or an existing file."""
    from lmms_eval_tasks.framework import registry, taskgen

    if not name.isidentifier() or keyword.iskeyword(name) or name != name.lower() or name.startswith("_"):
        raise ValueError(f"{name!r} is no benchmark name: use a lower-case Python identifier, e.g. my_bench")
    if out is not None and importlib.util.find_spec(name) is not None:  # `yaml`: PyYAML's importers get it
        raise ValueError(f"a module called {name!r} is installed, which the package would hide; rename it")
    if name in registry.benchmarks():
        raise ValueError(f"a benchmark called {name!r} exists already; choose another name")
    root = out.resolve() if out else PACK_ROOT
    if out is None and not (root / "pyproject.toml").is_file():
        raise ValueError("this pack is installed, not a clone: write the benchmark as a package, --out DIR")
    files = skeleton_files(name, name if out else f"lmms_eval_tasks.tasks.{name}")
    existing = next((root / path for path in files if (root / path).exists()), None)
    if existing is not None:
        raise ValueError(f"{existing} exists already; choose another name or --out folder")
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    if out is not None and str(root) not in sys.path:
        sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    package = importlib.import_module(name if out else f"lmms_eval_tasks.tasks.{name}")
    registry.register(package.BENCHMARK)
    written = [root / path for path in files]
    for path, content in taskgen.generated_files([name]).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)
    if out is None:  # the launcher's precomputed index of the pack's tasks now lists the new ones
        from lmms_eval_tasks.framework.task_index import write_host_index

        write_host_index()
    return written


def _command(args: argparse.Namespace) -> int:
    try:
        written = write_benchmark(args.name, Path(args.out) if args.out else None)
    except ValueError as error:
        print(f"lmms-eval-tasks new-benchmark: {error}", file=sys.stderr)
        return 2
    print("\n".join(str(path) for path in written))
    run = f"pip install --no-deps -e {args.out} && " if args.out else ""  # else torchvision, a CUDA torch
    print(f"next: {run}lmms_eval --model random_guess --tasks {args.name}_sample; then edit the files above")
    return 0


def register(subparsers: Any) -> None:
    """Add the `new-benchmark` subcommand."""
    summary = "write a working benchmark to edit (registry entry, scorer, hooks, sample, tests, docs)"
    parser = subparsers.add_parser("new-benchmark", help=summary, description=__doc__)
    parser.add_argument("name", help="the benchmark's name, a lower-case identifier (its tasks: NAME_*)")
    parser.add_argument("--out", metavar="DIR", help="write it as a package of its own in DIR")
    parser.set_defaults(handler=_command)
