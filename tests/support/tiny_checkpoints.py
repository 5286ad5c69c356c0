"""Tiny random-weight checkpoints of every family ``splice run --backend transformers``
serves, made here with nothing downloaded: transformers' own config classes (one layer,
32 wide, a few hundred thousand parameters), a byte-level BPE tokenizer trained on a few
strings with the family's special tokens, and the family's real processor classes. Each
is saved to ``OUT/<family>/`` and loaded back by path, as a user's checkpoint would be.

Every checkpoint's ``generation_config`` forces one answer (``FORCED``) through
``sequence_bias``, so its runs are scored exactly as ``splice score`` scores that text.
The vision towers take small frames (28 or 56 px tiles) except Qwen's, which keeps the
paper's frames as they are (its processor resizes by pixel count, not to a fixed tile).

Run in ``.venv-models``: ``python tests/support/tiny_checkpoints.py OUT`` prints a JSON line
{family: {"path", "params"}}.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import transformers as tf
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

FORCED = "<order>Video 2, Video 1</order>"
WIDTH = 32
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for c in m['content'] %}{% if c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SMOL_CHAT = (
    "<|im_start|>{% for m in messages %}{{ m['role'] | capitalize }}:"
    "{% for c in m['content'] %}{% if c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)
CORPUS = [
    FORCED,
    "A video has been split into clips, shuffled randomly. Your task is to analyze each "
    "clip deeply to reorder them into the correct temporal sequence. Focus on: Visual "
    "content, Temporal logic, Annotations. Provide the reordered sequence strictly within "
    "order tags in this format: <order>Video X, Video Y, Video Z</order>.",
    "Video 1: add water Video 2: cut the onion Video 3 Video 4 Video 5 Video 6 Video 7",
]


def tokenizer_with(specials: list[str], extra: dict[str, str] | None = None):
    """A byte-level BPE trained on CORPUS, with ``specials`` as single tokens."""
    base = Tokenizer(models.BPE())
    base.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    base.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>", *specials],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    base.train_from_iterator(CORPUS, trainer)
    return tf.PreTrainedTokenizerFast(
        tokenizer_object=base,
        eos_token="<|im_end|>" if "<|im_end|>" in specials else "<end_of_utterance>",
        pad_token="<|endoftext|>",
        extra_special_tokens=extra or {},
    )


def text_config(cls, tok, **extra):
    return cls(
        vocab_size=len(tok),
        hidden_size=WIDTH,
        intermediate_size=2 * WIDTH,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=65536,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        bos_token_id=None,
        **extra,
    )


def force(model, tok) -> None:
    """``generation_config`` biased so greedy decoding emits FORCED then end of turn: each
    prefix of the answer favours its next token, longer prefixes more (so a token that
    occurs twice, like "Video", is followed by what follows it here)."""
    ids = tok(FORCED, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    bias = [[ids[: i + 1], 100.0 * (i + 1)] for i in range(len(ids))]
    model.generation_config = tf.GenerationConfig(
        sequence_bias=bias,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        do_sample=False,
        max_new_tokens=len(ids) + 4,
    )


QWEN_SPECIALS = [
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]


def qwen(version: str):
    tok = tokenizer_with(QWEN_SPECIALS)
    ids = {
        "image_token_id": tok.convert_tokens_to_ids("<|image_pad|>"),
        "video_token_id": tok.convert_tokens_to_ids("<|video_pad|>"),
        "vision_start_token_id": tok.convert_tokens_to_ids("<|vision_start|>"),
        "vision_end_token_id": tok.convert_tokens_to_ids("<|vision_end|>"),
    }
    rope = {"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0}
    if version == "qwen2_vl":
        text = text_config(tf.Qwen2VLTextConfig, tok, rope_parameters=rope)
        vision = {"depth": 1, "embed_dim": WIDTH, "hidden_size": WIDTH, "num_heads": 2}
        config = tf.Qwen2VLConfig(text_config=text.to_dict(), vision_config=vision, **ids)
        model = tf.Qwen2VLForConditionalGeneration(config)
        processor = tf.Qwen2VLProcessor(
            image_processor=tf.Qwen2VLImageProcessor(),
            tokenizer=tok,
            video_processor=tf.Qwen2VLVideoProcessor(),
            chat_template=CHATML,
        )
    else:
        text = text_config(tf.Qwen2_5_VLTextConfig, tok, rope_parameters=rope)
        vision = {
            "depth": 1,
            "hidden_size": WIDTH,
            "intermediate_size": 2 * WIDTH,
            "num_heads": 2,
            "out_hidden_size": WIDTH,
            "fullatt_block_indexes": [0],
        }
        config = tf.Qwen2_5_VLConfig(text_config=text.to_dict(), vision_config=vision, **ids)
        model = tf.Qwen2_5_VLForConditionalGeneration(config)
        processor = tf.Qwen2_5_VLProcessor(
            image_processor=tf.Qwen2VLImageProcessor(),
            tokenizer=tok,
            video_processor=tf.Qwen2VLVideoProcessor(),
            chat_template=CHATML,
        )
    return model, processor, tok


def internvl():
    extra = {
        "start_image_token": "<img>",
        "end_image_token": "</img>",
        "context_image_token": "<IMG_CONTEXT>",
        "video_token": "<video>",
    }
    tok = tokenizer_with(["<|im_start|>", "<|im_end|>", *extra.values()], extra)
    vision = tf.InternVLVisionConfig(
        hidden_size=WIDTH,
        intermediate_size=2 * WIDTH,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=[56, 56],
        patch_size=[14, 14],
    )
    config = tf.InternVLConfig(
        vision_config=vision.to_dict(),
        text_config=text_config(tf.Qwen2Config, tok).to_dict(),
        image_token_id=tok.convert_tokens_to_ids("<IMG_CONTEXT>"),
        downsample_ratio=0.5,
        vision_feature_layer=-1,
    )
    model = tf.InternVLForConditionalGeneration(config)
    size = {"height": 56, "width": 56}
    processor = tf.InternVLProcessor(
        image_processor=tf.GotOcr2ImageProcessor(size=size, crop_to_patches=False),
        tokenizer=tok,
        video_processor=tf.InternVLVideoProcessor(size=size),
        image_seq_length=4,  # (56 / 14)^2 patches, pixel-shuffled by 0.5 each way
        chat_template=CHATML,
    )
    return model, processor, tok


def llava_onevision():
    tok = tokenizer_with(["<|im_start|>", "<|im_end|>", "<image>", "<video>"])
    vision = tf.SiglipVisionConfig(
        hidden_size=WIDTH,
        intermediate_size=2 * WIDTH,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=28,
        patch_size=14,
    )
    config = tf.LlavaOnevisionConfig(
        vision_config=vision.to_dict(),
        text_config=text_config(tf.Qwen2Config, tok).to_dict(),
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        video_token_id=tok.convert_tokens_to_ids("<video>"),
        vision_feature_layer=-1,
        vision_feature_select_strategy="full",
        image_grid_pinpoints=[[28, 28]],
    )
    model = tf.LlavaOnevisionForConditionalGeneration(config)
    size = {"height": 28, "width": 28}
    processor = tf.LlavaOnevisionProcessor(
        image_processor=tf.LlavaOnevisionImageProcessor(size=size, image_grid_pinpoints=[[28, 28]]),
        tokenizer=tok,
        video_processor=tf.LlavaOnevisionVideoProcessor(size=size),
        num_image_tokens=4,  # (28 / 14)^2
        vision_feature_select_strategy="full",
        chat_template=CHATML,
    )
    return model, processor, tok


def smolvlm():
    specials = ["<|im_start|>", "<end_of_utterance>", "<image>", "<fake_token_around_image>"]
    tok = tokenizer_with([*specials, "<global-img>", "<video>"])
    vision = tf.SmolVLMVisionConfig(
        hidden_size=WIDTH,
        intermediate_size=2 * WIDTH,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=28,
        patch_size=14,
    )
    config = tf.SmolVLMConfig(
        vision_config=vision.to_dict(),
        text_config=text_config(tf.LlamaConfig, tok).to_dict(),
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        scale_factor=2,
        pad_token_id=tok.pad_token_id,
    )
    model = tf.SmolVLMForConditionalGeneration(config)
    processor = tf.SmolVLMProcessor(
        image_processor=tf.SmolVLMImageProcessor(
            size={"longest_edge": 28}, max_image_size={"longest_edge": 28}
        ),
        tokenizer=tok,
        video_processor=tf.SmolVLMVideoProcessor(
            size={"longest_edge": 28}, max_image_size={"longest_edge": 28}
        ),
        image_seq_len=1,  # (28 / 14)^2 / scale_factor^2
        chat_template=SMOL_CHAT,
    )
    return model, processor, tok


BUILDERS = {
    "qwen2_vl": lambda: qwen("qwen2_vl"),
    "qwen2_5_vl": lambda: qwen("qwen2_5_vl"),
    "internvl": internvl,
    "llava_onevision": llava_onevision,
    "smolvlm": smolvlm,
}


def build(out: Path, names: list[str]) -> dict[str, dict]:
    torch.manual_seed(0)
    made = {}
    for name in names:
        model, processor, tok = BUILDERS[name]()
        force(model, tok)
        folder = out / name
        model.save_pretrained(folder)
        processor.save_pretrained(folder)
        made[name] = {
            "path": str(folder),
            "params": sum(p.numel() for p in model.parameters()),
        }
    return made


if __name__ == "__main__":
    target = Path(sys.argv[1])
    print(json.dumps(build(target, sys.argv[2:] or list(BUILDERS))))
