"""Offline WordNet 3.0 for nltk from Debian's `wordnet-base` (plus `lexnames`, `index.sense`):
``ensure_wordnet()`` finds or installs it, else ``WordNetMissing`` names the fix; docs/revisiting.md."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import Any

DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")  # Debian's wordnet-base files


def wordnet_source() -> Path:
    """The folder of WordNet 3.0 dict files to copy: ``$LMMS_EVAL_TASKS_WORDNET_SOURCE``, else Debian's."""
    from lmms_eval_tasks import environment

    return Path(environment.value("LMMS_EVAL_TASKS_WORDNET_SOURCE") or DEBIAN_WORDNET_DIR)


_POS_FILES = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
# The files a source folder must hold (index.sense is built when missing).
REQUIRED_FILES = tuple(f"{kind}.{pos_name}" for pos_name in _POS_FILES for kind in ("data", "index"))
_EXCEPTIONS = tuple(f"{pos_name}.exc" for pos_name in _POS_FILES)
_DICT_FILES = (
    *REQUIRED_FILES,
    "index.sense",
    *_EXCEPTIONS,
    "cntlist.rev",
    "verb.Framestext",
    "sentidx.vrb",
    "sents.vrb",
)
# The files nltk 3.10 opens when it loads WordNet: present in a prepared folder, or it is not prepared.
NLTK_OPENS = (*REQUIRED_FILES, "index.sense", *_EXCEPTIONS, "lexnames")
_SYNSET_TYPE_NUMBER = {"n": 1, "v": 2, "a": 3, "r": 4, "s": 5}
_ADJECTIVE_MARKER = re.compile(r"\((?:a|p|ip)\)")

# WordNet 3.0's lexicographer files in number order; each one's part of speech is its name's prefix.
_LEXICOGRAPHER_FILES = """
adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body noun.cognition
noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive noun.object
noun.person noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape
noun.state noun.substance noun.time verb.body verb.change verb.cognition verb.communication verb.competition
verb.consumption verb.contact verb.creation verb.emotion verb.motion verb.perception verb.possession
verb.social verb.stative verb.weather adj.ppl
""".split()
_LEXICOGRAPHER_POS = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_text() -> str:
    """The `lexnames` file nltk expects: `NN<TAB>name<TAB>POS` per line, 45 lines."""
    return "".join(
        f"{number:02d}\t{name}\t{_LEXICOGRAPHER_POS[name.split('.')[0]]}\n"
        for number, name in enumerate(_LEXICOGRAPHER_FILES)
    )


def default_nltk_data_dir() -> Path:
    """`$NLTK_DATA` (first entry), else `$LMMS_EVAL_TASKS_CACHE/nltk_data`, else under `~/.cache`."""
    if os.environ.get("NLTK_DATA"):
        return Path(os.environ["NLTK_DATA"].split(os.pathsep)[0])
    from lmms_eval_tasks import cache_root

    return cache_root() / "nltk_data"


def _data_lines(path: Path):
    """The entry lines of a WordNet dict file (``data.*``, ``index.*``; header lines start with spaces)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        for line in handle:
            if not line.startswith(" "):
                yield line


def _index_entries(path: Path):
    """(lemma, synset offsets) of each line of a WordNet ``index.*`` file."""
    for line in _data_lines(path):
        fields = line.split()
        synset_count, pointer_count = int(fields[2]), int(fields[3])
        yield fields[0], fields[6 + pointer_count : 6 + pointer_count + synset_count]


def _lemma(word: str) -> str:
    """A data-file word as a sense-key lemma: lower case, without an adjective marker (``(a)``, ``(p)``)."""
    if word.endswith(")") and "(" in word:
        word = word[: word.rindex("(")]
    return word.lower()


def build_index_sense(source: str | Path) -> str:
    """WordNet's ``index.sense`` from ``source``'s files: sense keys as senseidx(5WN) (a satellite's head:
    the first word of its ``&`` synset), sense numbers by rank in ``index.<pos>``, ``cntlist.rev`` counts."""
    source = Path(source)
    sense_numbers: dict[tuple[str, str, str], int] = {}
    for pos_name, pos in _POS_FILES.items():
        for lemma, offsets in _index_entries(source / f"index.{pos_name}"):
            for rank, offset in enumerate(offsets, start=1):
                sense_numbers[(lemma, pos, offset)] = rank
    tag_counts: dict[str, str] = {}
    if (source / "cntlist.rev").is_file():
        for fields in map(str.split, _data_lines(source / "cntlist.rev")):
            if len(fields) == 3:  # cntlist.rev keeps the head word's adjective marker: "preceding(a)"
                tag_counts[_ADJECTIVE_MARKER.sub("", fields[0])] = fields[2]
    synsets: dict[str, tuple[str, int, list[tuple[str, int]], str | None]] = {}
    for pos_name in _POS_FILES:
        for line in _data_lines(source / f"data.{pos_name}"):
            fields = line.split(" | ", 1)[0].split()
            offset, lex_file, synset_type = fields[0], int(fields[1]), fields[2]
            word_count = int(fields[3], 16)
            words = [(_lemma(fields[4 + 2 * i]), int(fields[5 + 2 * i], 16)) for i in range(word_count)]
            head_offset = None
            if synset_type == "s":  # only a satellite's key names a head: its first "&" pointer's synset
                position = 4 + 2 * word_count
                for pointer in range(int(fields[position])):
                    start = position + 1 + 4 * pointer
                    symbol, target, target_pos = fields[start : start + 3]
                    if symbol == "&" and target_pos == "a":
                        head_offset = target
                        break
            synsets[offset + synset_type] = (offset, lex_file, words, head_offset)
    lines: list[tuple[str, str]] = []
    for key, (offset, lex_file, words, head_offset) in synsets.items():
        synset_type = key[-1]
        head = ":"
        if synset_type == "s" and head_offset is not None:
            head_word, head_id = synsets[head_offset + "a"][2][0]
            head = f"{head_word}:{head_id:02d}"
        index_pos = "a" if synset_type == "s" else synset_type
        seen: set[str] = set()
        for lemma, lex_id in words:
            if lemma in seen:  # "ddC 0 DDC 1": one sense key per lower-cased lemma, the first word's
                continue
            seen.add(lemma)
            sense_key = f"{lemma}%{_SYNSET_TYPE_NUMBER[synset_type]}:{lex_file:02d}:{lex_id:02d}:{head}"
            if synset_type != "s":
                sense_key = sense_key.rstrip(":") + "::"
            number = sense_numbers.get((lemma, index_pos, offset), 0)
            lines.append((sense_key, f"{sense_key} {offset} {number} {tag_counts.get(sense_key, '0')}\n"))
    lines.sort(key=lambda item: item[0])
    return "".join(text for _, text in lines)


def damage(folder: str | Path) -> str | None:
    """None when ``folder``'s data files hold every synset its index files name, else what is cut short (a
    data line starts with its own offset; nltk would load a cut copy and lose synsets silently)."""
    folder = Path(folder)
    for pos_name in _POS_FILES:
        data, index = folder / f"data.{pos_name}", folder / f"index.{pos_name}"
        try:
            named = (int(offset) for _, offsets in _index_entries(index) for offset in offsets)
            largest = max(named, default=-1)
        except (IndexError, ValueError) as error:
            return f"{index.name} has a broken line ({error})"
        if largest < 0:
            return f"{index.name} names no synset"
        with open(data, "rb") as handle:
            handle.seek(largest)
            last = handle.readline()  # the data file's last line: every synset is named by some index line
        if not (last.startswith(b"%08d " % largest) and last.endswith(b"\n")):
            return f"{data.name} is cut short (no whole synset at offset {largest}, which {index.name} names)"
    return None


def is_prepared(folder: str | Path) -> bool:
    """True when ``folder`` (``<nltk_data>/corpora/wordnet``) holds every file nltk opens, none cut short."""
    return all((Path(folder) / name).is_file() for name in NLTK_OPENS) and damage(folder) is None


def prepare_nltk_wordnet(target: str | Path | None = None, source: str | Path | None = None) -> Path:
    """Copy WordNet's files from ``source`` to ``<target>/corpora/wordnet`` (idempotent) and return that,
    with ``lexnames`` and, when ``source`` lacks it, a built ``index.sense``."""
    target = Path(target) if target is not None else default_nltk_data_dir()
    source = Path(source) if source is not None else wordnet_source()
    destination = target / "corpora" / "wordnet"
    if is_prepared(destination):
        return destination
    missing = [name for name in REQUIRED_FILES if not (source / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"WordNet files {missing} not found in {source}; install them with "
            "`apt-get install --no-install-recommends wordnet-base` or run nltk.download('wordnet')"
        )
    destination.parent.mkdir(parents=True, exist_ok=True)
    # a staging folder of this process's own: accelerate's N processes (or two runs) may install at once
    staging = Path(tempfile.mkdtemp(prefix="wordnet.", suffix=".partial", dir=destination.parent))
    try:
        for name in _DICT_FILES:
            if (source / name).is_file():
                shutil.copyfile(source / name, staging / name)
        (staging / "lexnames").write_text(lexnames_text(), encoding="ascii")
        if not (staging / "index.sense").is_file():
            (staging / "index.sense").write_text(
                build_index_sense(source), encoding="utf-8", errors="surrogateescape"
            )
        _move_into_place(staging, destination)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return destination


def _discard(folder: Path) -> None:
    """Remove ``folder`` by renaming it aside first, so no reader sees it half deleted."""
    aside = Path(tempfile.mkdtemp(prefix="wordnet.", suffix=".replaced", dir=folder.parent))
    try:
        folder.rename(aside / folder.name)
    except FileNotFoundError:
        pass  # another installer moved it aside already
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def _move_into_place(staging: Path, destination: Path) -> None:
    """Rename ``staging`` to ``destination``; a complete copy another process put there first is kept, an
    incomplete one is moved aside (renames only: a reader never sees a half-written folder)."""
    for _ in range(3):
        try:
            staging.rename(destination)
            return
        except OSError:
            if is_prepared(destination):
                return  # another installer won; its copy is the same files
        _discard(destination)
    staging.rename(destination)


FIX_COMMAND = "lmms-eval-tasks setup-wordnet"
DAMAGED = "the WordNet copy in"


class WordNetMissing(RuntimeError):
    """WordNet cannot be found or installed here; the message is one line ending with the fix."""


# Pulled in by `import nltk` for modules the pack never uses (1.9 of its 2.3 s of CPU); nltk falls back
# when they are absent.
_NLTK_OPTIONAL_IMPORTS = ("scipy", "sklearn")


def import_nltk() -> Any:
    """``import nltk`` with scipy and scikit-learn read as absent while it imports (nltk's own fallbacks;
    its helpers needing them stay unavailable in that process), only while this is the one thread."""
    if "nltk" in sys.modules:  # imported, or being imported by another thread: the import statement waits
        import nltk  # for that import to end (sys.modules holds nltk half-initialised from its first line on)

        return nltk
    alone = threading.active_count() == 1
    blocked = [name for name in _NLTK_OPTIONAL_IMPORTS if name not in sys.modules] if alone else []
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import nltk
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return nltk


def found_copy_damage() -> str | None:
    """None unless the WordNet folder nltk would load first is cut short; then one line naming it and why.
    Looks before nltk loads it (a loaded reader stays in the process); LookupError when nltk finds none."""
    nltk = import_nltk()

    found = nltk.data.find("corpora/wordnet")
    folder = Path(getattr(found, "path", ""))
    if folder.is_dir() and all((folder / name).is_file() for name in REQUIRED_FILES):
        problem = damage(folder)
        if problem:
            return f"{DAMAGED} {folder} is damaged ({problem})"
    return None


def load_problem(folder: str | Path | None = None) -> str | None:
    """None when nltk loads WordNet (``folder`` first on its path); else why not, in a line: a damaged copy
    (starting ``DAMAGED``) or the error's type and first informative line."""
    try:
        ensure_wordnet_on_path(folder)
        problem = found_copy_damage()
        if problem:
            return problem
        from nltk.corpus import wordnet

        if not wordnet.synsets("dog"):
            return f"{DAMAGED} nltk's path has no synsets for 'dog'"
        return None
    except zipfile.BadZipFile as error:  # nltk's wordnet.zip cut short (an interrupted download)
        return f"{DAMAGED} nltk's wordnet.zip is damaged ({error})"
    except Exception as error:  # noqa: BLE001 - LookupError, OSError, a damaged file nltk cannot parse
        lines = [line.strip() for line in str(error).splitlines() if line.strip().strip("*").strip()]
        return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def _download(target: Path) -> str | None:
    """nltk's downloader into ``target``; None on success, else why it failed (one line)."""
    nltk = import_nltk()
    chatter = io.StringIO()  # nltk prints its errors as "[nltk_data] ..." lines even when quiet
    try:
        with contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            ok = nltk.download(
                "wordnet", download_dir=str(target), quiet=True, raise_on_error=True, print_error_to=chatter
            )
    except Exception as error:  # noqa: BLE001 - network and archive errors of every kind: reported, not raised
        reason = " ".join(str(error).split())
        shown = reason if len(reason) <= 160 else reason[:160] + "..."
        return f"nltk's downloader failed: {type(error).__name__}: {shown}"
    return None if ok else "nltk's downloader failed"


def ensure_wordnet(target: str | Path | None = None, source: str | Path | None = None) -> str:
    """Make nltk load WordNet (found, copied from ``source``, or downloaded into ``target``); say how.
    Raises ``WordNetMissing`` (one line: what is missing, then the fix) when none of the three works."""
    source = source if source is not None else wordnet_source()
    folder = Path(target) if target is not None else default_nltk_data_dir()
    found = load_problem(folder)
    if found is None:
        return f"WordNet found on nltk's path ({folder} first)"
    tried = [found] if found.startswith(DAMAGED) else []
    own = folder / "corpora" / "wordnet"
    if own.is_dir() and not is_prepared(own) and all((own / name).is_file() for name in REQUIRED_FILES):
        _discard(own)  # cut short in the pack's folder: a fresh copy (or nltk's zip beside it) replaces it
    if all((Path(source) / name).is_file() for name in REQUIRED_FILES):
        try:
            prepare_nltk_wordnet(folder, source=source)
        except OSError as error:
            tried.append(f"copying {source} into {folder} failed: {error}")
        else:
            if load_problem(folder) is None:
                return f"WordNet installed into {folder} from {source}"
            tried.append(f"the copy of {source} in {folder} does not load")
    else:
        tried.append(f"no Debian WordNet files in {source}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        tried.append(f"cannot create {folder}: {error}")
    else:
        problem = _download(folder)
        if problem is None:
            if load_problem(folder) is None:
                return f"WordNet downloaded into {folder} by nltk"
            problem = f"the download in {folder} does not load"
        tried.append(problem)
    if not _writable(folder):  # neither a copy nor a download can land there: setup-wordnet would fail too
        raise WordNetMissing(
            f"WordNet is missing ({'; '.join(tried)}); fix: point NLTK_DATA at a folder you can write "
            f"({folder} is not writable), or run `{FIX_COMMAND} --target DIR` and add DIR to NLTK_DATA"
        )
    raise WordNetMissing(
        f"WordNet is missing ({'; '.join(tried)}); fix: run `{FIX_COMMAND}` with network, or "
        f"`apt-get install --no-install-recommends wordnet-base` then `{FIX_COMMAND}`"
    )


def _writable(folder: Path) -> bool:
    """True when a folder can be created inside ``folder`` (created itself when missing)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(tempfile.mkdtemp(prefix=".write-check.", dir=folder))
    except OSError:
        return False
    return True


def ensure_wordnet_on_path(target: str | Path | None = None) -> None:
    """Put the pack's nltk data folder on `nltk.data.path` (imports nltk); WordNet 3.0 then loads without
    nltk's mapping of it onto itself (``skip_self_mapping``)."""
    nltk = import_nltk()
    skip_self_mapping()
    folder = str(Path(target) if target is not None else default_nltk_data_dir())
    if folder not in nltk.data.path:
        nltk.data.path.insert(0, folder)


def skip_self_mapping() -> None:
    """nltk (3.9, 3.10) maps WordNet 3.0 onto itself on load (it compares "3.0" with "wordnet"): 60 % of the
    load's CPU (4.4 of 7.2 s). For 3.0 the map is the identity, ``None`` to nltk; other versions keep it."""
    import_nltk()
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    original = WordNetCorpusReader.map_wn
    if getattr(original, "_skips_self_mapping", False):
        return

    def map_wn(self: Any, version: str = "wordnet") -> Any:
        if version == "wordnet" and self.get_version() == "3.0":
            return None
        return original(self, version)

    map_wn._skips_self_mapping = True  # type: ignore[attr-defined]
    map_wn.original = original  # type: ignore[attr-defined]
    WordNetCorpusReader.map_wn = map_wn


def check_wordnet_loads(target: str | Path | None = None) -> str:
    """Load WordNet through nltk from the pack's folder and look up "dog"; return a one-line summary.
    Raises RuntimeError with the fix when nltk cannot load it (what `make setup` ends with)."""
    problem = load_problem(target)
    if problem is not None:
        folder = Path(target) if target is not None else default_nltk_data_dir()
        raise RuntimeError(
            f"nltk cannot load WordNet from {folder}: {problem}; fix: run "
            "`make setup` (or `lmms-eval-tasks setup-wordnet --target <nltk_data>` after "
            "`apt-get install --no-install-recommends wordnet-base`), or nltk.download('wordnet')"
        )
    from nltk.corpus import wordnet

    return f"WordNet {wordnet.get_version()} loads: {len(wordnet.synsets('dog'))} synsets for 'dog'"
