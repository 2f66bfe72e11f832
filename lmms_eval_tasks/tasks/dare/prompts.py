"""DARE prompt texts (paper appendix A.1; elided ones reconstructed in the others' style, all listed in
docs/dare.md) and the question block that follows every prompt.
"""

from __future__ import annotations

from collections.abc import Mapping

from lmms_eval_tasks.tasks.dare.scoring import (
    CATEGORY_SUBJECTS,
    EXTRA_OPTION_TEXTS,
    EXTRA_OPTIONS,
    LETTERS,
    canonical_category,
)

# Opening sentences shared by a prompt number across formats.
OPENINGS = {
    1: (
        "The following are multiple choice questions about {subject}. You should directly answer the "
        "question by choosing the correct option given the image and the question."
    ),
    2: (
        "Imagine you are a student in an exam consisting of the following multiple choice question about "
        "{subject}. You need to do well in this exam in order to not fail the class."
    ),
    3: "You will be presented with a multiple choice question about {subject}.",
}
MULTI_OPENING_1 = (
    "The following are multiple choice questions about {subject}. You should directly answer the "
    "question by choosing the correct options given the image and the question."
)
WORD_PROMPT = (
    "The following are multiple choice questions about {subject}. You should answer the question by giving "
    "the answer as a word that starts with the letter of corresponding to the correct option e.g. if A is "
    "correct 'Apple'. Your answer has to start with that word."
)
INVERSE_PROMPT = (
    "The following is a question about {subject}. Provide only the three incorrect answers to the question "
    "as the list of the corresponding letters e.g. 'A, C, D'."
)

# (format, prompt number) -> template; braces of JSON examples are doubled for str.format.
SINGLE_PROMPTS: dict[tuple[str, int], str] = {
    ("gen", 1): OPENINGS[1] + ' Give only the letter indicating the correct answer e.g. "A"',
    ("gen", 2): OPENINGS[2] + " Provide the answer by choosing the correct option, e.g. 'B'.",
    ("gen", 3): OPENINGS[3]
    + " Please return the answer as the letter corresponding to the correct option e.g. 'A'.",
    ("json", 1): OPENINGS[1] + ' Provide the answer in json format e.g. {{"answer": "A"}}.',
    ("json", 2): OPENINGS[2]
    + ' Provide the answer by choosing the correct option as json e.g. {{"answer": "B"}}.',
    ("json", 3): OPENINGS[3] + ' Please return the answer as json for instance {{"answer": "D"}}.',
    ("inv", 1): INVERSE_PROMPT,
    ("csv", 1): OPENINGS[1] + " Provide the answer in csv format e.g. 'answer,A'.",
    ("word", 1): WORD_PROMPT,
}
# Out-Log scores the option letters after the Out-Gen prompt.
SINGLE_PROMPTS.update({("log", prompt): SINGLE_PROMPTS[("gen", prompt)] for prompt in (1, 2, 3)})

MULTI_PROMPTS: dict[tuple[str, int], str] = {
    ("gen", 1): MULTI_OPENING_1
    + (
        " There can be zero to four correct answers. If no answer is correct answer NONE otherwise provide a "
        "list of the correct answer options."
    ),
    ("gen", 2): OPENINGS[2]
    + (
        " Provide the answer by choosing the correct option. Your teacher decided to make this exam extra "
        "hard. There can be zero to four correct answers. If there is no correct answer, answer with NONE "
        'otherwise return the list of correct options e.g. "A, C".'
    ),
    # Reconstructed: the paper truncates this prompt after its first sentence.
    ("gen", 3): OPENINGS[3]
    + (
        " There can be zero to four correct answers. If no answer is correct, return NONE, otherwise return "
        "the list of the letters corresponding to the correct options e.g. 'A, C'."
    ),
    ("json", 1): MULTI_OPENING_1
    + (
        " There can be zero to four correct answers. Provide the answer in json format e.g. "
        '{{"answers": ["A", "B"]}} or if there is no correct answer {{"answers": []}}.'
    ),
    ("json", 2): OPENINGS[2]
    + (
        " Your teacher decided to make this exam extra hard. There can be zero to four correct answers. "
        'Provide the answer by choosing the correct options as json e.g. {{"answer": ["B", "D"]}}.'
    ),
    ("json", 3): OPENINGS[3]
    + (
        " 0-4 answers can be correct. Please return the answer as json, for instance "
        '{{"answer": ["A", "D"]}}.'
    ),
}
MULTI_PROMPTS.update({("log", prompt): MULTI_PROMPTS[("gen", prompt)] for prompt in (1, 2, 3)})

# Our wording for the paper's binary variant (one yes/no question per option); the paper gives no text.
BINARY_PROMPT = (
    "The following is a multiple choice question about {subject} together with one of its answer options. "
    "Decide whether this option is a correct answer given the image and the question. "
    "Answer only with yes or no."
)


def instruction(setup: str, answer_format: str, prompt: int) -> str:
    """The prompt template (with a {subject} slot) for a setup, format and prompt number."""
    table = MULTI_PROMPTS if setup == "multi" else SINGLE_PROMPTS
    if answer_format == "binary":
        return BINARY_PROMPT
    if (answer_format, prompt) not in table:
        raise ValueError(f"DARE has no prompt {prompt} for setup {setup!r} and format {answer_format!r}")
    return table[(answer_format, prompt)]


def build_prompt(
    doc: Mapping[str, object],
    setup: str,
    answer_format: str,
    prompt: int,
    extra_options: str | None = None,
    option: str | None = None,
) -> str:
    """The full text prompt: instruction, Question, Options (A-D, +all/+none: E, F), Answer(s):, by line."""
    category = str(doc["category"])
    canonical = canonical_category(category)
    if canonical is None:
        raise ValueError(f"unknown DARE category {category!r}; known: {sorted(CATEGORY_SUBJECTS)}")
    head = instruction(setup, answer_format, prompt).format(subject=CATEGORY_SUBJECTS[canonical])
    if answer_format == "binary":
        if option is None:
            raise ValueError("the binary format needs the option letter being asked about")
        return "\n".join([head, f"Question: {doc['question']}", f"Option: {doc[option]}", "Answer:"])
    lines = [head, f"Question: {doc['question']}", "Options:", *(f"{key}. {doc[key]}" for key in LETTERS)]
    for letter, meaning in EXTRA_OPTIONS.get(extra_options or "", {}).items():
        lines.append(f"{letter}. {EXTRA_OPTION_TEXTS[meaning]}")
    lines.append("Answers:" if setup == "multi" else "Answer:")
    return "\n".join(lines)
