"""Original LLaVA checkpoint names and their transformers conversions: the facts both the launcher's
model check (``host/patches.py``) and the ``--model llava`` substitution (``host/substitution.py``) use."""

from __future__ import annotations

# The host llava wrapper's default `pretrained` (lmms_eval/models/simple/llava.py in lmms-eval 0.7.3).
DEFAULT_ORIGINAL_LLAVA = "liuhaotian/llava-v1.5-7b"
# Original LLaVA checkpoints -> their transformers conversions on the Hugging Face Hub (docs/models.md).
ORIGINAL_TO_HF_CHECKPOINTS: dict[str, str] = {
    "liuhaotian/llava-v1.5-7b": "llava-hf/llava-1.5-7b-hf",
    "liuhaotian/llava-v1.5-13b": "llava-hf/llava-1.5-13b-hf",
    "liuhaotian/llava-v1.6-vicuna-7b": "llava-hf/llava-v1.6-vicuna-7b-hf",
    "liuhaotian/llava-v1.6-vicuna-13b": "llava-hf/llava-v1.6-vicuna-13b-hf",
    "liuhaotian/llava-v1.6-mistral-7b": "llava-hf/llava-v1.6-mistral-7b-hf",
    "liuhaotian/llava-v1.6-34b": "llava-hf/llava-v1.6-34b-hf",
}
