"""The random_guess baseline: registration, determinism, answer spaces, and a real harness run."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lmms_eval_tasks.framework import answer_spaces, registry
from lmms_eval_tasks.framework.answer_spaces import fallback_answer, listed_option_letters, looks_like_yes_no
from lmms_eval_tasks.framework.registry import Behaviour, Benchmark
from lmms_eval_tasks.models import SIMPLE_MODELS
from lmms_eval_tasks.models.random_guess import RandomGuess, request_rng
from tests.conftest import TINY_TASK_COLOURS
from tests.helpers import toy_schema

TASK = "toy_task"
SPLIT = "test"


def hook_answer(task_name: str, doc: dict, rng: random.Random) -> str:
    """A registered answer space used by the tests: proves the doc and the seeded rng reach the hook."""
    return f"{task_name}|{doc['label']}|{rng.choice(doc['allowed'])}"


def _docs(count: int) -> dict[int, dict]:
    return {
        doc_id: {"label": f"doc{doc_id}", "allowed": ["x", "y", "z"], "question": f"Question {doc_id}?"}
        for doc_id in range(count)
    }


def _model(seed: int = 0, task: str = TASK, count: int = 40) -> RandomGuess:
    model = RandomGuess(seed=seed)
    model.task_dict = {task: {SPLIT: _docs(count)}}
    return model


def _generate_requests(prompts: dict[int, str], task: str = TASK) -> list[Any]:
    from lmms_eval.api.instance import Instance

    return [
        Instance(
            "generate_until",
            (prompt, {"max_new_tokens": 8}, lambda doc: [], doc_id, task, SPLIT),
            idx=0,
            metadata={"task": task, "doc_id": doc_id, "repeats": 1},
        )
        for doc_id, prompt in prompts.items()
    ]


def _choice_requests(doc_ids: list[int], options: int = 4) -> list[Any]:
    from lmms_eval.api.instance import Instance

    return [
        Instance(
            "loglikelihood",
            (f"Question {doc_id}?", f" option {index}", lambda doc: [], doc_id, TASK, SPLIT),
            idx=index,
            metadata={"task": TASK, "doc_id": doc_id, "repeats": 1},
        )
        for doc_id in doc_ids
        for index in range(options)
    ]


def _answers_by_key(model: RandomGuess, requests: list[Any]) -> dict[tuple, Any]:
    method = model.generate_until if requests[0].request_type == "generate_until" else model.loglikelihood
    return {
        (request.doc_id, request.idx): answer
        for request, answer in zip(requests, method(requests), strict=True)
    }


# Registration ---------------------------------------------------------------------------------------------


def test_registered_through_the_entry_point_as_a_simple_model() -> None:
    from lmms_eval.models import get_model, get_model_manifest

    manifest = get_model_manifest("random_guess")
    assert manifest.simple_class_path == "lmms_eval_tasks.models.random_guess.RandomGuess"
    assert manifest.chat_class_path is None
    assert get_model("random_guess") is RandomGuess


def test_pack_model_names_do_not_collide_with_host_models() -> None:
    # The host loads entry points with overwrite=True, so a clash would silently replace a built-in model.
    from lmms_eval.models import _build_builtin_manifests

    host_names = set()
    for manifest in _build_builtin_manifests():
        host_names.update({manifest.model_id, *manifest.aliases})
    assert "llava_hf" in host_names and "dummy" in host_names  # the list is the real one
    assert not set(SIMPLE_MODELS) & host_names


def test_importing_the_models_package_is_cheap() -> None:
    code = (
        "import sys, lmms_eval_tasks.models as m; m.model_manifests; "
        "heavy = ('torch', 'transformers', 'lmms_eval.api.model'); "
        "print(sorted(name for name in heavy if name in sys.modules))"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "[]"


def test_model_args_are_checked() -> None:
    assert RandomGuess(seed="7", batch_size=4, device="cpu").seed == 7
    with pytest.raises(ValueError, match="seed must be an integer"):
        RandomGuess(seed="seven")
    with pytest.raises(TypeError, match="temperature"):
        RandomGuess(temperature=0.5)


# Determinism ----------------------------------------------------------------------------------------------


def test_answers_do_not_depend_on_order_batching_or_ranks() -> None:
    prompts = {doc_id: f"Is object {doc_id} visible? Answer yes or no." for doc_id in range(40)}
    requests = _generate_requests(prompts)
    reference = _answers_by_key(_model(), requests)

    shuffled = list(requests)
    random.Random(5).shuffle(shuffled)
    assert _answers_by_key(_model(), shuffled) == reference
    for batch_size in (1, 3, 7):  # the harness may hand requests over in any chunking
        model = _model()
        chunked: dict[tuple, Any] = {}
        for start in range(0, len(requests), batch_size):
            chunked.update(_answers_by_key(model, requests[start : start + batch_size]))
        assert chunked == reference
    for world_size in (2, 3):  # each rank gets docs rank, rank+world_size, ... (utils.create_iterator)
        sharded: dict[tuple, Any] = {}
        for rank in range(world_size):
            sharded.update(_answers_by_key(_model(), requests[rank::world_size]))
        assert sharded == reference
    assert set(reference.values()) == {"Yes", "No"}


def test_seed_changes_the_answers_and_is_recorded_in_the_rng() -> None:
    requests = _generate_requests({doc_id: "Is it red? yes or no" for doc_id in range(40)})
    seed_0 = _answers_by_key(_model(seed=0), requests)
    seed_1 = _answers_by_key(_model(seed=1), requests)
    assert seed_0 != seed_1
    # Each answer is exactly the documented function of (seed, task, doc id, request index, repeat index).
    for (doc_id, index), answer in seed_1.items():
        assert answer == fallback_answer("Is it red? yes or no", request_rng(1, TASK, doc_id, index, 0))


def test_repeats_get_their_own_draws_deterministically() -> None:
    from lmms_eval.api.instance import Instance

    requests = []
    for doc_id in range(30):
        instance = Instance(
            "generate_until",
            ("Options:\nA. cat\nB. dog\nC. bird\nD. fish", {}, lambda doc: [], doc_id, TASK, SPLIT),
            idx=0,
            metadata={"task": TASK, "doc_id": doc_id, "repeats": 3},
        )
        requests.extend([instance] * 3)  # how the evaluator expands `repeats`
    first = _model().generate_until(requests)
    assert first == _model().generate_until(requests)
    per_doc = [first[start : start + 3] for start in range(0, len(first), 3)]
    assert any(len(set(answers)) > 1 for answers in per_doc)  # repeats are not copies of one draw
    assert set(first) <= {"A", "B", "C", "D"}


# Answer spaces --------------------------------------------------------------------------------------------


def _toy_benchmark(name: str, behaviour: str | Behaviour) -> Benchmark:
    return Benchmark(
        name=name,
        title=name,
        description="toy benchmark for the answer-space tests",
        behaviour=behaviour,
        record_schema=toy_schema("question"),
        headline_metrics=("accuracy",),
    )


@pytest.fixture
def registered_hook(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Register this module's ``hook_answer`` for tasks starting with ``toy`` (and a decoy shorter prefix)."""
    registry.register(_toy_benchmark("to", "lmms_eval_tasks.no_such_module"))  # a decoy
    no_score = registry.scorer()(lambda records: ({}, {}))
    registry.register(_toy_benchmark("toy", Behaviour(score=no_score, random_answer=hook_answer)))
    monkeypatch.setattr(answer_spaces, "_resolved", {})
    yield
    registry.unregister("to")
    registry.unregister("toy")


def test_registered_answer_space_receives_the_doc_and_the_seeded_rng(registered_hook: None) -> None:
    requests = _generate_requests({doc_id: "ignored prompt" for doc_id in range(30)})
    answers = _model(seed=3).generate_until(requests)
    for doc_id, answer in enumerate(answers):
        # longest prefix ("toy") wins over the decoy ("to"); the doc is looked up by task/split/doc_id
        expected_choice = request_rng(3, TASK, doc_id, 0).choice(["x", "y", "z"])
        assert answer == f"{TASK}|doc{doc_id}|{expected_choice}"
    assert {answer.rsplit("|", 1)[1] for answer in answers} == {"x", "y", "z"}


def test_missing_hook_module_falls_back_to_the_generic_answer_space(registered_hook: None) -> None:
    requests = _generate_requests({doc_id: "Does it fly? yes or no" for doc_id in range(10)}, task="tomato")
    answers = _model(task="tomato").generate_until(requests)
    assert set(answers) <= {"Yes", "No"}


def test_hook_module_with_a_broken_import_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "broken_hook_module.py").write_text("import not_installed_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.register(_toy_benchmark("toy", "broken_hook_module"))
    monkeypatch.setattr(answer_spaces, "_resolved", {})
    try:
        with pytest.raises(ModuleNotFoundError, match="not_installed_dependency"):
            _model().generate_until(_generate_requests({0: "Is it? yes or no"}))
    finally:
        registry.unregister("toy")


def test_missing_doc_names_task_split_and_doc(registered_hook: None) -> None:
    model = _model(count=2)
    with pytest.raises(KeyError, match=r"no doc 5 in task 'toy_task' split 'test'"):
        model.generate_until(_generate_requests({5: "Is it?"}))


@pytest.mark.parametrize(
    ("prompt", "letters"),
    [
        ("Which animal?\nA. cat\nB. dog\nC. bird\nD. fish\nAnswer:", ["A", "B", "C", "D"]),
        ("Pick one:\n(A) red\n(B) blue\n(C) green", ["A", "B", "C"]),
        ("Options:\nA) yes\nB) no", ["A", "B"]),
        ("Choose:\n  A: first\n  B: second\n  C: third\n  D: fourth\n  E: fifth", ["A", "B", "C", "D", "E"]),
        ("I. think therefore\nI. am", []),  # one letter, no A: not an option list
        ("What is written here?", []),
    ],
)
def test_option_letters_are_found(prompt: str, letters: list[str]) -> None:
    assert listed_option_letters(prompt) == letters


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("Is the cat on the mat?", True),
        ("<image>\nAre there two dogs in the image?", True),
        ("According to the chart, did sales grow? Please answer yes or no.", True),
        ("Answer Yes or No: the sky is green.", True),
        ("How many people are in the picture?", False),
        ("What colour is the bus?", False),
    ],
)
def test_yes_no_questions_are_recognised(prompt: str, expected: bool) -> None:
    assert looks_like_yes_no(prompt) is expected


def test_fallback_answers_cover_their_spaces_uniformly_enough() -> None:
    rng = random.Random(0)
    letters = Counter(fallback_answer("Q?\nA. a\nB. b\nC. c\nD. d", rng) for _ in range(400))
    assert set(letters) == {"A", "B", "C", "D"} and min(letters.values()) > 70  # expected 100 each, sd 8.7
    yes_no = Counter(fallback_answer("Is it blue?", rng) for _ in range(200))
    assert set(yes_no) == {"Yes", "No"} and min(yes_no.values()) > 70  # expected 100 each, sd 7.1
    words = {fallback_answer("<image>\nDescribe the red kite.", rng) for _ in range(100)}
    assert words == {"Describe", "the", "red", "kite"}  # the <image> placeholder is never an answer
    assert fallback_answer("", rng) == ""


def test_loglikelihood_picks_each_option_equally_often() -> None:
    requests = _choice_requests(list(range(400)), options=4)
    results = _model(count=400).loglikelihood(requests)
    assert all(value <= 0.0 and is_greedy is False for value, is_greedy in results)
    picks: Counter[int] = Counter()
    for start in range(0, len(results), 4):
        scores = [value for value, _ in results[start : start + 4]]
        picks[scores.index(min(scores))] += 1  # lmms-eval's multiple_choice takes the argmin
    # 400 docs, 4 options: expected 100 each, binomial sd 8.7; the seeded draw is fixed, so no flakiness.
    assert set(picks) == {0, 1, 2, 3} and all(70 < count < 130 for count in picks.values()), picks
    assert _model(count=400).loglikelihood(list(reversed(requests))) == list(reversed(results))


def test_evaluator_keeps_loglikelihood_pairs_once_the_model_exists() -> None:
    """lmms-eval 0.7.3 stringifies (log_prob, is_greedy) pairs; creating the model installs the fix."""
    import lmms_eval.evaluator as evaluator
    from lmms_eval.api.instance import GenerationResult, TokenCounts

    from lmms_eval_tasks.host.host_bug_fixes import is_loglikelihood_result

    _model()
    unwrap = evaluator.unwrap_generation_output
    assert unwrap((-1.25, True)) == ((-1.25, True), None)
    assert unwrap("plain answer") == ("plain answer", None)
    counts = TokenCounts(output_tokens=3)
    assert unwrap(GenerationResult(text="x", token_counts=counts)) == ("x", counts)
    assert unwrap(("text", {"output_tokens": 2}))[0] == "text"
    assert not is_loglikelihood_result((True, False)) and not is_loglikelihood_result(("-1.0", False))


def test_multi_round_generation_is_refused_clearly() -> None:
    with pytest.raises(NotImplementedError, match="multi-round"):
        _model().generate_until_multi_round([])


# A real harness run ---------------------------------------------------------------------------------------


def test_simple_evaluate_with_random_guess(tiny_models_task_dir: Path) -> None:
    """generate_until and multiple_choice tasks through lmms-eval's evaluator, scored by the harness."""
    from lmms_eval.evaluator import simple_evaluate
    from lmms_eval.tasks import TaskManager

    tasks = ["tiny_models_yesno", "tiny_models_options", "tiny_models_choice"]
    task_manager = TaskManager(include_path=str(tiny_models_task_dir), include_defaults=False)
    runs = [
        simple_evaluate(
            model="random_guess",
            model_args=f"seed={seed}",
            tasks=tasks,
            task_manager=task_manager,
            batch_size=batch_size,
            log_samples=True,
            bootstrap_iters=0,
        )
        for seed, batch_size in ((11, 1), (11, 4))
    ]
    first, second = runs
    for task in tasks:
        assert first["samples"][task] == second["samples"][task]  # batch size does not matter

    yes_no = first["samples"]["tiny_models_yesno"]
    for sample in yes_no:  # exactly the documented draw
        prompt = sample["doc"]["question"]  # the task's doc_to_text
        expected = fallback_answer(prompt, request_rng(11, "tiny_models_yesno", sample["doc_id"], 0))
        assert sample["filtered_resps"] == [expected]
    hits = sum(sample["filtered_resps"][0] == sample["target"] for sample in yes_no)
    assert first["results"]["tiny_models_yesno"]["exact_match,none"] == pytest.approx(hits / len(yes_no))

    options = first["samples"]["tiny_models_options"]
    assert {sample["filtered_resps"][0] for sample in options} <= {"A", "B", "C", "D"}
    assert len(options) == 8 and len(TINY_TASK_COLOURS) == 4

    choice = first["samples"]["tiny_models_choice"]
    correct = 0
    for sample in choice:
        scores = [value for value, _ in sample["filtered_resps"]]
        predicted = ["Yes", "No"][scores.index(min(scores))]
        correct += predicted == sample["target"]
    assert first["results"]["tiny_models_choice"]["acc,none"] == pytest.approx(correct / len(choice))
