"""Tiny random-weight checkpoints of the paper's model families, built from transformers'
config classes with a tokenizer trained here and the real processor classes: what lmms-eval's
real model classes load in tests/splice_eval/toolkits/test_lmms_models.py, with nothing
downloaded.

Runs INSIDE ``.venv-lmms`` (it needs torch and transformers):
``python tests/support/tiny_vlms.py OUT`` writes ``OUT/<family>/`` for each family in
``FAMILIES`` and prints ``TINY_VLMS_JSON`` with what it built. Each checkpoint has a few
hundred thousand parameters; its answers are noise, which is all a test of what the model
was *given* needs.

The chat templates are the families' own published templates, cut to what a SPLICE prompt
uses (one user turn of text and videos): where a clip's tokens land is the template's doing,
so a test that reads the placement reads what the real checkpoint would get.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FAMILIES = ("qwen2_vl", "qwen2_5_vl", "internvl", "llava_onevision", "smolvlm")

# Text the byte-level BPE is trained on: the words of SPLICE prompts and answers.
_CORPUS = [
    "You are given several video clips of the steps of one task, shuffled.",
    "Put the clips in chronological order. Answer with <order>Video 2, Video 1</order>.",
    "Video 1 Video 2 Video 3 Video 4 Video 5 Video 6 Video 7: spray towards the fire",
    "the correct order is 3, 1, 2 -> Clip A B C D E F G step frame",
] * 4

# "<|im_end|>" first: the end of sequence is token 0 (see ``_save``).
QWEN_TOKENS = ["<|im_end|>", "<|im_start|>", "<|endoftext|>", "<|vision_start|>"]
QWEN_TOKENS += ["<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
INTERNVL_NAMED = {
    "start_image_token": "<img>",
    "end_image_token": "</img>",
    "context_image_token": "<IMG_CONTEXT>",
    "video_token": "<video>",
}
LLAVA_NAMED = {"image_token": "<image>", "video_token": "<video>"}

_QWEN_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_INTERNVL_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}<IMG_CONTEXT>\n"
    "{% elif content['type'] == 'video' %}<video>\n"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# LLaVA-OneVision's published template: every image, then every video, then the text.
_LLAVA_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}"
    "<image>\n{% endfor %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'video') %}"
    "<video>\n{% endfor %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{{ content['text'] }}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_SMOLVLM_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{ line['text'] }}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}"
    "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)


def train_tokenizer(special: list[str], named: dict[str, str] | None = None):
    """A byte-level BPE trained on ``_CORPUS`` with the family's special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    tokens = list(dict.fromkeys([*special, *(named or {}).values()]))
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=tokens,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(_CORPUS, trainer)
    kwargs = {"extra_special_tokens": dict(named)} if named else {}
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        **kwargs,
    )


def _text_config(tokenizer, **extra) -> dict:
    return {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "max_position_embeddings": 32768,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.pad_token_id,
        **extra,
    }


def _save(model, processor, out: Path) -> dict:
    """The checkpoint, its output layer zeroed: every logit is 0, so greedy decoding picks
    token 0, the end of sequence, and each answer ends at once (a random model would fill
    the task's 1,024 new tokens, minutes per prompt on a CPU). What the model is given,
    which the tests read, is untouched."""
    import torch

    assert processor.tokenizer.eos_token_id == 0
    with torch.no_grad():
        model.get_output_embeddings().weight.zero_()
    model.generation_config.eos_token_id = processor.tokenizer.eos_token_id
    model.generation_config.pad_token_id = processor.tokenizer.pad_token_id
    model.to(torch.bfloat16).save_pretrained(out)
    processor.save_pretrained(out)
    return {"path": str(out), "parameters": sum(p.numel() for p in model.parameters())}


def build_qwen(out: Path, version: str) -> dict:
    import transformers as tf

    tokenizer = train_tokenizer([*QWEN_TOKENS])
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_TOKENS}
    rope = {"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0}
    vision = {"depth": 1, "num_heads": 2, "patch_size": 14, "spatial_merge_size": 2}
    vision |= {"temporal_patch_size": 2, "in_channels": 3}
    if version == "2":
        config_class, model_class, processor_class = (
            tf.Qwen2VLConfig,
            tf.Qwen2VLForConditionalGeneration,
            tf.Qwen2VLProcessor,
        )
        vision |= {"embed_dim": 32, "hidden_size": 32, "mlp_ratio": 2}
    else:
        config_class, model_class, processor_class = (
            tf.Qwen2_5_VLConfig,
            tf.Qwen2_5_VLForConditionalGeneration,
            tf.Qwen2_5_VLProcessor,
        )
        vision |= {"hidden_size": 32, "intermediate_size": 64, "out_hidden_size": 32}
        vision |= {"window_size": 112, "fullatt_block_indexes": [0]}
    config = config_class(
        text_config=_text_config(tokenizer, rope_parameters=rope),
        vision_config=vision,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    model = model_class(config)
    processor = processor_class(
        image_processor=tf.Qwen2VLImageProcessor(),
        video_processor=tf.Qwen2VLVideoProcessor(),
        tokenizer=tokenizer,
        chat_template=_QWEN_TEMPLATE,
    )
    return _save(model, processor, out)


def build_internvl(out: Path) -> dict:
    import transformers as tf

    tokenizer = train_tokenizer(QWEN_TOKENS[:3], INTERNVL_NAMED)
    vision = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1}
    vision |= {"num_attention_heads": 2, "image_size": [448, 448], "patch_size": [28, 28]}
    config = tf.InternVLConfig(
        text_config={"model_type": "qwen2", **_text_config(tokenizer)},
        vision_config=vision,
        image_token_id=tokenizer.convert_tokens_to_ids("<IMG_CONTEXT>"),
        image_seq_length=64,
    )
    model = tf.InternVLForConditionalGeneration(config)
    processor = tf.InternVLProcessor(
        image_processor=tf.GotOcr2ImageProcessor(size={"height": 448, "width": 448}),
        video_processor=tf.InternVLVideoProcessor(size={"height": 448, "width": 448}),
        tokenizer=tokenizer,
        image_seq_length=64,
        chat_template=_INTERNVL_TEMPLATE,
    )
    return _save(model, processor, out)


def build_llava_onevision(out: Path) -> dict:
    import transformers as tf

    tokenizer = train_tokenizer(QWEN_TOKENS[:3], LLAVA_NAMED)
    vision = {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 64}
    vision |= {"num_hidden_layers": 1, "num_attention_heads": 2}
    vision |= {"image_size": 384, "patch_size": 24}
    config = tf.LlavaOnevisionConfig(
        text_config={"model_type": "qwen2", **_text_config(tokenizer)},
        vision_config=vision,
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        video_token_id=tokenizer.convert_tokens_to_ids("<video>"),
        vision_feature_layer=-1,
    )
    model = tf.LlavaOnevisionForConditionalGeneration(config)
    processor = tf.LlavaOnevisionProcessor(
        image_processor=tf.LlavaOnevisionImageProcessor(),
        video_processor=tf.LlavaOnevisionVideoProcessor(),
        tokenizer=tokenizer,
        num_image_tokens=(384 // 24) ** 2,
        vision_feature_select_strategy="full",
        chat_template=_LLAVA_TEMPLATE,
    )
    return _save(model, processor, out)


def build_smolvlm(out: Path) -> dict:
    import transformers as tf

    rows = [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)]
    named = {"image_token": "<image>", "fake_image_token": "<fake_token_around_image>"}
    named |= {"global_image_token": "<global-img>", "end_of_utterance_token": "<end_of_utterance>"}
    tokenizer = train_tokenizer([*QWEN_TOKENS[:3], *rows], named)
    vision = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1}
    vision |= {"num_attention_heads": 2, "image_size": 512, "patch_size": 16}
    config = tf.SmolVLMConfig(
        text_config={"model_type": "llama", **_text_config(tokenizer)},
        vision_config=vision,
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        scale_factor=4,
    )
    model = tf.SmolVLMForConditionalGeneration(config)
    processor = tf.SmolVLMProcessor(
        image_processor=tf.SmolVLMImageProcessor(
            max_image_size={"longest_edge": 512}, size={"longest_edge": 512}
        ),
        video_processor=tf.SmolVLMVideoProcessor(
            max_image_size={"longest_edge": 512}, size={"longest_edge": 512}
        ),
        tokenizer=tokenizer,
        image_seq_len=(512 // 16 // 4) ** 2,
        chat_template=_SMOLVLM_TEMPLATE,
    )
    return _save(model, processor, out)


BUILDERS = {
    "qwen2_vl": lambda out: build_qwen(out, "2"),
    "qwen2_5_vl": lambda out: build_qwen(out, "2.5"),
    "internvl": build_internvl,
    "llava_onevision": build_llava_onevision,
    "smolvlm": build_smolvlm,
}


def main(root: Path, families: list[str]) -> dict:
    import torch

    torch.manual_seed(0)
    built = {}
    for family in families:
        try:
            built[family] = BUILDERS[family](root / family)
        except Exception as exc:  # reported to the test, which names the family
            built[family] = {"error": f"{type(exc).__name__}: {exc}"}
    return built


if __name__ == "__main__":
    result = main(Path(sys.argv[1]), sys.argv[2:] or list(FAMILIES))
    print("TINY_VLMS_JSON " + json.dumps(result))
