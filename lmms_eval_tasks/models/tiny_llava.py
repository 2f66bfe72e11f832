"""A tiny, randomly initialised LLaVA built offline (``lmms-eval-tasks build-tiny-llava``), so demos and
tests drive the host's real ``llava_hf``; deterministic nonsense per seed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from loguru import logger

# Bump whenever anything below changes what gets written: it invalidates cached builds.
RECIPE_VERSION = 1
MANIFEST_NAME = "tiny_llava_manifest.json"
IMAGE_SIZE = 32
PATCH_SIZE = 8
VOCAB_SIZE = 512
HIDDEN_SIZE = 32
IMAGE_TOKEN = "<image>"
# (start after N new tokens, growth factor per token) of the end-of-answer boost, see _build_into.
EOS_BOOST = (8, 2.0)
SPECIAL_TOKENS = ("<unk>", "<s>", "</s>", "<pad>", IMAGE_TOKEN)

# Both message shapes the host sends (string content: simple ``llava_hf``; typed parts: chat ``llava_hf``),
# with ``<image>`` placeholders the processor expands to one token per image patch.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{ message['role'] | upper }}: "
    "{%- if message['content'] is string -%}{{ ' ' + message['content'] }}"
    "{%- else -%}"
    "{%- for part in message['content'] -%}"
    "{%- if part['type'] == 'image' -%}{{ ' <image>\\n' }}"
    "{%- elif part['type'] == 'text' -%}{{ ' ' + part['text'] }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- endif -%}"
    "{%- if message['role'] == 'assistant' -%}{{ eos_token }}{%- endif -%}"
    "{{ '\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ 'ASSISTANT:' }}{%- endif -%}"
)

# A fixed in-code corpus for the BPE merges: words the pack's benchmarks use, so prompts tokenize compactly.
_TRAINING_TEXT = [
    "USER: ASSISTANT: SYSTEM: <image>",
    "Answer the question using a single word or phrase.",
    "Answer with the option's letter from the given choices directly.",
    "Is there a cat in the image? Yes No yes no",
    "Please answer yes or no. According to the image, is the chart showing an increase?",
    "Which of the following options is correct? A. B. C. D. E. (A) (B) (C) (D)",
    "How many objects are in the picture? 0 1 2 3 4 5 6 7 8 9 10",
    "What color is the car? red green blue yellow black white",
    "The quick brown fox jumps over the lazy dog. What is written on the sign?",
    "Describe the scene in the image. The image shows a person, a chart, a table and some text.",
    "Question: Options: Answer: Context: Hint: Category: count order trick identity attribute",
]


def _file_sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _read_manifest(directory: Path) -> dict[str, Any] | None:
    try:
        return json.loads((directory / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_complete_build(directory: str | os.PathLike[str], seed: int = 0) -> bool:
    """True when ``directory`` holds a finished build of this recipe and seed with all files intact."""
    directory = Path(directory)
    manifest = _read_manifest(directory)
    if not manifest or manifest.get("recipe_version") != RECIPE_VERSION or manifest.get("seed") != seed:
        return False
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return False
    paths = {directory / name: digest for name, digest in files.items()}
    return all(path.is_file() and _file_sha256(path) == digest for path, digest in paths.items())


def _train_tokenizer() -> Any:
    """A byte-level BPE tokenizer trained in memory on the fixed corpus; adds ``<s>`` like Llama."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_TRAINING_TEXT, trainer=trainer)
    bos_id = tokenizer.token_to_id("<s>")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos_id)]
    )
    return tokenizer


def _build_into(directory: Path, seed: int) -> None:
    """Write tokenizer, processor and model files for ``seed`` into the empty folder ``directory``."""
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=_train_tokenizer(),
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        extra_special_tokens={"image_token": IMAGE_TOKEN},
        model_max_length=4096,
        padding_side="left",
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    image_processor = CLIPImageProcessor(
        size={"shortest_edge": IMAGE_SIZE},
        crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH_SIZE,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,  # CLIP's CLS token, dropped again by the "default" strategy
        chat_template=CHAT_TEMPLATE,
        image_token=IMAGE_TOKEN,
    )

    vision_config = CLIPVisionConfig(
        hidden_size=HIDDEN_SIZE,
        intermediate_size=2 * HIDDEN_SIZE,
        projection_dim=HIDDEN_SIZE,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=IMAGE_SIZE,
        patch_size=PATCH_SIZE,
    )
    text_config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=HIDDEN_SIZE,
        intermediate_size=2 * HIDDEN_SIZE,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    config = LlavaConfig(
        vision_config=vision_config,
        text_config=text_config,
        image_token_index=tokenizer.convert_tokens_to_ids(IMAGE_TOKEN),
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
        projector_hidden_act="gelu",
        image_seq_length=(IMAGE_SIZE // PATCH_SIZE) ** 2,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    # Random weights almost never pick </s> (llava_hf's 1024 new tokens: ~8 s an answer on CPU); boosting it
    # ends every answer within ~8-20 tokens, and llava_hf keeps this generation_config setting.
    model.generation_config.exponential_decay_length_penalty = EOS_BOOST
    model.save_pretrained(directory)
    processor.save_pretrained(directory)


def build_tiny_llava(output_dir: str | os.PathLike[str], seed: int = 0) -> Path:
    """Build the tiny LLaVA into ``output_dir`` (reused when already built with this recipe and seed)."""
    output_dir = Path(output_dir).resolve()
    if is_complete_build(output_dir, seed):
        logger.info(f"Tiny LLaVA already built in {output_dir} (seed {seed}); reusing it")
        return output_dir
    if output_dir.exists() and any(output_dir.iterdir()) and _read_manifest(output_dir) is None:
        raise FileExistsError(
            f"{output_dir} is not empty and has no {MANIFEST_NAME}; not overwriting it with a tiny LLaVA"
        )
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{output_dir.name}.building-", dir=output_dir.parent))
    try:
        logger.info(f"Building tiny LLaVA (recipe {RECIPE_VERSION}, seed {seed}) into {output_dir}")
        from transformers.utils import logging as transformers_logging

        verbosity = transformers_logging.get_verbosity()
        # quiet "CLIPImageProcessor requires torchvision; falling back to the PIL backend" (expected here)
        transformers_logging.set_verbosity_error()
        try:
            _build_into(staging, seed)
        finally:
            transformers_logging.set_verbosity(verbosity)
        import tokenizers
        import torch
        import transformers

        files = {path.name: _file_sha256(path) for path in sorted(staging.iterdir()) if path.is_file()}
        manifest = {
            "recipe_version": RECIPE_VERSION,
            "seed": seed,
            "files": files,
            "versions": {module.__name__: module.__version__ for module in (torch, transformers, tokenizers)},
            "model_args": f"pretrained={output_dir},device=cpu,device_map=cpu",
        }
        (staging / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        staging.chmod(0o755)  # mkdtemp makes it private; share it like any model folder
        for path in staging.iterdir():
            path.chmod(0o644)
        # Swap the finished build in; a previous build of another recipe/seed is replaced.
        if output_dir.exists():
            if is_complete_build(output_dir, seed):  # another process finished the same build meanwhile
                return output_dir
            shutil.rmtree(output_dir)
        try:
            staging.rename(output_dir)
        except OSError:
            if not is_complete_build(output_dir, seed):
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return output_dir
