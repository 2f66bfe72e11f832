"""`prepare contextual --images` (images got elsewhere), the download breaker, the failed-rows list."""

from __future__ import annotations

import io
import json
import socket
import tarfile
import time
import zipfile
from pathlib import Path

from PIL import Image

from lmms_eval_tasks.cli import main as cli_main
from lmms_eval_tasks.tasks.contextual import prepare as prep

HEADER = "image_url,instruction,response,category\n"


def _png(color: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), color).save(buffer, format="PNG")
    return buffer.getvalue()


def _csv(tmp_path: Path, urls: list[str]) -> Path:
    path = tmp_path / "mini.csv"
    path.write_text(
        HEADER + "".join(f"{url},q{i},a{i},time\n" for i, url in enumerate(urls)), encoding="utf-8"
    )
    return path


def _refusing_port() -> int:
    """A local port nothing listens on (bound, then closed): connections to it are refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_images_folder_matched_by_url_file_name_then_rows_still_missing_listed(tmp_path: Path) -> None:
    port = _refusing_port()
    urls = [f"http://127.0.0.1:{port}/imgs/{name}" for name in ("a.png", "b%20c.png", "d.png")]
    csv_path = _csv(tmp_path, urls)
    got = tmp_path / "got" / "nested"
    got.mkdir(parents=True)
    (got / "a.png").write_bytes(_png((255, 0, 0)))
    (got / "b c.png").write_bytes(_png((0, 255, 0)))  # the URL's percent-decoded file name
    out = tmp_path / "out"
    code = cli_main(
        [
            "prepare",
            "contextual",
            "--csv",
            str(csv_path),
            "--out",
            str(out),
            "--images",
            str(tmp_path / "got"),
            "--no-download",
        ]
    )
    assert code == 1  # d.png is still missing
    failed = [json.loads(line) for line in (out / "mini.failed.jsonl").read_text().splitlines()]
    assert [(entry["row"], entry["image_url"]) for entry in failed] == [(2, urls[2])]
    image_dir = out / "images"
    with Image.open(image_dir / prep.image_filename(urls[0])) as image:
        assert image.getpixel((0, 0)) == (255, 0, 0)
    with Image.open(image_dir / prep.image_filename(urls[1])) as image:
        assert image.getpixel((0, 0)) == (0, 255, 0)
    # the last image arrives in an archive: the rerun resumes (keeps the two) and writes the dataset
    archive = tmp_path / "more.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("x/d.png", _png((0, 0, 255)))
    summary = prep.prepare(csv_path, out, images=archive, download=False, progress=False)
    assert summary["imported"] == {
        "source": str(archive),
        "imported": 1,
        "already_present": 2,
        "problems": [],
    }
    assert summary["rows_written"] == 3 and summary["failed"] == []
    assert not (out / "mini.failed.jsonl").exists()


def test_tar_archive_and_an_undecodable_file_is_reported_not_imported(tmp_path: Path) -> None:
    urls = ["http://example.invalid/p/one.jpg", "http://example.invalid/p/two.jpg"]
    archive = tmp_path / "images.tar.gz"
    with tarfile.open(archive, "w:gz") as handle:
        for name, data in (("one.jpg", _png((1, 2, 3))), ("two.jpg", b"not an image")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            handle.addfile(info, io.BytesIO(data))
    rows = prep.read_csv(_csv(tmp_path, urls))
    result = prep.import_images(rows, tmp_path / "images", archive)
    assert result["imported"] == 1
    [problem] = result["problems"]
    assert problem["row"] == 1 and problem["reason"].startswith("--images two.jpg: not a decodable image")


def test_same_file_name_for_two_urls_is_matched_by_path_or_reported(tmp_path: Path) -> None:
    urls = ["http://h.invalid/a/1.png", "http://h.invalid/b/1.png", "http://h.invalid/c/1.png"]
    got = tmp_path / "got"
    for folder, color in (("a", (9, 9, 9)), ("b", (8, 8, 8))):
        (got / folder).mkdir(parents=True)
        (got / folder / "1.png").write_bytes(_png(color))
    rows = prep.read_csv(_csv(tmp_path, urls))
    result = prep.import_images(rows, tmp_path / "images", got)
    assert result["imported"] == 2  # a/1.png and b/1.png by their URL paths
    assert [entry["row"] for entry in result["problems"]] == [2]  # c/1.png: no file, name shared: ambiguous
    with Image.open(tmp_path / "images" / prep.image_filename(urls[1])) as image:
        assert image.getpixel((0, 0)) == (8, 8, 8)


def test_breaker_stops_on_a_refusing_host_within_seconds_and_writes_every_failed_row(tmp_path: Path) -> None:
    port = _refusing_port()
    urls = [f"http://127.0.0.1:{port}/img/{index}.png" for index in range(60)]
    csv_path = _csv(tmp_path, urls)
    out = tmp_path / "out"
    started = time.monotonic()
    # 4 retries with backoff 1, 2, 4, 8 s would take 15 s per image without the breaker
    code = cli_main(["prepare", "contextual", "--csv", str(csv_path), "--out", str(out), "--workers", "2"])
    elapsed = time.monotonic() - started
    assert code == 1
    assert elapsed < 10, elapsed
    failed = [json.loads(line) for line in (out / "mini.failed.jsonl").read_text().splitlines()]
    assert [entry["row"] for entry in failed] == list(range(60))  # all 60, not the first 20
    reasons = {entry["reason"] for entry in failed}
    assert all("ConnectionRefusedError" in reason for reason in reasons), reasons
    assert any(
        reason.startswith("not attempted: downloads stopped after 8 identical errors") for reason in reasons
    )


def test_breaker_counts_only_identical_connection_errors_in_a_row() -> None:
    rows = [prep.CsvRow(index, 0, {"image_url": f"http://h.invalid/{index}.png"}) for index in range(12)]
    answers = iter(
        [prep._Failure("connection error: A", True), prep._Failure("connection error: B", True)] * 50
    )

    def fetch(url: str, timeout: float) -> bytes:
        raise next(answers)

    # alternating reasons never make 3 identical errors in a row: every row gets its 2 tries (1 + 1 retry)
    report = prep.download_images(
        rows,
        Path("/tmp") / f"noimg-{time.time_ns()}",
        workers=1,
        retries=1,
        backoff_base=0,
        breaker=3,
        fetch=fetch,
        progress=False,
    )
    assert len(report.failed) == 12 and report.retries == 12
    assert not any(entry["reason"].startswith("not attempted") for entry in report.failed)


def test_one_file_cannot_be_the_image_of_two_urls_that_share_its_name(tmp_path: Path) -> None:
    # a/1.png and b/1.png are two different images; the one 1.png at the folder's top fits both URL paths'
    # ends, so it is the image of neither (it was copied in as both: two rows scored on one picture)
    urls = ["http://h.invalid/a/1.png", "http://h.invalid/b/1.png"]
    got = tmp_path / "got"
    got.mkdir()
    (got / "1.png").write_bytes(_png((7, 7, 7)))
    rows = prep.read_csv(_csv(tmp_path, urls))
    result = prep.import_images(rows, tmp_path / "images", got)
    assert result["imported"] == 0
    assert [entry["row"] for entry in result["problems"]] == [0, 1]
    assert all("ambiguous" in entry["reason"] for entry in result["problems"])
    assert not (tmp_path / "images" / prep.image_filename(urls[0])).exists()


def test_url_paths_match_whole_folder_names_not_string_ends(tmp_path: Path) -> None:
    # the file xa/1.png ends with the characters "a/1.png" but lies in folder xa, not a: not a/1.png's image
    urls = ["http://h.invalid/a/1.png", "http://h.invalid/b/1.png"]
    got = tmp_path / "got"
    for folder, color in (("xa", (5, 5, 5)), ("b", (6, 6, 6))):
        (got / folder).mkdir(parents=True)
        (got / folder / "1.png").write_bytes(_png(color))
    rows = prep.read_csv(_csv(tmp_path, urls))
    result = prep.import_images(rows, tmp_path / "images", got)
    assert result["imported"] == 1  # b/1.png only
    assert [entry["row"] for entry in result["problems"]] == [0]
    with Image.open(tmp_path / "images" / prep.image_filename(urls[1])) as image:
        assert image.getpixel((0, 0)) == (6, 6, 6)
    assert not (tmp_path / "images" / prep.image_filename(urls[0])).exists()


def test_a_half_image_is_not_imported_even_where_the_host_made_pil_lenient(tmp_path: Path) -> None:
    import random

    import lmms_eval.api.task  # noqa: F401 - sets PIL's ImageFile.LOAD_TRUNCATED_IMAGES = True, as in a run
    from PIL import ImageFile

    assert ImageFile.LOAD_TRUNCATED_IMAGES is True
    noise = random.Random(0)
    image = Image.frombytes("RGB", (64, 64), bytes(noise.randrange(256) for _ in range(64 * 64 * 3)))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    got = tmp_path / "got"
    got.mkdir()
    (got / "half.png").write_bytes(buffer.getvalue()[: len(buffer.getvalue()) // 2])  # a cut-off download
    rows = prep.read_csv(_csv(tmp_path, ["http://h.invalid/half.png"]))
    result = prep.import_images(rows, tmp_path / "images", got)
    assert result["imported"] == 0
    [problem] = result["problems"]
    assert problem["reason"] == "--images half.png: not a decodable image (OSError: image file is truncated)"
    assert ImageFile.LOAD_TRUNCATED_IMAGES is True  # the host's setting is back afterwards


def test_counts_below_their_minimum_are_refused_at_the_command_line(tmp_path: Path, capsys) -> None:
    # `--retries -1` made range(0) attempts: every row "failed" with "not attempted" and nothing fetched;
    # `--breaker -1` tripped on the first error
    csv_path = _csv(tmp_path, ["http://h.invalid/a.png"])
    for flag, value, says in (
        ("--retries", "-1", "-1 is less than 0"),
        ("--breaker", "-1", "-1 is less than 0"),
        ("--workers", "0", "0 is less than 1"),
        ("--timeout", "0", "0 is not a positive number of seconds"),
        ("--timeout", "inf", "inf is not a positive number of seconds"),
    ):
        try:
            code = cli_main(
                ["prepare", "contextual", "--csv", str(csv_path), "--out", str(tmp_path), flag, value]
            )
        except SystemExit as stop:
            code = stop.code
        assert code == 2, (flag, value)
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert error.endswith(f"argument {flag}: {says}"), error
    assert not (tmp_path / "images").exists()  # nothing was attempted


def test_download_images_refuses_negative_retries_rather_than_trying_nothing(tmp_path: Path) -> None:
    import pytest

    rows = [prep.CsvRow(0, 0, {"image_url": "http://h.invalid/0.png"})]
    with pytest.raises(prep.PrepareError, match=r"retries \(-1\) and breaker \(8\) must be 0 or more"):
        prep.download_images(rows, tmp_path / "img", retries=-1, progress=False)
