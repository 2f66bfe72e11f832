"""Offline WordNet for nltk, built from Debian's `wordnet-base` files (WordNet 3.0).

nltk only reads WordNet from its own data folders and needs a `lexnames` file Debian does not ship, so
this copies the dictionary files into `<nltk_data>/corpora/wordnet/` and writes `lexnames`. Online users
can run `nltk.download("wordnet")` instead; either way `ensure_wordnet_on_path()` makes nltk find it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")
_DICT_FILES = (
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "index.sense",
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
    "cntlist.rev",
    "verb.Framestext",
    "sentidx.vrb",
    "sents.vrb",
)
_REQUIRED = (
    "data.noun",
    "index.noun",
    "data.verb",
    "index.verb",
    "data.adj",
    "index.adj",
    "data.adv",
    "index.adv",
)

# WordNet 3.0 lexicographer files: number, name, part of speech (1 noun, 2 verb, 3 adjective, 4 adverb).
_LEXICOGRAPHER_FILES = (
    ("adj.all", 3),
    ("adj.pert", 3),
    ("adv.all", 4),
    ("noun.Tops", 1),
    ("noun.act", 1),
    ("noun.animal", 1),
    ("noun.artifact", 1),
    ("noun.attribute", 1),
    ("noun.body", 1),
    ("noun.cognition", 1),
    ("noun.communication", 1),
    ("noun.event", 1),
    ("noun.feeling", 1),
    ("noun.food", 1),
    ("noun.group", 1),
    ("noun.location", 1),
    ("noun.motive", 1),
    ("noun.object", 1),
    ("noun.person", 1),
    ("noun.phenomenon", 1),
    ("noun.plant", 1),
    ("noun.possession", 1),
    ("noun.process", 1),
    ("noun.quantity", 1),
    ("noun.relation", 1),
    ("noun.shape", 1),
    ("noun.state", 1),
    ("noun.substance", 1),
    ("noun.time", 1),
    ("verb.body", 2),
    ("verb.change", 2),
    ("verb.cognition", 2),
    ("verb.communication", 2),
    ("verb.competition", 2),
    ("verb.consumption", 2),
    ("verb.contact", 2),
    ("verb.creation", 2),
    ("verb.emotion", 2),
    ("verb.motion", 2),
    ("verb.perception", 2),
    ("verb.possession", 2),
    ("verb.social", 2),
    ("verb.stative", 2),
    ("verb.weather", 2),
    ("adj.ppl", 3),
)


def lexnames_text() -> str:
    """The `lexnames` file nltk expects: `NN<TAB>name<TAB>POS` per line, 45 lines."""
    return "".join(
        f"{number:02d}\t{name}\t{pos}\n" for number, (name, pos) in enumerate(_LEXICOGRAPHER_FILES)
    )


def default_nltk_data_dir() -> Path:
    """`$NLTK_DATA` (first entry), else `$LMMS_EVAL_TASKS_CACHE/nltk_data`, else under `~/.cache`."""
    if os.environ.get("NLTK_DATA"):
        return Path(os.environ["NLTK_DATA"].split(os.pathsep)[0])
    cache = os.environ.get("LMMS_EVAL_TASKS_CACHE") or Path.home() / ".cache" / "lmms_eval_tasks"
    return Path(cache) / "nltk_data"


def prepare_nltk_wordnet(target: str | Path | None = None, source: str | Path = DEBIAN_WORDNET_DIR) -> Path:
    """Copy WordNet's files from ``source`` to ``<target>/corpora/wordnet`` (idempotent); return that."""
    target = Path(target) if target is not None else default_nltk_data_dir()
    source = Path(source)
    destination = target / "corpora" / "wordnet"
    if all((destination / name).is_file() for name in _REQUIRED) and (destination / "lexnames").is_file():
        return destination
    missing = [name for name in _REQUIRED if not (source / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"WordNet files {missing} not found in {source}; install them with "
            "`apt-get install --no-install-recommends wordnet-base` or run nltk.download('wordnet')"
        )
    staging = destination.with_name("wordnet.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in _DICT_FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, staging / name)
    (staging / "lexnames").write_text(lexnames_text(), encoding="ascii")
    shutil.rmtree(destination, ignore_errors=True)
    staging.rename(destination)
    return destination


def ensure_wordnet_on_path(target: str | Path | None = None) -> None:
    """Put the pack's nltk data folder on `nltk.data.path` (imports nltk)."""
    import nltk

    folder = str(Path(target) if target is not None else default_nltk_data_dir())
    if folder not in nltk.data.path:
        nltk.data.path.insert(0, folder)
