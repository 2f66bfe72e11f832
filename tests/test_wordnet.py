"""Offline WordNet for nltk from Debian's files: the lexnames table and the copy into an nltk data folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lmms_eval_tasks.wordnet import lexnames_text, prepare_nltk_wordnet


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
        "import nltk, sys; nltk.data.path.insert(0, sys.argv[1]);"
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
