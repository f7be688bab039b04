"""Convert a minitrain checkpoint into a Hugging Face model directory.

Usage::

    python tools/convert_checkpoint.py --ckpt runs/exp1/step_000100 \
        --base-model Qwen/Qwen2.5-0.5B --out hf_model/
"""

from __future__ import annotations

import argparse
import os

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def convert(ckpt_dir: str, base_model: str, out_dir: str) -> None:
    """Load ``model.pt`` from ``ckpt_dir`` into ``base_model`` and save it to ``out_dir``."""
    state = torch.load(os.path.join(ckpt_dir, "model.pt"), map_location="cpu")
    model = AutoModelForCausalLM.from_pretrained(base_model, torch_dtype=torch.bfloat16)
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        print(f"warning: {len(missing)} missing and {len(unexpected)} unexpected keys")
    model.save_pretrained(out_dir)
    AutoTokenizer.from_pretrained(base_model).save_pretrained(out_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", required=True, help="checkpoint directory (step_XXXXXX)")
    parser.add_argument("--base-model", required=True, help="model id used for training")
    parser.add_argument("--out", required=True, help="output directory")
    args = parser.parse_args()
    convert(args.ckpt, args.base_model, args.out)


if __name__ == "__main__":
    main()
