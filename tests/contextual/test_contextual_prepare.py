"""ConTextual data: the real CSVs through the loader; `prepare` against a local HTTP server (127.0.0.1)."""

from __future__ import annotations

import collections
import io
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PIL import Image

from lmms_eval_tasks.tasks.contextual import prepare as prep

DATA = Path(__file__).resolve().parents[1] / "data" / "contextual"
VAL_CSV = DATA / "contextual_val.csv"
TEST_CSV = DATA / "contextual_test.csv"


def test_real_val_csv_rows_categories_quoting_multiline() -> None:
    rows = prep.read_csv(VAL_CSV)
    assert len(rows) == 100
    counts = collections.Counter(row.fields["category"] for row in rows)
    assert counts == {
        "time": 10,
        "shopping": 10,
        "navigation-transportation": 10,
        "abstract": 10,
        "app": 10,
        "web": 10,
        "infographics": 10,
        "stvqa": 15,
        "estvqa": 15,
    }
    by_instruction = {row.fields["instruction"]: row for row in rows}
    # a quoted multi-line response, kept verbatim
    gold = by_instruction["List China's worldwise investment in gold, housing, and electricity."]
    assert gold.fields["response"] == "gold = 1.3B\nhousing = 9.3B\nelectricity = 16.6B\ntotal = 27.2B"
    # doubled quotes inside a quoted field
    crown = by_instruction["Tell the significance of the crown symbol in the advertisement."]
    assert crown.fields["response"].startswith(
        'There is a crown symbol on the second "E" of the advertisement'
    )
    # leading/trailing newlines inside quoted instructions are part of the data (the model sees them)
    assert "\nDescribe how the term 'Mind Blown' applies to this meme." in by_instruction
    # line numbers account for multi-line records: row 0 is on line 2, every row's line is increasing
    assert rows[0].line == 2 and all(a.line < b.line for a, b in zip(rows, rows[1:], strict=False))
    assert rows[-1].line <= VAL_CSV.read_bytes().count(b"\n")


def test_real_csvs_match_pandas_which_the_official_scripts_use() -> None:
    pandas = pytest.importorskip("pandas")
    for path in (VAL_CSV, TEST_CSV):
        frame = pandas.read_csv(path)
        rows = prep.read_csv(path)
        assert len(frame) == len(rows)
        for row, (_, official) in zip(rows, frame.iterrows(), strict=True):
            assert row.fields == {column: official[column] for column in frame.columns}


def test_real_test_csv() -> None:
    rows = prep.read_csv(TEST_CSV)
    assert len(rows) == 506
    assert set(rows[0].fields) == {"image_url", "instruction", "category"}
    counts = collections.Counter(row.fields["category"] for row in rows)
    assert counts["stvqa"] == 75 and counts["estvqa"] == 81
    assert all(counts[c] == 50 for c in counts if c not in ("stvqa", "estvqa"))
    assert len({row.image_url for row in rows}) == 506
    # the validation rows are a subset of the test rows
    test_urls = {row.image_url for row in rows}
    assert {row.image_url for row in prep.read_csv(VAL_CSV)} <= test_urls


def test_read_csv_errors_name_the_row(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(
        'image_url,instruction,category\nhttp://x/a.png,"two\nlines",time\nhttp://x/b.png,Q,clocks\n',
        encoding="utf-8",
    )
    with pytest.raises(
        prep.PrepareError, match=r"row 1 \(line 4\): field 'category': unknown category 'clocks'"
    ):
        prep.read_csv(bad)
    bad.write_text("image_url,question,category\nhttp://x/a.png,Q,time\n", encoding="utf-8")
    with pytest.raises(prep.PrepareError, match=r"missing column\(s\) \['instruction'\]"):
        prep.read_csv(bad)
    bad.write_text("image_url,instruction,category\nhttp://x/a.png,Q,time\nhttp://x/a.png,R,web\n")
    with pytest.raises(prep.PrepareError, match=r"row 1 \(line 3\): duplicate image_url of row 0"):
        prep.read_csv(bad)


# ------------------------------------------------------------------------------------------------------
# a local image server
# ------------------------------------------------------------------------------------------------------


def png(seed: int) -> bytes:
    image = Image.new("RGB", (8 + seed % 5, 6), (seed * 37 % 256, 90, 200))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


class ImageServer:
    """Serves /<name>: a PNG, except names listed as missing (404), html (not an image) or slow."""

    def __init__(self, missing=(), html=(), slow=(), slow_seconds=1.5) -> None:
        self.missing, self.html, self.slow, self.slow_seconds = (
            set(missing),
            set(html),
            set(slow),
            slow_seconds,
        )
        self.requests: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                name = self.path.rsplit("/", 1)[-1]
                with server.lock:
                    server.requests[name] += 1
                    count = server.requests[name]
                if name in server.missing:
                    self.send_error(404)
                    return
                if name in server.slow and count == 1:
                    time.sleep(server.slow_seconds)  # the first request times out; the retry is fast
                body = b"<html>not found</html>" if name in server.html else png(sum(map(ord, name)))
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> ImageServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def local_copy(csv_path: Path, base: str, tmp_path: Path, limit: int | None = None) -> tuple[Path, list[str]]:
    """The real CSV with its S3 host replaced by the local server (paths and every other byte kept)."""
    text = csv_path.read_text(encoding="utf-8")
    text = text.replace("https://textvision-data-quality.s3.us-west-1.amazonaws.com", base)
    target = tmp_path / csv_path.name
    target.write_text(text, encoding="utf-8")
    rows = prep.read_csv(target)
    if limit is not None:
        import csv

        with open(target, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0].fields))
            writer.writeheader()
            for row in rows[:limit]:
                writer.writerow(row.fields)
        rows = prep.read_csv(target)
    return target, [row.image_url.rsplit("/", 1)[-1] for row in rows]


def test_prepare_full_val_csv_from_local_server(tmp_path: Path) -> None:
    import datasets

    with ImageServer() as server:
        csv_path, names = local_copy(VAL_CSV, server.base, tmp_path)
        summary = prep.prepare(csv_path, tmp_path / "out", workers=4, progress=False)
        assert summary["rows_written"] == 100 and summary["downloaded"] == 100 and summary["failed"] == []
        assert all(server.requests[name] == 1 for name in names)
    dataset = datasets.Dataset.from_parquet(str(tmp_path / "out" / "contextual_val.parquet"))
    assert len(dataset) == 100
    rows = prep.read_csv(csv_path)
    assert dataset[17]["instruction"] == rows[17].fields["instruction"]
    assert dataset[17]["response"] == rows[17].fields["response"]
    assert dataset[17]["image"].size == Image.open(io.BytesIO(png(sum(map(ord, names[17]))))).size


def test_prepare_404_not_an_image_slow_then_skip_missing(tmp_path: Path) -> None:
    with ImageServer() as probe:
        _, names = local_copy(VAL_CSV, probe.base, tmp_path, limit=10)
    missing, html, slow = names[2], names[5], names[7]
    with ImageServer(missing=[missing], html=[html], slow=[slow], slow_seconds=1.5) as server:
        csv_path, _ = local_copy(VAL_CSV, server.base, tmp_path, limit=10)
        with pytest.raises(prep.PrepareError) as raised:
            prep.prepare(
                csv_path, tmp_path / "out", workers=3, timeout=0.5, backoff_base=0.05, progress=False
            )
        message = str(raised.value)
        assert "2 of 10 images" in message
        assert f"row 2 (line 4): {server.base}" in message and "HTTP 404" in message
        assert "row 5 (line 7)" in message and "not a decodable image" in message
        assert "--skip-missing" in message
        assert server.requests[missing] == 1  # a 404 is not retried
        assert server.requests[html] == 1  # nor bytes that do not decode
        assert server.requests[slow] == 2  # timed out once, then fetched
        assert not (tmp_path / "out" / "contextual_val.parquet").exists()
        images = tmp_path / "out" / "images"
        assert len(list(images.iterdir())) == 8 and not list(images.glob("*.part"))

        summary = prep.prepare(
            csv_path,
            tmp_path / "out",
            workers=3,
            timeout=0.5,
            backoff_base=0.05,
            skip_missing=True,
            progress=False,
        )
        assert summary["rows_written"] == 8 and summary["skipped_missing"] == 2
        assert summary["downloaded"] == 0 and summary["already_present"] == 8  # nothing fetched twice
        assert [entry["row"] for entry in summary["failed"]] == [2, 5]
        good = [name for name in names if name not in (missing, html, slow)]
        assert all(server.requests[name] == 1 for name in good)
    import datasets

    written = datasets.Dataset.from_parquet(str(tmp_path / "out" / "contextual_val.parquet"))
    assert len(written) == 8 and missing not in "".join(written["image_url"])


def test_interrupted_download_resumes_without_refetching(tmp_path: Path) -> None:
    with ImageServer() as server:
        csv_path, names = local_copy(VAL_CSV, server.base, tmp_path, limit=8)
        rows = prep.read_csv(csv_path)
        calls = []

        def interrupting_fetch(url: str, timeout: float) -> bytes:
            if len(calls) == 4:
                raise KeyboardInterrupt  # Ctrl-C while the 5th image is being fetched
            calls.append(url)
            return prep._fetch(url, timeout)

        with pytest.raises(KeyboardInterrupt):
            prep.download_images(
                rows, tmp_path / "images", workers=1, fetch=interrupting_fetch, progress=False
            )
        kept = sorted(path.name for path in (tmp_path / "images").iterdir())
        assert len(kept) == 4 and not [name for name in kept if name.endswith(".part")]
        report = prep.download_images(rows, tmp_path / "images", workers=2, progress=False)
        assert report.already_present == 4 and report.downloaded == 4 and not report.failed
        assert all(server.requests[name] == 1 for name in names)  # every image fetched exactly once


def test_prepare_command_through_the_cli(tmp_path: Path, capsys) -> None:
    import json

    from lmms_eval_tasks.cli import main

    with ImageServer(missing=["doesnotexist.png"]) as server:
        csv_path, names = local_copy(VAL_CSV, server.base, tmp_path, limit=3)
        code = main(["prepare", "contextual", "--csv", str(csv_path), "--out", str(tmp_path / "out")])
        assert code == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["rows_written"] == 3 and summary["downloaded"] == 3
        bad = tmp_path / "bad.csv"
        bad.write_text(f"image_url,instruction,category\n{server.base}/doesnotexist.png,Q?,time\n")
        code = main(
            ["prepare", "contextual", "--csv", str(bad), "--out", str(tmp_path / "out2"), "--retries", "0"]
        )
        assert code == 1
        error = capsys.readouterr().err
        assert "row 0 (line 2)" in error and "HTTP 404" in error and "--skip-missing" in error


def test_truncated_and_non_image_bytes_are_rejected(tmp_path: Path) -> None:
    from PIL import ImageFile

    data = io.BytesIO()
    Image.new("RGB", (64, 64), (10, 200, 30)).save(data, format="JPEG", quality=95)
    whole = data.getvalue()
    assert prep.verify_image(whole) == (64, 64)
    for broken in (whole[: len(whole) // 2], b"<html>404</html>", b""):
        with pytest.raises(ValueError, match="not a decodable image"):
            prep.verify_image(broken)
    # during a download run even a host that turned PIL's lenient mode on cannot let a truncated file in
    previous = ImageFile.LOAD_TRUNCATED_IMAGES
    ImageFile.LOAD_TRUNCATED_IMAGES = True
    try:
        (tmp_path / "images").mkdir()
        (tmp_path / "images" / "stale.jpg.123.part").write_bytes(b"half")
        rows = [
            prep.CsvRow(
                0, 2, {"image_url": "http://127.0.0.1:9/a.jpg", "instruction": "Q", "category": "time"}
            )
        ]
        report = prep.download_images(
            rows, tmp_path / "images", fetch=lambda url, timeout: whole[:-200], retries=0, progress=False
        )
        assert [entry["reason"][:25] for entry in report.failed] == ["not a decodable image (OS"]
        assert not list((tmp_path / "images").iterdir())  # nothing kept, the stale .part removed
        assert ImageFile.LOAD_TRUNCATED_IMAGES is True  # restored
    finally:
        ImageFile.LOAD_TRUNCATED_IMAGES = previous


def test_prepare_without_a_csv_uses_the_bundled_rows(tmp_path: Path) -> None:
    # the bundled official rows (S3 URLs cannot be reached here: the fetch function stands in for S3)
    fetched = []

    def fake_s3(url: str, timeout: float) -> bytes:
        fetched.append(url)
        if url.endswith("screenshot_60.png"):
            raise prep._Failure("HTTP 404", retryable=False)
        return png(len(fetched))

    with pytest.raises(
        prep.PrepareError, match=r"1 of 100 images of bundled contextual_val .*\n  row 2: https"
    ):
        prep.prepare(None, tmp_path / "out", split="val", fetch=fake_s3, progress=False)
    summary = prep.prepare(
        None, tmp_path / "out", split="val", fetch=fake_s3, skip_missing=True, progress=False
    )
    assert summary["rows_written"] == 99 and summary["already_present"] == 99 and len(fetched) == 101
    assert {row.image_url for row in prep.bundled_csv_rows("val")[0]} == {
        row.image_url for row in prep.read_csv(VAL_CSV)
    }
