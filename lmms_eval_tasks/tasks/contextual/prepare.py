"""ConTextual data preparation: read the authors' CSV, download every image once (concurrent, retried,
resumable, a circuit breaker) or import it (``--images``), verify, write a dataset (docs/contextual.md).
"""

from __future__ import annotations

import csv
import hashlib
import http.client
import io
import json
import os
import random
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote, urlsplit

from loguru import logger

from lmms_eval_tasks.framework.images import strict_decoding
from lmms_eval_tasks.reporting.schema import write_bytes_atomically
from lmms_eval_tasks.tasks.contextual.scoring import CATEGORIES

KIND = "contextual"
DATA_ENV = "LMMS_EVAL_TASKS_DATA_CONTEXTUAL"  # the shared prepare convention: LMMS_EVAL_TASKS_DATA_<KIND>
REQUIRED_COLUMNS = ("image_url", "instruction", "category")
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp", ".tif", ".tiff")
MAX_IMAGE_BYTES = 64 * 1024 * 1024
_PERMANENT_STATUS = {400, 401, 403, 404, 410, 451}
_USER_AGENT = "lmms-eval-tasks (ConTextual image download)"
# Identical connection errors in a row (any image) after which downloading stops: the host is unreachable.
BREAKER_THRESHOLD = 8
_CONNECTION_ERROR = "connection error: "


class PrepareError(RuntimeError):
    """Preparation cannot finish (bad CSV, images missing); the message names the rows."""


@dataclass(frozen=True)
class CsvRow:
    """One data row and where it came from (``row`` counts data rows from 0; ``line`` is its first line)."""

    row: int
    line: int
    fields: dict[str, str]

    @property
    def image_url(self) -> str:
        return self.fields["image_url"]

    def failure(self, reason: str | None) -> dict[str, Any]:
        """The row's entry in the failed-rows list."""
        return {"row": self.row, "line": self.line, "image_url": self.image_url, "reason": reason}


def default_data_dir() -> Path:
    """``$LMMS_EVAL_TASKS_DATA_CONTEXTUAL`` (or ``$LMMS_EVAL_TASKS_DATA/contextual``), else
    ``$LMMS_EVAL_TASKS_CACHE/contextual`` (``~/.cache/lmms_eval_tasks/contextual``)."""
    from lmms_eval_tasks import cache_root
    from lmms_eval_tasks.framework.preparing import prepared_dir

    return prepared_dir(KIND) or cache_root() / "contextual"


def read_csv(path: str | Path) -> list[CsvRow]:
    """Read an official ConTextual CSV (quoted multi-line fields kept verbatim); validate columns and rows."""
    path = Path(path)
    rows: list[CsvRow] = []
    seen: dict[str, str] = {}
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        columns = reader.fieldnames or []
        missing = [column for column in REQUIRED_COLUMNS if column not in columns]
        if missing:
            raise PrepareError(f"{path}: missing column(s) {missing}; found {columns}")
        line = reader.line_num + 1
        for index, fields in enumerate(reader):
            if None in fields or any(value is None for value in fields.values()):
                raise PrepareError(f"{path}: row {index} (line {line}): wrong number of fields")
            where = f"{path}: row {index} (line {line})"
            if not fields["image_url"].strip():
                raise PrepareError(f"{where}: field 'image_url' is empty")
            if fields["category"] not in CATEGORIES:
                raise PrepareError(
                    f"{where}: field 'category': unknown category {fields['category']!r}; "
                    f"expected one of {', '.join(CATEGORIES)}"
                )
            if fields["image_url"] in seen:
                raise PrepareError(f"{where}: duplicate image_url of {seen[fields['image_url']]}")
            seen[fields["image_url"]] = _row_label(index, line)
            rows.append(CsvRow(index, line, dict(fields)))
            line = reader.line_num + 1
    if not rows:
        raise PrepareError(f"{path}: no data rows")
    return rows


BUNDLED = {"val": "contextual_val", "test": "contextual_test"}


def bundled_csv_rows(split: str) -> tuple[list[CsvRow], str]:
    """The official CSV rows bundled with the pack (``data/<stem>.parquet``) for ``split`` "val" or "test"
    (test holds all 506 instructions; validation's 100 are among them); returns (rows, stem)."""
    import pyarrow.parquet as parquet

    if split not in BUNDLED:
        raise PrepareError(f"unknown split {split!r}; expected one of {', '.join(BUNDLED)}")
    stem = BUNDLED[split]
    table = parquet.read_table(Path(__file__).resolve().parent / "data" / f"{stem}.parquet").to_pylist()
    return [CsvRow(int(entry.pop("csv_row")), 0, entry) for entry in table], stem


def image_filename(url: str) -> str:
    """The cached file name of an image URL: a hash of the full URL plus its (known) extension."""
    extension = os.path.splitext(urlsplit(url).path)[1].lower()
    if extension not in IMAGE_EXTENSIONS:
        extension = ".img"
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:24] + extension


def verify_image(data: bytes) -> tuple[int, int]:
    """Decode the image fully; returns (width, height); raises ValueError when it is not a usable image."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            return image.size
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        raise ValueError(f"not a decodable image ({type(error).__name__}: {error})") from None


class _Failure(Exception):
    def __init__(self, reason: str, retryable: bool, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason, self.retryable, self.retry_after = reason, retryable, retry_after


def _fetch(url: str, timeout: float) -> bytes:
    """One HTTP GET; raises _Failure (retryable or not)."""
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = response.read(MAX_IMAGE_BYTES + 1)
    except urllib.error.HTTPError as error:
        from lmms_eval_tasks.judges.circuit_breaker import parse_retry_after

        retry_after = parse_retry_after(error.headers)
        wait = None if retry_after is None else min(retry_after, 120.0)
        raise _Failure(f"HTTP {error.code}", error.code not in _PERMANENT_STATUS, wait) from None
    except (TimeoutError, urllib.error.URLError, http.client.HTTPException, OSError) as error:
        reason = getattr(error, "reason", error)
        raise _Failure(f"connection error: {type(reason).__name__}: {reason}", True) from None
    if len(data) > MAX_IMAGE_BYTES:
        raise _Failure(f"larger than {MAX_IMAGE_BYTES} bytes", False)
    if not data:
        raise _Failure("empty response", True)
    return data


@dataclass
class DownloadReport:
    """What a download run did: counts and the rows whose image could not be fetched or decoded."""

    rows: int = 0
    downloaded: int = 0
    already_present: int = 0
    retries: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)


def download_images(
    rows: Sequence[CsvRow],
    image_dir: str | Path,
    *,
    workers: int = 8,
    retries: int = 4,
    timeout: float = 30.0,
    backoff_base: float = 1.0,
    backoff_max: float = 30.0,
    fetch: Callable[[str, float], bytes] | None = None,
    progress: bool = True,
    breaker: int = BREAKER_THRESHOLD,
) -> DownloadReport:
    """Download every row's image into ``image_dir`` once, resumable, retried and stopped by the ``breaker``
    as docs/contextual.md describes; a file appears only once its bytes decoded."""
    from tqdm.auto import tqdm

    if retries < 0 or breaker < 0:  # range(retries + 1) would try nothing and call every row failed
        raise PrepareError(f"retries ({retries}) and breaker ({breaker}) must be 0 or more")
    fetch = fetch or _fetch
    image_dir = Path(image_dir)
    image_dir.mkdir(parents=True, exist_ok=True)
    for stale in image_dir.glob("*.part"):  # left by a killed run of an older version
        stale.unlink(missing_ok=True)
    report = DownloadReport(rows=len(rows))
    lock = threading.Lock()
    stop = threading.Event()
    jitter = random.Random(0)
    streak: dict[str, Any] = {"reason": None, "count": 0, "tripped": None}

    def note(reason: str | None) -> None:
        """Count identical connection errors in a row; trip the breaker at ``breaker`` of them."""
        with lock:
            if reason is None or not reason.startswith(_CONNECTION_ERROR):
                streak["reason"], streak["count"] = None, 0
                return
            streak["count"] = streak["count"] + 1 if reason == streak["reason"] else 1
            streak["reason"] = reason
            if breaker and streak["count"] >= breaker and streak["tripped"] is None:
                streak["tripped"] = (
                    f"not attempted: downloads stopped after {breaker} identical errors ({reason})"
                )
                stop.set()

    def one(row: CsvRow) -> tuple[str, str | None]:
        target = image_dir / image_filename(row.image_url)
        if target.is_file():
            return "cached", None
        reason = "not attempted"
        for attempt in range(retries + 1):
            if stop.is_set():
                return "failed", (reason if attempt else None) or streak["tripped"] or "interrupted"
            try:
                data = fetch(row.image_url, timeout)
                try:
                    verify_image(data)
                except ValueError as error:
                    raise _Failure(str(error), False) from None
            except _Failure as failure:
                reason = failure.reason
                note(reason)
                if not failure.retryable or attempt == retries:
                    return "failed", reason
                with lock:
                    report.retries += 1
                delay = min(backoff_max, backoff_base * 2**attempt) * (0.5 + 0.5 * jitter.random())
                stop.wait(max(delay, failure.retry_after or 0.0))
                continue
            note(None)
            write_bytes_atomically(target, data)
            return "downloaded", None
        return "failed", reason

    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="contextual-download")
    with strict_decoding():  # for the whole run, not per image: concurrent checks cannot race on the flag
        try:
            futures = {pool.submit(one, row): row for row in rows}
            with tqdm(total=len(rows), desc="ConTextual images", unit="img", disable=not progress) as bar:
                for future in as_completed(futures):
                    row = futures[future]
                    status, reason = future.result()
                    if status == "cached":
                        report.already_present += 1
                    elif status == "downloaded":
                        report.downloaded += 1
                    else:
                        report.failed.append(row.failure(reason))
                    bar.update(1)
        except BaseException:
            stop.set()  # Ctrl-C: running downloads stop retrying; finished files stay for the next run
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    pool.shutdown(wait=True)
    report.failed.sort(key=lambda entry: entry["row"])
    return report


def url_file_name(url: str) -> str:
    """The file name at the end of an image URL's path (percent-decoded): how ``--images`` matches rows."""
    return unquote(urlsplit(url).path.rsplit("/", 1)[-1])


def _source_files(source: Path) -> dict[str, list[tuple[str, Callable[[], bytes]]]]:
    """File name -> [(path inside the source, reader)] for a folder (recursive) or a zip/tar archive."""
    found: dict[str, list[tuple[str, Callable[[], bytes]]]] = {}
    if source.is_dir():
        for path in sorted(source.rglob("*")):
            if path.is_file():
                found.setdefault(path.name, []).append((path.relative_to(source).as_posix(), path.read_bytes))
        return found
    if zipfile.is_zipfile(source):
        archive = zipfile.ZipFile(source)
        for name in sorted(archive.namelist()):
            if not name.endswith("/"):
                found.setdefault(name.rsplit("/", 1)[-1], []).append(
                    (name, lambda name=name: archive.read(name))
                )
        return found
    if tarfile.is_tarfile(source):
        archive = tarfile.open(source)
        for member in sorted(archive.getmembers(), key=lambda member: member.name):
            if member.isfile():

                def read(member: tarfile.TarInfo = member) -> bytes:
                    handle = archive.extractfile(member)
                    return handle.read() if handle is not None else b""

                found.setdefault(member.name.rsplit("/", 1)[-1], []).append((member.name, read))
        return found
    raise PrepareError(f"--images {source}: not a folder, zip or tar archive")


def import_images(rows: Sequence[CsvRow], image_dir: str | Path, source: str | Path) -> dict[str, Any]:
    """Copy images the user got elsewhere (a folder or archive) in as the rows' images, matched by the
    URL's file name (the URL's path end breaks ties); each is decoded first. Returns counts and problems."""
    source, image_dir = Path(source), Path(image_dir)
    if not source.exists():
        raise PrepareError(f"--images {source}: no such folder or archive")
    files = _source_files(source)
    image_dir.mkdir(parents=True, exist_ok=True)
    names = Counter(url_file_name(row.image_url) for row in rows)
    matches: dict[int, list[tuple[str, Callable[[], bytes]]]] = {}
    for row in rows:
        name = url_file_name(row.image_url)
        candidates = files.get(name, [])
        if len(candidates) > 1 or names[name] > 1:
            url_parts = unquote(urlsplit(row.image_url).path).strip("/").split("/")
            candidates = [item for item in candidates if _same_path_end(url_parts, item[0].split("/"))]
        matches[row.row] = candidates
    # one file matched by two rows' paths ("x.png" for a/x.png and b/x.png)
    claims = Counter(candidates[0][0] for candidates in matches.values() if len(candidates) == 1)
    imported, present, problems = 0, 0, []
    for row in rows:
        target = image_dir / image_filename(row.image_url)
        if target.is_file():
            present += 1
            continue
        name = url_file_name(row.image_url)
        candidates = matches[row.row]
        shared = len(files.get(name, [])) > 1 or names[name] > 1
        if shared and (len(candidates) != 1 or claims[candidates[0][0]] > 1):
            problems.append(
                row.failure(f"--images: file name {name!r} is ambiguous (rows or files share it)")
            )
            continue
        if not candidates:
            continue
        where, read = candidates[0]
        data = read()
        try:
            with strict_decoding():
                verify_image(data)
        except ValueError as error:
            problems.append(row.failure(f"--images {where}: {error}"))
            continue
        write_bytes_atomically(target, data)
        imported += 1
    return {"source": str(source), "imported": imported, "already_present": present, "problems": problems}


def _same_path_end(url_parts: list[str], file_parts: list[str]) -> bool:
    """True when one path's folders and name are the other's last ones (``a/x.png`` ends ``h/a/x.png``;
    ``xa/x.png`` does not end ``a/x.png``): whole path parts, not characters."""
    shorter = min(len(url_parts), len(file_parts))
    return url_parts[-shorter:] == file_parts[-shorter:]


def _row_label(row: int, line: int) -> str:
    """ "row 5 (line 7)" for a CSV read from a file; "row 5" for the bundled rows (no file lines)."""
    return f"row {row} (line {line})" if line else f"row {row}"


def _failure_lines(failed: Sequence[dict[str, Any]], limit: int = 20) -> str:
    lines = [f"  {_row_label(f['row'], f['line'])}: {f['image_url']}: {f['reason']}" for f in failed[:limit]]
    if len(failed) > limit:
        lines.append(f"  ... and {len(failed) - limit} more")
    return "\n".join(lines)


def write_dataset(rows: Sequence[CsvRow], image_dir: Path, path: Path) -> Path:
    """Write the rows with their images (bytes embedded, HF ``Image`` column) as one parquet file."""
    import datasets

    from lmms_eval_tasks.framework.sample_data import parquet_bytes

    features = datasets.Features(
        {**{name: datasets.Value("string") for name in rows[0].fields}, "image": datasets.Image()}
    )
    table = []
    for row in rows:
        name = image_filename(row.image_url)
        table.append({**row.fields, "image": {"bytes": (image_dir / name).read_bytes(), "path": name}})
    write_bytes_atomically(path, parquet_bytes(table, features))
    return path


def prepare(
    csv_path: str | Path | None,
    out_dir: str | Path,
    *,
    split: str = "test",
    skip_missing: bool = False,
    images: str | Path | None = None,
    download: bool = True,
    **download_options: Any,
) -> dict[str, Any]:
    """Read ``csv_path`` (None: the bundled rows of ``split``), import ``images``, download the rest
    (``download_options``: those of ``download_images``), write ``out_dir/<stem>.parquet``. Rows still
    without an image raise PrepareError naming them, unless ``skip_missing`` leaves them out (listed)."""
    from lmms_eval_tasks.framework.preparing import output_lock

    out_dir = Path(out_dir)
    with output_lock(out_dir):  # one prepare per folder at a time (two wrote one parquet file at once)
        if csv_path is None:
            rows, stem = bundled_csv_rows(split)
            source = f"bundled {stem}"
        else:
            csv_path = Path(csv_path)
            rows, stem, source = read_csv(csv_path), csv_path.stem, str(csv_path)
        image_dir = out_dir / "images"
        started = time.monotonic()
        imported = import_images(rows, image_dir, images) if images is not None else None
        if download:
            report = download_images(rows, image_dir, **download_options)
        else:
            report = DownloadReport(rows=len(rows))
            for row in rows:
                if (image_dir / image_filename(row.image_url)).is_file():
                    report.already_present += 1
                else:
                    report.failed.append(row.failure("not in --images (download off)"))
        # an import problem (ambiguous name, undecodable file) explains a missing row
        if imported is not None:
            reasons = {entry["row"]: entry["reason"] for entry in imported["problems"]}
            for entry in report.failed:
                if entry["row"] in reasons:
                    entry["reason"] = f"{reasons[entry['row']]}; download: {entry['reason']}"
        failed_list = out_dir / f"{stem}.failed.jsonl"
        out_dir.mkdir(parents=True, exist_ok=True)
        if report.failed:
            failed_list.write_text(
                "".join(json.dumps({"csv": source, **entry}) + "\n" for entry in report.failed),
                encoding="utf-8",
            )
        else:
            failed_list.unlink(missing_ok=True)
        if report.failed and not skip_missing:
            raise PrepareError(
                f"{len(report.failed)} of {len(rows)} images of {source} could not be fetched or decoded "
                f"(all listed in {failed_list}):\n"
                f"{_failure_lines(report.failed)}\n"
                "Images already fetched are kept: rerun to resume, add images got elsewhere with --images "
                "DIR|ARCHIVE, or pass --skip-missing to leave these rows out."
            )
        failed_rows = {entry["row"] for entry in report.failed}
        kept = [row for row in rows if row.row not in failed_rows]
        if not kept:
            raise PrepareError(f"no image of {source} could be fetched:\n{_failure_lines(report.failed)}")
        if report.failed:
            logger.warning(
                f"ConTextual prepare: {len(report.failed)} of {len(rows)} rows SKIPPED (image missing):\n"
                f"{_failure_lines(report.failed)}"
            )
        dataset_path = write_dataset(kept, image_dir, out_dir / f"{stem}.parquet")
        summary = {
            "csv": source,
            "dataset": str(dataset_path),
            "images": str(image_dir),
            "rows_in_csv": len(rows),
            "rows_written": len(kept),
            "skipped_missing": len(report.failed),
            "seconds": round(time.monotonic() - started, 2),
            **asdict(report),
            **({"imported": imported} if imported is not None else {}),
            **({"failed_list": str(failed_list)} if report.failed else {}),
        }
        (out_dir / f"{stem}.prepare.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
        return summary


def _count(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum`` (``--retries -1`` tried no row at all)."""
    import argparse

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is less than {minimum}")
        return value

    return parse


def _seconds(text: str) -> float:
    """An argparse type: a positive finite number of seconds."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def add_arguments(parser: Any) -> None:
    """The ``prepare contextual`` options."""
    parser.add_argument(
        "--csv",
        type=Path,
        default=None,
        help="an official CSV (contextual_val.csv / contextual_test.csv); default: the rows bundled with the "
        "pack (--split)",
    )
    parser.add_argument(
        "--split",
        choices=sorted(BUNDLED),
        default="test",
        help="bundled rows to prepare without --csv: test (all 506, includes val) or val (100)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"output folder (default: ${DATA_ENV}, $LMMS_EVAL_TASKS_DATA/contextual or "
        "$LMMS_EVAL_TASKS_CACHE/contextual); the tasks read "
        f"images from it when {DATA_ENV} points there",
    )
    parser.add_argument(
        "--images",
        type=Path,
        default=None,
        help="a folder or zip/tar archive of images got elsewhere, matched to rows by the URL's file name",
    )
    parser.add_argument(
        "--no-download", action="store_true", help="only use --images and images already in --out"
    )
    parser.add_argument(
        "--breaker",
        type=_count(0),
        default=BREAKER_THRESHOLD,
        help=f"stop downloading after this many identical connection errors in a row (default "
        f"{BREAKER_THRESHOLD}; 0: never)",
    )
    parser.add_argument("--skip-missing", action="store_true", help="leave out rows whose image fails")
    parser.add_argument("--workers", type=_count(1), default=8, help="concurrent downloads (default 8)")
    parser.add_argument("--retries", type=_count(0), default=4, help="retries per image (default 4)")
    parser.add_argument("--timeout", type=_seconds, default=30.0, help="seconds per request (default 30)")


def run(args: Any) -> int:
    """Run ``prepare contextual`` from parsed arguments; prints the summary as JSON."""
    out_dir = args.out if args.out is not None else default_data_dir()
    try:
        summary = prepare(
            args.csv,
            out_dir,
            split=args.split,
            skip_missing=args.skip_missing,
            workers=args.workers,
            retries=args.retries,
            timeout=args.timeout,
            images=args.images,
            download=not args.no_download,
            breaker=args.breaker,
        )
    except (PrepareError, OSError, zipfile.BadZipFile, tarfile.TarError) as error:
        print(f"lmms-eval-tasks prepare contextual: {error}", file=sys.stderr, flush=True)
        return 1
    print(json.dumps(summary, indent=2))
    return 0


# ``lmms-eval-tasks prepare contextual``: the shared prepare command's sub-command for ConTextual.
PREPARERS = [
    SimpleNamespace(
        name=KIND,
        help="download the images of a ConTextual CSV once (concurrent, resumable, verified) and write a "
        "dataset",
        add_arguments=add_arguments,
        run=run,
    )
]
