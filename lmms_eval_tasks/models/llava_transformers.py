"""The pack's LLaVA on transformers: what ``--model llava`` runs when the original LLaVA code cannot import
(the host wrapper's arguments, prompt format and square padding; docs/models.md)."""

from __future__ import annotations

import os
from typing import Any

from lmms_eval.api.instance import Instance
from lmms_eval.models.simple.llava_hf import LlavaHf
from loguru import logger

from lmms_eval_tasks.host import substitution

IMAGE_TOKEN = "<image>"


def conversation_template(conv_template: str) -> str:
    """A chat template rendering the original LLaVA conversation ``conv_template`` (separator style TWO)."""
    system = substitution.CONVERSATION_SYSTEMS[conv_template]
    return (
        f"{system}"
        "{%- for message in messages -%}"
        "{%- if message['role'] == 'user' -%}{{ ' USER: ' + message['content'] }}"
        "{%- else -%}{{ ' ASSISTANT: ' + message['content'] + eos_token }}{%- endif -%}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{ ' ASSISTANT:' }}{%- endif -%}"
    )


def pad_to_square(image: Any, background: tuple[int, ...]) -> Any:
    """``image`` centred on a square canvas of ``background`` colour (unchanged when already square)."""
    from PIL import Image

    width, height = image.size
    if width == height:
        return image
    side = max(width, height)
    canvas = Image.new(image.mode, (side, side), background if image.mode == "RGB" else background[0])
    canvas.paste(image, ((side - width) // 2, (side - height) // 2))
    return canvas


class _OriginalPreprocessing:
    """Delegates to a transformers processor: pads images to a square first; no empty image lists."""

    def __init__(self, processor: Any, pad: bool) -> None:
        self._processor = processor
        self._pad = pad
        mean = getattr(getattr(processor, "image_processor", None), "image_mean", None) or (0.5, 0.5, 0.5)
        self._background = tuple(int(value * 255) for value in mean)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        images = kwargs.get("images")
        if images is not None and len(images) == 0:
            kwargs["images"] = None
        elif images is not None and self._pad:
            kwargs["images"] = [pad_to_square(image.convert("RGB"), self._background) for image in images]
        return self._processor(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._processor, name)


def _process_layout(accelerator: Any) -> tuple[int, int, int]:
    """(rank, world size, local rank) of this process, as the host's evaluator shards requests."""
    import torch.distributed as distributed

    if distributed.is_available() and distributed.is_initialized():
        rank, world_size = distributed.get_rank(), distributed.get_world_size()
    else:
        rank = int(os.environ.get("RANK", accelerator.process_index))
        world_size = int(os.environ.get("WORLD_SIZE", accelerator.num_processes))
    return rank, world_size, int(os.environ.get("LOCAL_RANK", accelerator.local_process_index))


class LlavaTransformers(LlavaHf):
    """LLaVA-1.5 / 1.6 on transformers with the host ``llava`` wrapper's arguments and prompt format."""

    is_simple = True

    def __init__(
        self,
        pretrained: str = substitution.DEFAULT_ORIGINAL_LLAVA,
        truncation: bool | None = True,
        device: str | None = None,
        batch_size: int | str = 1,
        model_name: str | None = None,
        attn_implementation: str | None = "sdpa",
        device_map: str | None = None,
        conv_template: str = substitution.DEFAULT_CONV_TEMPLATE,
        use_cache: bool = True,
        tie_weights: bool = True,
        truncate_context: bool = False,
        **kwargs: Any,
    ) -> None:
        """Load the transformers conversion of ``pretrained``; arguments as the host's ``llava`` wrapper."""
        import torch
        from accelerate import Accelerator
        from lmms_eval.api.model import lmms
        from transformers import (
            AutoConfig,
            AutoProcessor,
            LlavaForConditionalGeneration,
            LlavaNextForConditionalGeneration,
        )

        lmms.__init__(self)
        substitution.check_model_args({**kwargs, "conv_template": conv_template, "pretrained": pretrained})
        if not str(batch_size).isdigit() or int(batch_size) < 1:
            raise substitution.SubstitutionError(
                f"--model llava: batch_size={batch_size} is not supported by the pack's LLaVA model: "
                "give a whole number >= 1 (`auto` is not supported)"
            )
        checkpoint = substitution.resolve_checkpoint(pretrained)
        substitution.record_checkpoint(pretrained, checkpoint)
        accelerator = Accelerator()
        self.accelerator = accelerator
        rank, world_size, local_rank = _process_layout(accelerator)
        if world_size > 1:
            on_gpu = torch.cuda.is_available() and (device is None or not str(device).startswith("cpu"))
            device = f"cuda:{local_rank}" if on_gpu else "cpu"
            device_map = device
        device = device or ("cuda:0" if torch.cuda.is_available() else "cpu")
        device_map = device_map or device
        self._device = torch.device(device if device_map == "auto" else device_map)
        self.device_map = device_map
        config = AutoConfig.from_pretrained(checkpoint)
        model_classes = {
            "llava": LlavaForConditionalGeneration,
            "llava_next": LlavaNextForConditionalGeneration,
        }
        model_type = getattr(config, "model_type", "")
        if model_type not in model_classes:
            raise substitution.SubstitutionError(
                f"--model llava: {checkpoint} is a {model_type or 'non-LLaVA'} checkpoint; the pack's LLaVA "
                f"model loads model types {', '.join(model_classes)}: pass a LLaVA-1.5/1.6 checkpoint"
            )
        dtype = torch.float16 if self._device.type == "cuda" else torch.float32
        load_map = device_map if device_map == "auto" else None  # else moved to the device below
        self._model = model_classes[model_type].from_pretrained(
            checkpoint, dtype=dtype, device_map=load_map, attn_implementation=attn_implementation
        )
        self._model.eval()
        if load_map is None:
            self._model.to(self._device)
        if tie_weights:
            self._model.tie_weights()
        processor = AutoProcessor.from_pretrained(checkpoint)
        processor.tokenizer.padding_side = "left"
        image_processor = getattr(processor, "image_processor", None)
        already_pads = bool(getattr(image_processor, "do_pad", False))
        self._image_processor = _OriginalPreprocessing(
            processor, pad=model_type == "llava" and not already_pads
        )
        self._tokenizer = processor.tokenizer
        self._config = self._model.config
        self._max_length = getattr(self._config.text_config, "max_position_embeddings", 2048)
        self.pretrained = checkpoint
        self.asked_pretrained = pretrained
        self.batch_size_per_gpu = int(batch_size)
        self.conv_template = conv_template
        self.chat_template = conversation_template(conv_template)
        self.use_cache = use_cache
        self.truncation, self.truncate_context, self.model_name = truncation, truncate_context, model_name
        self.max_frames_num = 0
        self._rank, self._world_size = rank, world_size
        logger.info(
            f"llava_transformers: {pretrained} -> {checkpoint} ({model_type}, {dtype}, {self._device}, "
            f"process {self._rank + 1}/{self._world_size})"
        )

    @property
    def model(self) -> Any:
        """The transformers model."""
        return self._model

    def _prompt(self, context: str, images: int, continuation: str | None = None) -> str:
        """The original conversation text: ``<image>`` lines, the question, the answer when given."""
        if images and IMAGE_TOKEN not in context:
            context = " ".join([IMAGE_TOKEN] * images) + "\n" + context
        messages = [{"role": "user", "content": context}]
        if continuation is not None:
            messages.append({"role": "assistant", "content": continuation})
        return self.tokenizer.apply_chat_template(
            messages,
            chat_template=self.chat_template,
            tokenize=False,
            add_generation_prompt=continuation is None,
        )

    def loglikelihood(self, requests: list[Instance]) -> list[tuple[float, bool]]:
        """Mean loss of each continuation and whether it is the greedy one (the host's llava_hf convention,
        docs/models.md); the context is tokenized with its images, so the loss mask lines up with them."""
        import torch
        from tqdm import tqdm

        results: list[tuple[float, bool]] = []
        for context, doc_to_target, doc_to_visual, doc_id, task, split in tqdm(
            [request.args for request in requests], disable=self.rank != 0, desc="Model Responding"
        ):
            doc = self.task_dict[task][split][doc_id]
            continuation = doc_to_target if isinstance(doc_to_target, str) else doc_to_target(doc)
            visuals = self.flatten([doc_to_visual(doc)])
            prompt = self._prompt(context, len(visuals))
            full_text = self._prompt(context, len(visuals), continuation)
            images = visuals or None
            inputs = self._image_processor(text=[full_text], images=images, return_tensors="pt")
            inputs = inputs.to(self._device, self.model.dtype)
            prompt_ids = self._image_processor(text=[prompt], images=images, return_tensors="pt")["input_ids"]
            prompt_length = prompt_ids.shape[1]
            input_ids = inputs["input_ids"]
            labels = input_ids.clone()
            labels[:, :prompt_length] = -100
            with torch.inference_mode():
                outputs = self.model(**inputs, labels=labels)
            predicted = outputs.logits[:, prompt_length - 1 : input_ids.shape[1] - 1].argmax(dim=-1)
            is_greedy = bool((predicted == input_ids[:, prompt_length:]).all())
            results.append((float(outputs.loss.item()), is_greedy))
        return results

    def generate_until(self, requests: list[Instance]) -> list[str]:
        """Greedy (or sampled) answers cut at ``until``; with ``batch_size`` > 1 requests of equal settings
        run together, left-padded, each answer the one its request gets alone."""
        import json

        from tqdm import tqdm

        answers: list[str | None] = [None] * len(requests)
        groups: dict[str, list[int]] = {}
        for index, request in enumerate(requests):  # one generate call needs one set of settings
            settings = json.dumps(request.args[1] or {}, sort_keys=True, default=str)
            groups.setdefault(settings, []).append(index)
        progress = tqdm(total=len(requests), disable=self.rank != 0, desc="Model Responding")
        size = max(1, int(self.batch_size_per_gpu))
        for indices in groups.values():
            for start in range(0, len(indices), size):
                batch = indices[start : start + size]
                for index, answer in zip(batch, self._generate([requests[i] for i in batch]), strict=True):
                    answers[index] = answer
                progress.update(len(batch))
        progress.close()
        return [answer or "" for answer in answers]

    def _generate(self, requests: list[Instance]) -> list[str]:
        """One ``generate`` call for requests that share their generation settings."""
        import torch

        gen_kwargs = dict(requests[0].args[1] or {})
        until = gen_kwargs.pop("until", None) or []
        until = [until] if isinstance(until, str) else list(until)
        texts, images = [], []
        for context, _, doc_to_visual, doc_id, task, split in (request.args for request in requests):
            visuals = self.flatten([doc_to_visual(self.task_dict[task][split][doc_id])])
            texts.append(self._prompt(context, len(visuals)))
            images.extend(visuals)
        inputs = self._image_processor(text=texts, images=images or None, return_tensors="pt", padding=True)
        inputs = inputs.to(self._device, self.model.dtype)
        temperature = float(gen_kwargs.get("temperature", 0) or 0)
        options: dict[str, Any] = {
            "do_sample": temperature > 0,
            "num_beams": int(gen_kwargs.get("num_beams", 1)),
        }
        if temperature > 0:
            options.update(temperature=temperature, top_p=gen_kwargs.get("top_p"))
        with torch.inference_mode():
            output = self.model.generate(
                **inputs,
                max_new_tokens=int(gen_kwargs.get("max_new_tokens", 1024)),
                use_cache=self.use_cache,
                pad_token_id=self.tokenizer.pad_token_id or self.eot_token_id,
                eos_token_id=self.eot_token_id,
                **options,
            )
        answers = []
        for (context, *_), row in zip((request.args for request in requests), output, strict=True):
            answer = self.tokenizer.decode(row[inputs["input_ids"].shape[1] :], skip_special_tokens=True)
            for stop in until:
                if stop:
                    answer = answer.split(stop)[0]
            answers.append(answer)
            self.cache_hook.add_partial("generate_until", (context, gen_kwargs), answer)
        return answers

    def flatten(self, input: Any) -> list[Any]:
        """The images of a list of ``doc_to_visual`` results (None and empty entries dropped)."""
        return [item for group in input if group for item in group if item is not None]
