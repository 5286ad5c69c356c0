"""Tiny random-weight checkpoints of the paper's model families, made here with nothing
downloaded: transformers' own config classes (one layer, 32 wide, a few hundred thousand
parameters), a byte-level BPE tokenizer trained on a few strings with the family's special
tokens, and the family's real processor classes. Each is saved to ``OUT/<family>/`` and
loaded back by path, as a user's checkpoint would be. Their answers are noise, which is all
a test of what the model was *given* needs.

Two kinds, for two kinds of caller:

- for ``splice run --backend transformers``
  (tests/splice_eval/run/local/test_transformers_backend.py, in
  ``.venv-models``): a ChatML template that only wraps the turn (the adapters lay the clips
  out themselves), small tiles (28 or 56 px; Qwen keeps the paper's frames, its processor
  resizes by pixel count), and one forced answer (``FORCED``, through ``sequence_bias``), so
  a run is scored exactly as ``splice score`` scores that text;
- ``--toolkit``, for the toolkits' own model classes (lmms-eval's in
  tests/splice_eval/toolkits/test_lmms_models.py, VLMEvalKit's in
  tests/splice_eval/toolkits/test_vlmeval_models.py, each in its
  venv): the families' own published chat templates, cut to what a SPLICE prompt uses (one
  user turn of text and media; where a clip's tokens land is the template's doing, so a
  test that reads the placement reads what the real checkpoint would get), the families'
  real tile sizes, and an answer that ends at once.

``python tests/support/tiny_checkpoints.py OUT [--toolkit] [FAMILY ...]`` prints one line
``TINY_CHECKPOINTS_JSON {family: {"path", "parameters"} or {"error"}}``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FAMILIES = ("qwen2_vl", "qwen2_5_vl", "internvl", "llava_onevision", "smolvlm")
PRINTED = "TINY_CHECKPOINTS_JSON"
FORCED = "<order>Video 2, Video 1</order>"
WIDTH = 32

# Text the tokenizer is trained on: the words of SPLICE prompts and answers.
CORPUS = [
    FORCED,
    "A video has been split into clips, shuffled randomly. Your task is to analyze each "
    "clip deeply to reorder them into the correct temporal sequence. Focus on: Visual "
    "content, Temporal logic, Annotations. Provide the reordered sequence strictly within "
    "order tags in this format: <order>Video X, Video Y, Video Z</order>.",
    "Video 1: add water Video 2: cut the onion Video 3 Video 4 Video 5 Video 6 Video 7",
    "You are given several video clips of the steps of one task, shuffled.",
    "Video 1 Video 2 Video 3 Video 4 Video 5 Video 6 Video 7: spray towards the fire",
    "the correct order is 3, 1, 2 -> Clip A B C D E F G step frame",
]

# --- chat templates ----------------------------------------------------------------------

# The turn only: splice run's adapters put each clip's placeholder in the text themselves.
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
# The families' published templates (--toolkit): media where the message has them.
QWEN_TEMPLATE = (
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
INTERNVL_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}<IMG_CONTEXT>\n"
    "{% elif content['type'] == 'video' %}<video>\n"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# LLaVA-OneVision's published template: every image, then every video, then the text.
LLAVA_TEMPLATE = (
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
SMOLVLM_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{ line['text'] }}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}"
    "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)

QWEN_TOKENS = ["<|im_start|>", "<|vision_start|>", "<|vision_end|>"]
QWEN_TOKENS += ["<|image_pad|>", "<|video_pad|>"]
INTERNVL_NAMED = {
    "start_image_token": "<img>",
    "end_image_token": "</img>",
    "context_image_token": "<IMG_CONTEXT>",
    "video_token": "<video>",
}
LLAVA_NAMED = {"image_token": "<image>", "video_token": "<video>"}
SMOLVLM_NAMED = {
    "image_token": "<image>",
    "fake_image_token": "<fake_token_around_image>",
    "global_image_token": "<global-img>",
    "end_of_utterance_token": "<end_of_utterance>",
}


def train_tokenizer(specials: list[str], named: dict[str, str] | None = None, eos="<|im_end|>"):
    """A byte-level BPE trained on ``CORPUS``: ``eos`` is token 0, ``<|endoftext|>`` (the
    padding) token 1, then ``specials`` and ``named``'s tokens, each one token."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    tokens = list(dict.fromkeys([eos, "<|endoftext|>", *specials, *(named or {}).values()]))
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=tokens,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(CORPUS, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token=eos,
        pad_token="<|endoftext|>",
        extra_special_tokens=dict(named or {}),
    )


def text_config(tokenizer, **extra) -> dict:
    return {
        "vocab_size": len(tokenizer),
        "hidden_size": WIDTH,
        "intermediate_size": 2 * WIDTH,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "max_position_embeddings": 65536,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": None,
        **extra,
    }


# --- the families ------------------------------------------------------------------------


def qwen(version: str, toolkit: bool):
    import transformers as tf

    tok = train_tokenizer(QWEN_TOKENS)
    ids = {
        "image_token_id": tok.convert_tokens_to_ids("<|image_pad|>"),
        "video_token_id": tok.convert_tokens_to_ids("<|video_pad|>"),
        "vision_start_token_id": tok.convert_tokens_to_ids("<|vision_start|>"),
        "vision_end_token_id": tok.convert_tokens_to_ids("<|vision_end|>"),
    }
    rope = {"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0}
    vision = {"depth": 1, "num_heads": 2, "hidden_size": WIDTH}
    if version == "qwen2_vl":
        config_class, model_class, processor_class = (
            tf.Qwen2VLConfig,
            tf.Qwen2VLForConditionalGeneration,
            tf.Qwen2VLProcessor,
        )
        vision |= {"embed_dim": WIDTH, "mlp_ratio": 2}
    else:
        config_class, model_class, processor_class = (
            tf.Qwen2_5_VLConfig,
            tf.Qwen2_5_VLForConditionalGeneration,
            tf.Qwen2_5_VLProcessor,
        )
        vision |= {"intermediate_size": 2 * WIDTH, "out_hidden_size": WIDTH}
        vision |= {"fullatt_block_indexes": [0]}
    config = config_class(
        text_config=text_config(tok, rope_parameters=rope), vision_config=vision, **ids
    )
    processor = processor_class(
        image_processor=tf.Qwen2VLImageProcessor(),
        tokenizer=tok,
        video_processor=tf.Qwen2VLVideoProcessor(),
        chat_template=QWEN_TEMPLATE if toolkit else CHATML,
    )
    return model_class(config), processor


def internvl(toolkit: bool):
    """Tiles of 448 px in 28 px patches (--toolkit: InternVL's own tile) or 56 px in 14 px:
    (tile / patch)^2 patches, pixel-shuffled by 0.5 each way, per image."""
    import transformers as tf

    tile, patch = (448, 28) if toolkit else (56, 14)
    tok = train_tokenizer(["<|im_start|>"], INTERNVL_NAMED)
    vision = {"hidden_size": WIDTH, "intermediate_size": 2 * WIDTH, "num_hidden_layers": 1}
    vision |= {"num_attention_heads": 2, "image_size": [tile, tile], "patch_size": [patch] * 2}
    seq = (tile // patch) ** 2 // 4
    config = tf.InternVLConfig(
        vision_config=vision,
        text_config={"model_type": "qwen2", **text_config(tok)},
        image_token_id=tok.convert_tokens_to_ids("<IMG_CONTEXT>"),
        downsample_ratio=0.5,
        vision_feature_layer=-1,
    )
    size = {"height": tile, "width": tile}
    processor = tf.InternVLProcessor(
        image_processor=tf.GotOcr2ImageProcessor(size=size, crop_to_patches=False),
        tokenizer=tok,
        video_processor=tf.InternVLVideoProcessor(size=size),
        image_seq_length=seq,
        chat_template=INTERNVL_TEMPLATE if toolkit else CHATML,
    )
    return tf.InternVLForConditionalGeneration(config), processor


def llava_onevision(toolkit: bool):
    """SigLIP tiles of 384 px in 24 px patches (--toolkit: the processor's own sizes) or
    28 px in 14 px, one tile per image."""
    import transformers as tf

    tile, patch = (384, 24) if toolkit else (28, 14)
    tok = train_tokenizer(["<|im_start|>"], LLAVA_NAMED)
    vision = {"model_type": "siglip_vision_model", "hidden_size": WIDTH}
    vision |= {"intermediate_size": 2 * WIDTH, "num_hidden_layers": 1}
    vision |= {"num_attention_heads": 2, "image_size": tile, "patch_size": patch}
    grid = {} if toolkit else {"image_grid_pinpoints": [[tile, tile]]}
    config = tf.LlavaOnevisionConfig(
        vision_config=vision,
        text_config={"model_type": "qwen2", **text_config(tok)},
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        video_token_id=tok.convert_tokens_to_ids("<video>"),
        vision_feature_layer=-1,
        vision_feature_select_strategy="full",
        **grid,
    )
    size = {} if toolkit else {"size": {"height": tile, "width": tile}}
    processor = tf.LlavaOnevisionProcessor(
        image_processor=tf.LlavaOnevisionImageProcessor(**size, **grid),
        tokenizer=tok,
        video_processor=tf.LlavaOnevisionVideoProcessor(**size),
        num_image_tokens=(tile // patch) ** 2,
        vision_feature_select_strategy="full",
        chat_template=LLAVA_TEMPLATE if toolkit else CHATML,
    )
    return tf.LlavaOnevisionForConditionalGeneration(config), processor


def smolvlm(toolkit: bool):
    """Images of 512 px in 16 px patches shuffled by 4 (--toolkit) or 28 px in 14 px by 2."""
    import transformers as tf

    tile, patch, scale = (512, 16, 4) if toolkit else (28, 14, 2)
    rows = [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)]
    eos = "<|im_end|>" if toolkit else "<end_of_utterance>"
    tok = train_tokenizer(["<|im_start|>", "<video>", *rows], SMOLVLM_NAMED, eos=eos)
    vision = {"hidden_size": WIDTH, "intermediate_size": 2 * WIDTH, "num_hidden_layers": 1}
    vision |= {"num_attention_heads": 2, "image_size": tile, "patch_size": patch}
    config = tf.SmolVLMConfig(
        vision_config=vision,
        text_config={"model_type": "llama", **text_config(tok)},
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        scale_factor=scale,
        pad_token_id=tok.pad_token_id,
    )
    side = {"longest_edge": tile}
    processor = tf.SmolVLMProcessor(
        image_processor=tf.SmolVLMImageProcessor(size=side, max_image_size=side),
        tokenizer=tok,
        video_processor=tf.SmolVLMVideoProcessor(size=side, max_image_size=side),
        image_seq_len=(tile // patch // scale) ** 2,
        chat_template=SMOLVLM_TEMPLATE if toolkit else SMOL_CHAT,
    )
    return tf.SmolVLMForConditionalGeneration(config), processor


BUILDERS = {
    "qwen2_vl": lambda toolkit: qwen("qwen2_vl", toolkit),
    "qwen2_5_vl": lambda toolkit: qwen("qwen2_5_vl", toolkit),
    "internvl": internvl,
    "llava_onevision": llava_onevision,
    "smolvlm": smolvlm,
}


# --- how the checkpoint answers ------------------------------------------------------------


def force(model, tok) -> None:
    """``generation_config`` biased so greedy decoding emits FORCED then end of turn: each
    prefix of the answer favours its next token, longer prefixes more (so a token that
    occurs twice, like "Video", is followed by what follows it here)."""
    import transformers as tf

    ids = tok(FORCED, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    bias = [[ids[: i + 1], 100.0 * (i + 1)] for i in range(len(ids))]
    model.generation_config = tf.GenerationConfig(
        sequence_bias=bias,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        do_sample=False,
        max_new_tokens=len(ids) + 4,
    )


def end_at_once(model, tok) -> None:
    """The output layer zeroed: every logit is 0, so greedy decoding picks token 0, the end
    of sequence, and each answer ends at once (a random model would fill a toolkit's 1,024
    or 2,048 new tokens, minutes per prompt on a CPU). Classes that sample (VLMEvalKit's
    Qwen2VLChat: top-k 1 of equal logits keeps them all) get the end of sequence too: the
    generation config biases it above every other token."""
    import torch

    assert tok.eos_token_id == 0
    with torch.no_grad():
        model.get_output_embeddings().weight.zero_()
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.sequence_bias = [[[tok.eos_token_id], 100.0]]


# OpenGVLab's InternVL2.5 checkpoints are remote code (``model_type`` internvl_chat): the
# model class carries a ``chat`` method that VLMEvalKit's ``InternVLChat`` calls with its
# prompt text and one pixel tensor per image. No package ships that code, so this checkpoint
# carries its own: transformers' InternVL model with ``chat`` as the published one does it
# for one turn (each ``<image>`` in the question, in order, becomes that image's
# ``<img><IMG_CONTEXT>...</img>``; the ChatML turn around it), loaded by
# ``AutoModel.from_pretrained(..., trust_remote_code=True)`` as the real one is.
INTERNVL_CHAT_CODE = '''"""A tiny checkpoint's remote code: InternVL-Chat's one-turn ``chat``."""
from transformers import InternVLForConditionalGeneration


class TinyInternVLChatModel(InternVLForConditionalGeneration):
    system_message = None

    def chat(self, tokenizer, pixel_values, question, generation_config, history=None,
             return_history=False, num_patches_list=None, IMG_START_TOKEN="<img>",
             IMG_END_TOKEN="</img>", IMG_CONTEXT_TOKEN="<IMG_CONTEXT>", verbose=False):
        if pixel_values is not None and "<image>" not in question:
            question = "<image>\\n" + question
        if num_patches_list is None:
            num_patches_list = [pixel_values.shape[0]] if pixel_values is not None else []
        assert pixel_values is None or len(pixel_values) == sum(num_patches_list)
        query = f"<|im_start|>user\\n{question}<|im_end|>\\n<|im_start|>assistant\\n"
        per_tile = self.config.image_seq_length
        for patches in num_patches_list:
            tokens = IMG_START_TOKEN + IMG_CONTEXT_TOKEN * per_tile * patches + IMG_END_TOKEN
            query = query.replace("<image>", tokens, 1)
        inputs = tokenizer(query, return_tensors="pt")
        out = self.generate(input_ids=inputs.input_ids, attention_mask=inputs.attention_mask,
                            pixel_values=pixel_values, **generation_config)
        new = out[:, inputs.input_ids.shape[1]:]
        return tokenizer.batch_decode(new, skip_special_tokens=True)[0].strip()
'''


def internvl_chat(out: Path) -> None:
    """``internvl``'s --toolkit checkpoint at ``out`` made InternVL2.5 as VLMEvalKit's
    ``InternVLChat`` loads it: ``INTERNVL_CHAT_CODE`` as its remote code."""
    import transformers as tf

    config = tf.AutoConfig.from_pretrained(out)
    config.auto_map = {"AutoModel": "modeling_tiny_internvl_chat.TinyInternVLChatModel"}
    config.image_seq_length = 64  # internvl's --toolkit tile: (448 / 28)^2 / 4
    config.save_pretrained(out)
    (out / "modeling_tiny_internvl_chat.py").write_text(INTERNVL_CHAT_CODE)


def build(root: Path, names: list[str], toolkit: bool) -> dict[str, dict]:
    """Each family's checkpoint under ``root``; ``internvl_chat`` (--toolkit only) is
    ``internvl``'s with InternVL-Chat's remote code. A family that fails is reported."""
    import torch

    torch.manual_seed(0)
    made = {}
    for name in names:
        try:
            model, processor = BUILDERS[name.replace("internvl_chat", "internvl")](toolkit)
            (end_at_once if toolkit else force)(model, processor.tokenizer)
            folder = root / name
            if toolkit:
                model.to(torch.bfloat16)
            model.save_pretrained(folder)
            processor.save_pretrained(folder)
            if name == "internvl_chat":
                internvl_chat(folder)
            params = sum(p.numel() for p in model.parameters())
            made[name] = {"path": str(folder), "parameters": params}
        except Exception as exc:  # reported to the test, which names the family
            made[name] = {"error": f"{type(exc).__name__}: {exc}"}
    return made


if __name__ == "__main__":
    args = sys.argv[2:]
    toolkit = "--toolkit" in args
    names = [a for a in args if a != "--toolkit"] or list(FAMILIES)
    print(f"{PRINTED} " + json.dumps(build(Path(sys.argv[1]), names, toolkit)))
