#!/usr/bin/env bash
# Fine-tune a WikiRef-pre-trained Q-BERT on DUC 2005+2006 and test on DUC 2007, with accelerate.
#
#   examples/finetune_duc.sh MODEL_DIR DUC2005_DIR DUC2006_DIR DUC2007_DIR OUTPUT_DIR [more finetune_duc.py options]
#
# The DUC folders come from `wikiref duc convert` (DUC data is licensed by NIST: it is not shipped).
# ACCELERATE_CONFIG picks the accelerate config: examples/accelerate_cpu.yaml (two CPU processes, the default) or
# examples/accelerate_gpu.yaml (the machine's GPUs, bf16; then also pass --bf16 true).
set -euo pipefail
if [ $# -lt 5 ]; then
    sed -n '2,9p' "$0"; exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
model="$1"; duc2005="$2"; duc2006="$3"; duc2007="$4"; out="$5"; shift 5
config="${ACCELERATE_CONFIG:-$here/accelerate_cpu.yaml}"
# Trainer must be told too: without --use_cpu each CPU process trains on its own instead of joining the gloo group.
cpu=(); if grep -q "^use_cpu: true" "$config"; then cpu=(--use_cpu true); fi
exec accelerate launch --config_file "$config" \
    "$here/../trainer_scripts/finetune_duc.py" \
    --model_name_or_path "$model" --duc_dirs "$duc2005" "$duc2006" "$duc2007" --test_year 2007 \
    --subnetwork_fraction 0.1 --ddp_find_unused_parameters false --output_dir "$out" "${cpu[@]}" "$@"
