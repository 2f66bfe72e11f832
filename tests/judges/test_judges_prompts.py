"""Judge prompt templates: byte-exact copies of the spec files and safe rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmms_eval_tasks.judges.prompts import (
    PROMPTS_DIR,
    available_prompts,
    load_prompt,
    placeholders,
    render_positional,
    render_prompt,
)

SPEC_PROMPTS = Path(__file__).resolve().parents[1] / "data" / "spec" / "prompts"
SHIPPED = [
    "hallusionbench_correctness_judge",
    "hallusionbench_consistency_same_judge",
    "contextual_gpt4_judge",
    "vlmevalkit_yorn_match_prompt",
]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_prompt_is_byte_exact_copy_of_spec(name: str) -> None:
    spec_file = SPEC_PROMPTS / f"{name}.txt"
    assert (PROMPTS_DIR / f"{name}.txt").read_bytes() == spec_file.read_bytes()
    assert load_prompt(name).encode("utf-8") == spec_file.read_bytes()


def test_available_prompts_lists_the_shipped_templates() -> None:
    assert set(SHIPPED) <= set(available_prompts())
    assert placeholders("hallusionbench_correctness_judge") == ["question", "gt_answer_details", "prediction"]
    assert placeholders("hallusionbench_consistency_same_judge") == ["response_current", "response_figure0"]
    assert placeholders("contextual_gpt4_judge") == ["instruction", "groundtruth", "prediction"]


def test_rendered_hallusionbench_correctness_prompt_matches_expected_string() -> None:
    rendered = render_prompt(
        "hallusionbench_correctness_judge",
        question="Is the left line longer than the right line?",
        gt_answer_details="The two lines are the same length.",
        prediction="Yes, the {left} line is longer.",
    )
    expected = (
        "Imagine you are an intelligent teacher. Thoroughly read the question, reference answer and the "
        "prediction answer to ensure a clear understanding of the information provided. Assess the "
        "correctness "
        "of the predictions. If the prediction answer does not conflict with the reference answer, please "
        "generate \u201ccorrect\u201d. If the prediction answer conflict with the reference answer, "
        "please generate "
        "\u201cincorrect\u201d. If the prediction answer is unclear about the answer, please "
        'generate "unclear". '
        "\n\n Question:Is the left line longer than the right line?\nReference answer: The two lines "
        "are the same "
        "length.\nPrediction answer:Yes, the {left} line is longer.\nOutput:"
    )
    assert rendered == expected


def test_rendered_contextual_prompt_matches_expected_string() -> None:
    rendered = render_prompt(
        "contextual_gpt4_judge",
        instruction="What time does the clock show?",
        groundtruth="The clock shows 10:10.",
        prediction="It is ten past ten {prediction}.",
    )
    expected = (
        "You are ImageTaskEvaluatorGPT, an expert language model at judging whether or not a "
        "response adequately "
        "addresses an instruction in the context of an image. More specifically, you will be given the "
        "following:\n\n"
        "1. An instruction: This is a question, an imperative request, or something similar about the image "
        "which requires a response.\n"
        "2. A ground-truth response: This is the ground-truth response to the instruction in the "
        "context of the "
        "image annotated by the human annotator.\n"
        "3. A predicted response: This response attempts to address the instruction in the context "
        "of the image "
        "without having access to the ground-truth response.\n\n"
        "Your job is judge whether the predicted response is correct given the ground-truth response and the "
        "instruction.\n \n"
        "Some things to remember:\n"
        "- Even though you are just a language model, the instructions mostly require an objective "
        "answer i.e., "
        "the ground-truth response and instruction should be sufficient for you to judge the "
        "correctness of the "
        "predicted response. You do not need to have access to the complete image description.\n"
        "- You are capable of judging response quality, accounting for important factors like correctness, "
        "relevance, fluency, specificity, etc. \n"
        '- You think step-by-step, and ultimately respond with your "Judgement: " as "Yes" or "No". '
        'Here, "Yes" '
        'implies that the predicted response is correct according to you, and "No" implies that the '
        "predicted "
        "response is not correct.\n"
        "- Many times the predicted responses provide long explanations for their decision. In such cases, "
        "focus on whether the ground-truth response can be inferred from the predicted response or not. \n\n"
        "Instruction: What time does the clock show?\n"
        "Ground-truth Response: The clock shows 10:10.\n"
        # the prediction's own "{prediction}" is model text: it must not be substituted again
        "Predicted Response: It is ten past ten {prediction}."
    )
    assert rendered == expected


def test_render_positional_fills_vlmevalkit_slots_left_to_right() -> None:
    rendered = render_positional("vlmevalkit_yorn_match_prompt", "Is it red {}", "It is {} red.")
    template = load_prompt("vlmevalkit_yorn_match_prompt")
    head, middle, tail = template.split("{}")
    assert rendered == head + "Is it red {}" + middle + "It is {} red." + tail
    assert rendered.endswith("Question: Is it red {}?\nAnswer: It is {} red.\nYour output: ")


def test_render_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="missing fields \\['prediction'\\]"):
        render_prompt("hallusionbench_correctness_judge", question="q", gt_answer_details="g")
    with pytest.raises(ValueError, match="unknown fields \\['answer'\\]"):
        render_prompt(
            "hallusionbench_correctness_judge",
            question="q",
            gt_answer_details="g",
            prediction="p",
            answer="x",
        )
    with pytest.raises(TypeError, match="'prediction' must be a str"):
        render_prompt(
            "hallusionbench_correctness_judge", question="q", gt_answer_details="g", prediction=None
        )
    with pytest.raises(ValueError, match="2 positional slots, got 1"):
        render_positional("vlmevalkit_yorn_match_prompt", "only one")
    with pytest.raises(FileNotFoundError, match="no judge prompt named 'nope'"):
        load_prompt("nope")
    with pytest.raises(ValueError, match="invalid prompt name"):
        load_prompt("../secrets")
