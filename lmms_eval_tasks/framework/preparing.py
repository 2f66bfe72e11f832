"""`lmms-eval-tasks prepare <kind>`: an annotation file plus the user's image folder -> a dataset on disk,
every image checked (missing or corrupt ones named); adding a kind: docs/architecture.md."""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import json
import os
import pkgutil
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from lmms_eval_tasks import environment
from lmms_eval_tasks.framework.images import strict_decoding
from lmms_eval_tasks.framework.input_checks import RecordError

DATA_ROOT_ENV = "LMMS_EVAL_TASKS_DATA"
MANIFEST_NAME = "lmms_eval_tasks_prepare.json"
_SHOWN_PROBLEMS = 20


class Preparer(Protocol):
    """What ``lmms-eval-tasks prepare <name>`` runs: a sub-command per dataset kind."""

    name: str
    help: str

    def add_arguments(self, parser: Any) -> None: ...

    def run(self, args: Any) -> int: ...


def env_var(kind: str) -> str:
    """The environment variable naming ``kind``'s prepared folder: ``LMMS_EVAL_TASKS_DATA_<KIND>``."""
    return f"{DATA_ROOT_ENV}_{kind.upper()}"


def _document_error(path: Path, text: str, error: json.JSONDecodeError) -> RecordError:
    """Where a JSON document is broken (line and column), and "truncated" when it breaks on its last line."""
    where = f"{path.name} line {error.lineno} column {error.colno}"
    if "\n" not in text[error.pos :].rstrip():  # broken on the last line: the rest of the file is missing
        lines = text.count("\n") + 1
        problem = (
            f"not JSON: the file ends in the middle of the document ({error.msg}) after {lines} lines - "
            "it looks truncated; download or copy it again"
        )
    else:
        problem = f"not JSON ({error.msg})"
    return RecordError(where, "<json>", problem)


def read_annotations(path: str | Path) -> list[dict[str, Any]]:
    """Entries of an annotation file: a JSON list, a JSON object holding one list of them, or JSON lines."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"annotation file not found: {path}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")  # a leading byte-order mark (Windows tools) is not a broken file
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise RecordError(
            f"{path.name} line {line}",
            "<encoding>",
            f"not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start}): save the file as UTF-8",
        ) from None
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError as document_error:
        value = []
        for line_number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value.append(json.loads(line))
            except json.JSONDecodeError as error:
                if not value:  # not JSON lines either: a broken JSON document, say where it breaks
                    raise _document_error(path, text, document_error) from None
                raise RecordError(
                    f"{path.name} line {line_number}", "<json>", f"not JSON ({error.msg})"
                ) from None
    if isinstance(value, dict):
        lists = [
            item
            for item in value.values()
            if isinstance(item, list) and item and all(isinstance(entry, dict) for entry in item)
        ]
        if len(lists) > 1:
            raise RecordError("-", "<file>", f"{path.name}: a JSON object with several lists of entries")
        value = lists[0] if lists else [value]  # no list of entries: a JSON-lines file of one entry
    if not isinstance(value, list) or not value:
        raise RecordError("-", "<file>", f"{path.name}: expected a non-empty list of entries")
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise RecordError(index, "<entry>", f"expected a JSON object, got {type(entry).__name__}")
    return value


@dataclass
class ImageProblem:
    """A referenced image that is missing or does not decode, with the questions that use it."""

    image: str
    problem: str
    questions: list[str] = field(default_factory=list)

    def describe(self) -> str:
        shown = ", ".join(self.questions[:5]) + (" ..." if len(self.questions) > 5 else "")
        return f"{self.image}: {self.problem} (question {shown})"


def _decode(path: Path) -> str | None:
    from PIL import Image

    try:
        with Image.open(path) as image:
            if image.format == "JPEG":  # decode at 1/8 scale: every byte is still read and checked
                image.draft("RGB", (max(1, image.width // 8), max(1, image.height // 8)))
            image.load()
        return None
    except Exception as error:  # noqa: BLE001 - any decoder failure means the file is unusable
        return f"does not decode ({type(error).__name__}: {str(error).strip()[:120]})"


def check_images(
    references: Sequence[tuple[str, Sequence[str]]],
    images_dir: str | Path,
    *,
    progress: bool = True,
    workers: int | None = None,
) -> tuple[list[Path | None], list[ImageProblem]]:
    """Per entry (question id, relative paths to try), the found image (None when missing or corrupt), and
    the problems, one per distinct image naming its questions; each image decoded once, in threads."""
    from concurrent.futures import ThreadPoolExecutor

    from tqdm import tqdm

    images_dir = Path(images_dir)
    resolved: list[Path | None] = []
    for _, candidates in tqdm(
        references, desc="finding images", unit="question", disable=not progress, mininterval=1.0
    ):
        resolved.append(next((images_dir / c for c in candidates if (images_dir / c).is_file()), None))
    distinct = list(dict.fromkeys(path for path in resolved if path is not None))
    workers = workers or min(8, os.cpu_count() or 1)
    with strict_decoding(), ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(
            tqdm(
                pool.map(_decode, distinct),
                total=len(distinct),
                desc="decoding images",
                unit="image",
                disable=not progress,
                mininterval=1.0,
            )
        )
    verdicts = dict(zip(distinct, outcomes, strict=True))
    found: list[Path | None] = []
    problems: dict[str, ImageProblem] = {}
    for (question_id, candidates), path in zip(references, resolved, strict=True):
        problem = "missing" if path is None else verdicts[path]
        found.append(path if problem is None else None)
        if problem is not None:
            name = str(path.relative_to(images_dir)) if path else next(iter(candidates), "<no image named>")
            problems.setdefault(name, ImageProblem(name, problem)).questions.append(str(question_id))
    return found, list(problems.values())


@contextmanager
def output_lock(out: Path) -> Iterator[None]:
    """Hold ``.<out>.prepare.lock`` (of the resolved folder) for one ``prepare`` call: a second call into the
    same folder is refused at once in one line, instead of mixing its files into the first's."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    lock_path = out.parent / f".{out.name}.prepare.lock"
    with open(lock_path, "a+", encoding="utf-8") as lock:
        try:
            import fcntl

            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # not POSIX: no lock
            pass
        except OSError:
            raise FileExistsError(
                f"{out} is being prepared by another `lmms-eval-tasks prepare` (lock {lock_path}); wait for "
                "it to finish, or give another --out"
            ) from None
        yield


def rows_digest(dataset: Any) -> str:
    """SHA-256 of a prepared split's rows without its images: the manifest's ``rows_sha256``."""
    columns = [name for name in dataset.column_names if name != "image"]
    text = json.dumps(dataset.select_columns(columns).to_dict(), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_prepared(
    rows: list[dict[str, Any]],
    image_paths: list[Path],
    out: str | Path,
    *,
    kind: str,
    split: str = "test",
    manifest: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> Path:
    """Save ``rows`` plus an ``image`` column (bytes embedded) as ``DatasetDict({split: ...})`` in ``out``,
    under its lock, staged and renamed: an interrupted or concurrent call never leaves a half dataset."""
    import tempfile

    import datasets

    out = Path(out).resolve()  # an --out that is a symlink: the folder it points to is replaced, not the link
    with output_lock(out):
        if out.exists() and any(out.iterdir()):
            if not overwrite:
                raise FileExistsError(f"{out} exists and is not empty (use --overwrite to replace it)")
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
        try:
            columns: dict[str, list[Any]] = (
                {name: [row.get(name) for row in rows] for name in rows[0]} if rows else {}
            )
            columns["image"] = [str(path.resolve()) for path in image_paths]
            dataset = datasets.Dataset.from_dict(columns)
            dataset = dataset.cast_column("image", datasets.Image())
            datasets.DatasetDict({split: dataset}).save_to_disk(str(staging))
            facts = {"kind": kind, "split": split, "rows": len(rows), "rows_sha256": rows_digest(dataset)}
            (staging / MANIFEST_NAME).write_text(
                json.dumps({**facts, **(manifest or {})}, indent=2) + "\n", encoding="utf-8"
            )
            aside = staging.with_name(f"{staging.name}.replaced")
            if out.exists():  # --overwrite: the old folder is moved aside first, so a kill at any moment
                out.rename(aside)  # leaves the old or the new dataset under ``out`` (or the old one aside)
            staging.rename(out)
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # gone after the rename; a failed call's leftovers
            shutil.rmtree(staging.with_name(f"{staging.name}.replaced"), ignore_errors=True)
    return out


def prepared_dir(kind: str) -> Path | None:
    """The prepared folder for ``kind`` from the environment, or None when none is configured."""
    explicit = environment.text(env_var(kind))
    if explicit:
        return Path(explicit).expanduser()
    root = environment.text(DATA_ROOT_ENV)
    if root:
        return Path(root).expanduser() / kind
    return None


def load_prepared(kind: str, split: str = "test") -> Any:
    """The ``split`` of ``kind``'s prepared dataset (a clear error saying how to make it when absent)."""
    import datasets

    folder = prepared_dir(kind)
    how = (
        f"run `lmms-eval-tasks prepare {kind} --annotations FILE --images DIR --out DIR` and set "
        f"{env_var(kind)}=DIR (or {DATA_ROOT_ENV}=PARENT with the dataset in PARENT/{kind})"
    )
    if folder is None:
        raise FileNotFoundError(f"no prepared {kind} dataset configured: {how}")
    manifest_path = folder / MANIFEST_NAME
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{folder} is not a prepared {kind} dataset (no {MANIFEST_NAME}): {how}")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if not isinstance(manifest, dict):
            raise ValueError("not an object")
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ValueError(
            f"{folder}: its manifest {MANIFEST_NAME} is damaged ({type(error).__name__}: {error}); "
            "prepare it again with --overwrite"
        ) from None
    if manifest.get("kind") != kind:
        raise ValueError(f"{folder} holds a prepared {manifest.get('kind')!r} dataset, not {kind!r}")
    loaded = datasets.load_from_disk(str(folder))
    if split not in loaded:
        raise ValueError(f"{folder} has no {split!r} split (splits: {sorted(loaded)})")
    rows, digest = manifest.get("rows"), manifest.get("rows_sha256")
    count = len(loaded[split])
    if (isinstance(rows, int) and rows != count) or (digest and digest != rows_digest(loaded[split])):
        raise ValueError(
            f"{folder}: its manifest ({MANIFEST_NAME}: {rows} rows of {manifest.get('annotations')!r}) does "
            f"not describe its {count} rows (written by two `prepare` calls at once?); prepare it again with "
            "--overwrite"
        )
    return loaded[split]


@dataclass(frozen=True)
class DatasetKind:
    """A dataset released as annotations plus an image folder: ``image_candidates(entry)`` (the first named
    when none exists), ``convert`` an entry's row (no ``image``), ``summarize`` facts for the summary."""

    name: str
    help: str
    required_fields: tuple[str, ...]
    image_candidates: Callable[[dict[str, Any]], list[str]]
    convert: Callable[[dict[str, Any], int], dict[str, Any]] | None = None
    summarize: Callable[[list[dict[str, Any]]], dict[str, Any]] | None = None
    id_field: str = "question_id"
    split: str = "test"

    def add_arguments(self, parser: Any) -> None:
        """The common options: --annotations, --images, --out, --skip-missing, --overwrite."""
        parser.add_argument("--annotations", required=True, type=Path, help="the released annotation file")
        parser.add_argument("--images", required=True, type=Path, help="folder holding the images")
        parser.add_argument("--out", required=True, type=Path, help="folder to write the dataset to")
        parser.add_argument(
            "--skip-missing",
            action="store_true",
            help="drop questions whose image is missing or corrupt (reported, with a count) instead of "
            "refusing",
        )
        parser.add_argument("--overwrite", action="store_true", help="replace a non-empty --out folder")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def rows(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Validate and convert every entry (RecordError naming the entry and the field)."""
        rows = []
        for index, entry in enumerate(entries):
            for name in self.required_fields:
                if name not in entry:
                    value = entry.get(self.id_field)
                    label = f"{index} ({self.id_field} {value})" if value is not None else str(index)
                    raise RecordError(label, name, "missing")
            row = self.convert(entry, index) if self.convert else dict(entry)
            if "image" in row:
                raise ValueError(f"{self.name}: convert() must not return an 'image' field (reserved)")
            rows.append(row)
        return rows

    def prepare(
        self,
        annotations: str | Path,
        images: str | Path,
        out: str | Path,
        *,
        skip_missing: bool = False,
        overwrite: bool = False,
        progress: bool = True,
    ) -> dict[str, Any]:
        """Check and write the dataset; returns a summary. Raises PreparationError listing bad images."""
        started = time.monotonic()
        annotations = Path(annotations)
        images = Path(images)
        if not images.is_dir():
            raise FileNotFoundError(f"image folder not found: {images}")
        entries = read_annotations(annotations)
        rows = self.rows(entries)
        references = [
            (str(entry.get(self.id_field, index)), self.image_candidates(entry))
            for index, entry in enumerate(entries)
        ]
        found, problems = check_images(references, images, progress=progress)
        missing = [p for p in problems if p.problem == "missing"]
        corrupt = [p for p in problems if p.problem != "missing"]
        kept = [index for index, path in enumerate(found) if path is not None]
        if (problems and not skip_missing) or not kept:
            raise PreparationError(self.name, missing, corrupt, len(entries))
        with open(annotations, "rb") as handle:
            annotations_sha256 = hashlib.file_digest(handle, "sha256").hexdigest()
        manifest = {
            "annotations": annotations.name,
            "annotations_sha256": annotations_sha256,
            "entries": len(entries),
            "skipped_questions": len(entries) - len(kept),
            "missing_images": [p.image for p in missing],
            "corrupt_images": [p.image for p in corrupt],
        }
        write_prepared(
            [rows[i] for i in kept],
            [found[i] for i in kept],  # type: ignore[misc]
            out,
            kind=self.name,
            split=self.split,
            manifest=manifest,
            overwrite=overwrite,
        )
        return {
            "kind": self.name,
            "out": str(out),
            "rows": len(kept),
            "skipped_questions": len(entries) - len(kept),
            "missing_images": len(missing),
            "corrupt_images": len(corrupt),
            "problems": [p.describe() for p in problems],
            **(self.summarize([rows[i] for i in kept]) if self.summarize else {}),
            "seconds": round(time.monotonic() - started, 2),
        }

    def run(self, args: Any) -> int:
        """The CLI handler: prepare, print a summary, exit 1 on refused input."""
        import sys

        prog = f"lmms-eval-tasks prepare {self.name}"
        try:
            summary = self.prepare(
                args.annotations,
                args.images,
                args.out,
                skip_missing=args.skip_missing,
                overwrite=args.overwrite,
                progress=not args.quiet,
            )
        except (FileNotFoundError, FileExistsError, RecordError, PreparationError) as error:
            print(f"{prog}: {error}", file=sys.stderr)
            return 2 if isinstance(error, OSError) else 1  # a missing path: usage; refused input: 1
        for line in summary["problems"][:_SHOWN_PROBLEMS]:
            print(f"skipped: {line}", file=sys.stderr)
        if summary["skipped_questions"]:
            print(
                f"{prog}: skipped {summary['skipped_questions']} questions "
                f"({summary['missing_images']} missing and {summary['corrupt_images']} corrupt images)",
                file=sys.stderr,
            )
        if summary.get("note"):
            print(f"{prog}: {summary['note']}", file=sys.stderr)
        shown = {key: value for key, value in summary.items() if key not in ("problems", "note")}
        print(json.dumps(shown, indent=2))
        print(f"# use it: export {env_var(self.name)}={Path(args.out).resolve()}", file=sys.stderr)
        return 0


class PreparationError(RuntimeError):
    """Referenced images are missing or corrupt; the message names each one and its questions."""

    def __init__(
        self, kind: str, missing: list[ImageProblem], corrupt: list[ImageProblem], entries: int
    ) -> None:
        self.missing = missing
        self.corrupt = corrupt
        lines = [
            f"{kind}: {len(missing)} missing and {len(corrupt)} corrupt images "
            f"(of the images used by {entries} questions):"
        ]
        for problem in (missing + corrupt)[:_SHOWN_PROBLEMS]:
            lines.append(f"  {problem.describe()}")
        if len(missing) + len(corrupt) > _SHOWN_PROBLEMS:
            lines.append(f"  ... and {len(missing) + len(corrupt) - _SHOWN_PROBLEMS} more")
        lines.append("fix the image folder, or pass --skip-missing to leave those questions out")
        super().__init__("\n".join(lines))


@functools.cache
def preparers() -> Mapping[str, Preparer]:
    """Every dataset kind, from the ``PREPARERS`` lists of ``lmms_eval_tasks.tasks.<package>.prepare``."""
    from lmms_eval_tasks import TASKS_DIR, TASKS_PACKAGE

    found: dict[str, Preparer] = {}
    for info in sorted(pkgutil.iter_modules([str(TASKS_DIR)]), key=lambda item: item.name):
        module_name = f"{TASKS_PACKAGE}.{info.name}.prepare"
        if not info.ispkg or importlib.util.find_spec(module_name) is None:
            continue
        try:
            module = importlib.import_module(module_name)
        except Exception as error:  # noqa: BLE001 - one broken module must not take every kind down
            from loguru import logger

            logger.warning(f"prepare: {module_name} does not import ({type(error).__name__}: {error})")
            continue
        for preparer in getattr(module, "PREPARERS", ()):
            if preparer.name in found:
                raise ValueError(f"two modules define the prepare kind {preparer.name!r}")
            found[preparer.name] = preparer
    return MappingProxyType(found)  # read-only: every caller shares it
