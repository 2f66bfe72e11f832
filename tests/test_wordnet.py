"""Offline WordNet for nltk from Debian's files: the lexnames table and the copy into an nltk data folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_eval_tasks.wordnet import (
    build_index_sense,
    damage,
    is_prepared,
    lexnames_text,
    prepare_nltk_wordnet,
)


def test_lexnames_has_the_45_wordnet_lexicographer_files() -> None:
    lines = lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3"
    assert lines[3] == "03\tnoun.Tops\t1"
    assert lines[29] == "29\tverb.body\t2"
    assert lines[44] == "44\tadj.ppl\t3"


def test_missing_source_names_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="wordnet-base"):
        prepare_nltk_wordnet(tmp_path / "nltk", source=tmp_path / "empty")


def test_nltk_reads_the_prepared_wordnet(tmp_path: Path) -> None:
    # Needs Debian's wordnet-base, which `make setup` installs (scripts/install_wordnet.sh).
    folder = prepare_nltk_wordnet(tmp_path / "nltk_data")
    assert (folder / "lexnames").is_file()
    assert prepare_nltk_wordnet(tmp_path / "nltk_data") == folder  # idempotent
    script = (
        "import sys; from lmms_eval_tasks.wordnet import import_nltk; nltk = import_nltk();"
        "nltk.data.path.insert(0, sys.argv[1]);"
        "from nltk.corpus import wordnet as wn;"
        "print(wn.synset('dog.n.01').lexname(), sorted(l.name() for l in wn.synset('car.n.01').lemmas())[:2])"
    )
    output = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "nltk_data")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert output.strip() == "noun.animal ['auto', 'automobile']"


def _debian_base_only_copy(tmp_path: Path) -> Path:
    """Debian's WordNet files as `wordnet-base` alone installs them: everything but `index.sense`."""
    source = Path("/usr/share/wordnet")
    if not (source / "data.noun").is_file():
        pytest.fail("Debian's wordnet-base is not installed: `make setup` installs it")
    copy = tmp_path / "wordnet-base-only"
    copy.mkdir(parents=True)
    for path in source.iterdir():
        if path.is_file() and path.name != "index.sense":
            (copy / path.name).write_bytes(path.read_bytes())
    return copy


def test_a_base_only_layout_gets_a_built_index_sense_and_nltk_loads_it(tmp_path: Path) -> None:
    # The fresh-machine case of issue 9: wordnet-base installed, wordnet-sense-index not.
    source = _debian_base_only_copy(tmp_path)
    folder = prepare_nltk_wordnet(tmp_path / "nltk_data", source=source)
    assert is_prepared(folder)
    assert (folder / "index.sense").stat().st_size > 7_000_000
    script = (
        "import sys; from lmms_eval_tasks.wordnet import import_nltk; nltk = import_nltk();"
        "nltk.data.path.insert(0, sys.argv[1]);"
        "from nltk.corpus import wordnet as wn;"
        "print(len(wn.synsets('dog')), wn.lemma_from_key('dog%1:05:00::').synset().name())"
    )
    output = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "nltk_data")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert output.split() == ["8", "dog.n.01"]


@pytest.fixture(scope="module")
def built_index_sense(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``build_index_sense`` of a base-only copy of Debian's files (about 4 s of CPU: built once here)."""
    return build_index_sense(_debian_base_only_copy(tmp_path_factory.mktemp("built-index-sense")))


def test_the_built_index_sense_equals_princetons_file_line_for_line(built_index_sense: str) -> None:
    real = Path("/usr/share/wordnet/index.sense")
    if not real.is_file():
        pytest.skip("Debian's wordnet-sense-index is not installed here, so there is no reference file")
    assert built_index_sense == real.read_text(encoding="utf-8", errors="surrogateescape")


def test_sense_keys_of_satellites_and_case_variants(built_index_sense: str) -> None:
    # Hand-checked lines of WordNet 3.0's index.sense: a satellite adjective names its head word and id,
    # "ddC 0 DDC 1" in one synset gives one key (the first word's lex id), sense numbers follow index.noun.
    lines = set(built_index_sense.splitlines())
    assert "above%5:00:00:preceding:00 00125993 1 13" in lines  # cntlist.rev writes "preceding(a)"
    assert "ddc%1:06:00:: 03190763 1 0" in lines
    assert not any(line.startswith("ddc%1:06:01::") for line in lines)
    assert "earth%1:15:00:: 08562067 4 3" in lines


def test_a_folder_missing_any_file_nltk_opens_is_not_prepared(tmp_path: Path, built_index_sense: str) -> None:
    source = _debian_base_only_copy(tmp_path)  # with the index.sense built once for the module: copied
    (source / "index.sense").write_text(built_index_sense, encoding="utf-8", errors="surrogateescape")
    folder = prepare_nltk_wordnet(tmp_path / "nltk_data", source=source)
    assert is_prepared(folder)
    (folder / "index.sense").unlink()
    assert not is_prepared(folder)
    assert prepare_nltk_wordnet(tmp_path / "nltk_data", source=_debian_base_only_copy(tmp_path / "again"))
    assert is_prepared(folder)


def test_install_script_on_a_base_only_layout_ends_by_loading_wordnet(tmp_path: Path) -> None:
    source = _debian_base_only_copy(tmp_path)
    result = subprocess.run(
        ["bash", "scripts/install_wordnet.sh", str(tmp_path / "nltk_data")],
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "WORDNET_SOURCE": str(source), "PYTHON": sys.executable},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "WordNet 3.0 loads: 8 synsets for 'dog'" in result.stdout


def test_check_wordnet_loads_names_the_fix_when_the_folder_is_empty(tmp_path: Path) -> None:
    script = (
        "import sys; from lmms_eval_tasks.wordnet import check_wordnet_loads\n"
        "try:\n    check_wordnet_loads(sys.argv[1])\nexcept RuntimeError as error:\n    print(error)\n"
    )
    environment = {key: value for key, value in os.environ.items() if key != "NLTK_DATA"}
    environment["NLTK_DATA"] = str(tmp_path / "empty")
    output = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "empty")],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
    ).stdout
    assert "nltk cannot load WordNet" in output and "make setup" in output


# ---- first use: found, copied from Debian's files, downloaded, or one line with the fix -------------------

ENSURE = (
    "import sys; from lmms_eval_tasks.wordnet import ensure_wordnet;"
    "print(ensure_wordnet(sys.argv[1], source=sys.argv[2]));"
    "from nltk.corpus import wordnet as wn; print(wn.synset('dog.n.01').lexname())"
)


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _no_wordnet_environment(tmp_path: Path) -> dict[str, str]:
    """No WordNet anywhere nltk looks, no Debian files, and nltk's downloader refused at once (a proxy on a
    closed local port stands in for a machine without network)."""
    proxy = f"http://127.0.0.1:{_closed_port()}"
    environment = {
        **os.environ,
        "NLTK_DATA": str(tmp_path / "nltk_data"),
        "HOME": str(tmp_path),
        "LMMS_EVAL_TASKS_WORDNET_SOURCE": str(tmp_path / "no_debian_files"),
        "HTTPS_PROXY": proxy,
        "https_proxy": proxy,
        "HTTP_PROXY": proxy,
        "http_proxy": proxy,
    }
    environment.pop("NO_PROXY", None)
    environment.pop("no_proxy", None)
    return environment


def test_first_use_copies_debian_files_into_the_packs_folder(tmp_path: Path) -> None:
    if not (Path("/usr/share/wordnet") / "data.noun").is_file():
        pytest.fail("Debian's wordnet-base is not installed: `make setup` installs it")
    environment = {
        **_no_wordnet_environment(tmp_path),
        "LMMS_EVAL_TASKS_WORDNET_SOURCE": "/usr/share/wordnet",
    }
    target = tmp_path / "nltk_data"
    completed = subprocess.run(
        [sys.executable, "-c", ENSURE, str(target), "/usr/share/wordnet"],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.splitlines() == [
        f"WordNet installed into {target} from /usr/share/wordnet",
        "noun.animal",
    ]
    assert is_prepared(target / "corpora" / "wordnet")


def test_no_wordnet_score_tdiuc_ends_in_one_line_with_the_fix(tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text(
        json.dumps(
            {"question_id": 1, "question_type": "attribute", "labeled_answer": "dog", "prediction": "puppy"}
        )
        + "\n",
        encoding="utf-8",
    )
    completed = subprocess.run(
        [sys.executable, "-m", "lmms_eval_tasks.cli", "score", "tdiuc", str(records)],
        capture_output=True,
        text=True,
        env=_no_wordnet_environment(tmp_path),
        check=False,
        timeout=300,
    )
    assert completed.returncode == 1
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1, completed.stderr  # no traceback, no nltk banner
    assert "Traceback" not in completed.stderr and "*****" not in completed.stderr
    line = lines[0]
    assert line.startswith(
        "lmms-eval-tasks score: TDIUC scoring needs WordNet (synonym matching): WordNet is missing ("
    )
    assert f"no Debian WordNet files in {tmp_path / 'no_debian_files'}" in line
    assert "nltk's downloader failed" in line
    assert line.endswith(
        "fix: run `lmms-eval-tasks setup-wordnet` with network, or "
        "`apt-get install --no-install-recommends wordnet-base` then `lmms-eval-tasks setup-wordnet`"
    )


def test_no_wordnet_the_launcher_stops_before_the_host_with_one_line(tmp_path: Path) -> None:
    environment = {**_no_wordnet_environment(tmp_path), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "lmms_eval_tasks",
            "--model",
            "random_guess",
            "--tasks",
            "tdiuc_sample",
            "--output_path",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
        timeout=300,
    )
    assert completed.returncode == 2, completed.stderr[-3000:]
    last = completed.stderr.strip().splitlines()[-1]
    assert last.startswith("lmms_eval: TDIUC scoring needs WordNet (synonym matching): WordNet is missing"), (
        last
    )
    assert "Traceback" not in completed.stderr


def test_processes_installing_wordnet_at_once_all_end_with_one_complete_copy(tmp_path: Path) -> None:
    # `accelerate launch --num_processes N` runs the launcher's WordNet pre-check in every process at once:
    # each must end with WordNet loading; none may delete another's half-written copy (shared staging).
    source = _debian_base_only_copy(tmp_path)  # index.sense is built: seconds, a wide window for a race
    target = tmp_path / "nltk_data"
    environment = {**_no_wordnet_environment(tmp_path), "LMMS_EVAL_TASKS_WORDNET_SOURCE": str(source)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", ENSURE, str(target), str(source)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        for _ in range(3)
    ]
    outputs = [process.communicate(timeout=600) for process in processes]
    for process, (stdout, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr[-2000:]
        assert stdout.splitlines()[-1] == "noun.animal"
    assert is_prepared(target / "corpora" / "wordnet")
    assert sorted(path.name for path in (target / "corpora").iterdir()) == ["wordnet"]  # no staging left


def _cut_short_copy(target: Path) -> Path:
    """A prepared WordNet folder whose data.noun an interrupted copy or unzip cut off after 100 kB."""
    folder = prepare_nltk_wordnet(target, source="/usr/share/wordnet")
    with open(folder / "data.noun", "r+b") as handle:
        handle.truncate(100_000)
    return folder


CHECK_DOG = (
    "import sys; from lmms_eval_tasks.wordnet import ensure_wordnet, WordNetMissing\n"
    "try:\n    print(ensure_wordnet(sys.argv[1], source=sys.argv[2]))\n"
    "except WordNetMissing as error:\n    print(error); raise SystemExit(1)\n"
    "from nltk.corpus import wordnet as wn; print([s and s.name() for s in wn.synsets('dog')][:2])"
)


def test_a_cut_short_copy_is_damaged_not_prepared_and_first_use_replaces_it(tmp_path: Path) -> None:
    # nltk loads such a copy and answers wn.synsets('dog') with [None, None, ...]: TDIUC would crash mid-run
    # (or, with fewer lost lines, miss synonyms). 100 kB of data.noun's 15.3 MB: dog's synsets are past it.
    target = tmp_path / "nltk_data"
    folder = _cut_short_copy(target)
    assert not is_prepared(folder)
    assert (
        damage(folder)
        == "data.noun is cut short (no whole synset at offset 15300051, which index.noun names)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", CHECK_DOG, str(target), "/usr/share/wordnet"],
        capture_output=True,
        text=True,
        env=_no_wordnet_environment(tmp_path),
        check=False,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr[-2000:]
    assert completed.stdout.splitlines() == [
        f"WordNet installed into {target} from /usr/share/wordnet",
        "['dog.n.01', 'frump.n.01']",
    ]
    assert is_prepared(folder)
    assert sorted(path.name for path in (target / "corpora").iterdir()) == ["wordnet"]


def test_a_cut_short_copy_without_a_source_fails_in_one_line_naming_it(tmp_path: Path) -> None:
    target = tmp_path / "nltk_data"
    folder = _cut_short_copy(target)
    completed = subprocess.run(
        [sys.executable, "-c", CHECK_DOG, str(target), str(tmp_path / "no_debian_files")],
        capture_output=True,
        text=True,
        env=_no_wordnet_environment(tmp_path),
        check=False,
        timeout=300,
    )
    assert completed.returncode == 1
    line = completed.stdout.strip()
    assert line.startswith(
        f"WordNet is missing (the WordNet copy in {folder} is damaged (data.noun is cut short"
    )
    assert line.endswith("then `lmms-eval-tasks setup-wordnet`")


def test_damage_is_none_for_the_debian_files_and_names_a_missing_last_newline(tmp_path: Path) -> None:
    assert damage("/usr/share/wordnet") is None
    folder = prepare_nltk_wordnet(tmp_path / "nltk_data", source="/usr/share/wordnet")
    size = (folder / "data.adv").stat().st_size
    with open(folder / "data.adv", "r+b") as handle:
        handle.truncate(size - 1)  # only the last byte (the last synset's newline) lost
    assert damage(folder) == "data.adv is cut short (no whole synset at offset 516492, which index.adv names)"


def test_a_broken_wordnet_zip_is_one_line_not_a_traceback_and_a_copy_shadows_it(tmp_path: Path) -> None:
    # nltk's downloader leaves corpora/wordnet.zip; cut short, nltk raised zipfile.BadZipFile through
    # ensure_wordnet (a traceback from `score tdiuc`, the launcher's pre-check and setup-wordnet)
    target = tmp_path / "nltk_data"
    (target / "corpora").mkdir(parents=True)
    (target / "corpora" / "wordnet.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 500)
    broken = subprocess.run(
        [sys.executable, "-c", CHECK_DOG, str(target), str(tmp_path / "no_debian_files")],
        capture_output=True,
        text=True,
        env=_no_wordnet_environment(tmp_path),
        check=False,
        timeout=300,
    )
    assert broken.returncode == 1, broken.stderr[-2000:]
    assert "Traceback" not in broken.stderr
    assert broken.stdout.startswith(
        "WordNet is missing (the WordNet copy in nltk's wordnet.zip is damaged (File is not a zip file); "
    )
    installed = subprocess.run(
        [sys.executable, "-c", CHECK_DOG, str(target), "/usr/share/wordnet"],
        capture_output=True,
        text=True,
        env=_no_wordnet_environment(tmp_path),
        check=False,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    assert installed.stdout.splitlines() == [
        f"WordNet installed into {target} from /usr/share/wordnet",
        "['dog.n.01', 'frump.n.01']",
    ]


def test_an_unwritable_nltk_folder_names_that_folder_as_the_fix_not_setup_wordnet(tmp_path: Path) -> None:
    # NLTK_DATA below a regular file (any user, root included, cannot create it): the copy and the download
    # both fail there, so "run setup-wordnet" (which writes to the same folder) is no fix
    (tmp_path / "a_file").write_text("x", encoding="utf-8")
    target = tmp_path / "a_file" / "nltk_data"
    environment = {**_no_wordnet_environment(tmp_path), "NLTK_DATA": str(target)}
    completed = subprocess.run(
        [sys.executable, "-c", CHECK_DOG, str(target), "/usr/share/wordnet"],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
        timeout=300,
    )
    assert completed.returncode == 1, completed.stderr[-2000:]
    line = completed.stdout.strip()
    assert f"copying /usr/share/wordnet into {target} failed" in line
    assert line.endswith(
        f"fix: point NLTK_DATA at a folder you can write ({target} is not writable), or run "
        "`lmms-eval-tasks setup-wordnet --target DIR` and add DIR to NLTK_DATA"
    ), line


def test_wordnet_3_0_loads_without_nltks_map_of_itself_which_is_the_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``skip_self_mapping``: nltk's map from WordNet 3.0 to the loaded 3.0 (60 % of a load's CPU time) maps
    every synset to itself, except the "-a" spelling it adds for each satellite "-s", which nltk's own
    ``map30 = None`` path resolves the same way (``of2ss``); so the pack loads 3.0 with ``map30 = None``."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from lmms_eval_tasks.wordnet import skip_self_mapping

    folder = prepare_nltk_wordnet(tmp_path / "nltk_data")
    monkeypatch.setattr(
        nltk.data, "path", [str(tmp_path / "nltk_data"), *nltk.data.path]
    )  # nltk reads only there
    skip_self_mapping()
    skip_self_mapping()  # idempotent: one wrapper
    assert not hasattr(WordNetCorpusReader.map_wn.original, "original")
    with pytest.warns(UserWarning, match="multilingual"):
        reader = WordNetCorpusReader(str(folder), None)
    assert reader.get_version() == "3.0" and reader.map30 is None
    names = {synset.name() for synset in reader.synsets("dogs")}  # morphy: plural to lemma
    assert len(reader.synsets("dog")) == 8 and {"dog.n.01", "frank.n.02", "chase.v.01"} <= names
    nltk_map = WordNetCorpusReader.map_wn.original(reader)  # what nltk would have built
    assert len(nltk_map) > 117_000
    moved = {source: target for source, target in nltk_map.items() if source != target}
    assert moved and all(
        source.endswith("-a") and target == source[:-1] + "s" for source, target in moved.items()
    )


def test_the_packs_nltk_import_leaves_out_scipy_and_sklearn_which_import_normally_after() -> None:
    # A fresh process: the import the pack makes before any WordNet use (1.9 of `import nltk`'s 2.3 s of CPU
    # is scipy.stats and sklearn, which WordNet never uses)
    script = (
        "import sys; from lmms_eval_tasks.wordnet import import_nltk; nltk = import_nltk();"
        "print(sorted(n for n in ('scipy', 'sklearn') if n in sys.modules), import_nltk() is nltk);"
        "from nltk.corpus.reader.wordnet import WordNetCorpusReader;"
        "print([sys.modules.get(n, 0) is not None for n in ('scipy', 'sklearn')]);"
        "import scipy.linalg; print(scipy.linalg.__name__)"
    )
    output = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300
    ).stdout
    assert output.splitlines() == ["[] True", "[True, True]", "scipy.linalg"]


FAKE_NLTK = (  # an nltk that records whether scipy and sklearn read as absent while it was imported
    "import sys\nBLOCKED = [sys.modules.get(name, 0) is None for name in ('scipy', 'sklearn')]\n"
)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_packs_nltk_import_blocks_nothing_while_another_thread_runs(tmp_path: Path, threads: int) -> None:
    # The host calls task hooks (TDIUC's scoring) from thread pools: a scipy import in another thread while
    # import_nltk hid scipy would fail, so the block is only made while the process has one thread
    (tmp_path / "nltk").mkdir()
    (tmp_path / "nltk" / "__init__.py").write_text(FAKE_NLTK, encoding="utf-8")
    script = (
        "import sys, threading; sys.path.insert(0, sys.argv[1]); stop = threading.Event()\n"
        "helpers = [threading.Thread(target=stop.wait) for _ in range(int(sys.argv[2]) - 1)]\n"
        "[helper.start() for helper in helpers]\n"
        "from lmms_eval_tasks.wordnet import import_nltk; nltk = import_nltk(); stop.set()\n"
        "print(nltk.__file__.startswith(sys.argv[1]), nltk.BLOCKED, threading.active_count() <= 2)\n"
        "print([sys.modules.get(name, 0) is None for name in ('scipy', 'sklearn')])\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), str(threads)],
        capture_output=True, text=True, check=True, timeout=300, cwd=Path(__file__).resolve().parents[1],
    ).stdout  # fmt: skip
    blocked = threads == 1
    assert output.splitlines() == [f"True [{blocked}, {blocked}] True", "[False, False]"]


GATED_NLTK = (  # an nltk whose import stops half way (after its first lines, before download) until released
    "import gate\ngate.started.set()\ngate.release.wait()\ndef download(*args, **kwargs):\n    return True\n"
)
WAIT_FOR_THE_READER = """
import sys, threading, time
sys.path.insert(0, sys.argv[1])
import gate
from lmms_eval_tasks.wordnet import import_nltk
seen = []
def reader():
    gate.started.wait()
    seen.append(hasattr(import_nltk(), "download"))
importer, second = threading.Thread(target=import_nltk), threading.Thread(target=reader)
importer.start(); second.start()
def waiting_in_an_import():
    frame = sys._current_frames().get(second.ident)
    while frame is not None:
        if "importlib" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False
while second.is_alive() and not waiting_in_an_import():  # returned (a half module), or waits for the import
    time.sleep(0.01)
gate.release.set()
importer.join(); second.join()
print(seen)
"""


def test_a_thread_asking_for_nltk_while_another_imports_it_gets_the_whole_module(tmp_path: Path) -> None:
    # The host calls hooks from thread pools: ContextUAL's ROUGE-L imports nltk (import_nltk) while TDIUC's
    # scoring may reach ensure_wordnet; nltk is in sys.modules from the first line of its import on, so a
    # second caller must wait for that import (as `import nltk` does), not take the half-initialised module
    (tmp_path / "nltk").mkdir()
    (tmp_path / "nltk" / "__init__.py").write_text(GATED_NLTK, encoding="utf-8")
    (tmp_path / "gate.py").write_text(
        "import threading\nstarted, release = threading.Event(), threading.Event()\n", encoding="utf-8"
    )
    output = subprocess.run(
        [sys.executable, "-c", WAIT_FOR_THE_READER, str(tmp_path)],
        capture_output=True, text=True, check=True, timeout=300, cwd=Path(__file__).resolve().parents[1],
    ).stdout  # fmt: skip
    assert output.splitlines() == ["[True]"]
