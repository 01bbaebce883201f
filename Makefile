# Two commands on a fresh machine: `make demo` (the main job on the embedded sample) and `make test`.
# Both create or refresh .venv: CPU torch first (an unpinned torch pulls a multi-GB CUDA build), then the project.
# The project's ~180 packages go in with uv (the versions pip resolves; 35 s instead of pip's 105 s on the 2-core
# machine, byte-compiling included). Everything in the environment is byte-compiled at install (compileall, 2 processes):
# where PYTHONDONTWRITEBYTECODE is set, nothing compiled later is kept, and every process would compile its modules
# again. That includes what pip put in with torch (sympy, networkx, jinja2, fsspec, filelock, ...), which uv finds
# installed and leaves as it is: sympy alone, compiled from source, was 2.5 s of every process that loads a model.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_VERSION ?= 2.13.0
STAMP := $(VENV)/.installed

.PHONY: demo test grid test-cluster bench lint venv bytecode clean

venv: $(STAMP)

# The project's own modules are installed editable (imported from this checkout), so the install does not compile
# them; with PYTHONDONTWRITEBYTECODE set, every command the demo or the tests start would compile them again (≈0.3 s
# of CPU per process). compileall writes only what is missing or older than its source, and Python recompiles a
# module whose source changed since, so an edited file is never run from a stale .pyc.
bytecode: $(STAMP)
	$(PY) -m compileall -q -j 0 wikiref_dataset modeling_qbert trainer_scripts tests examples > /dev/null

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-compile "torch==$(TORCH_VERSION)" uv
	$(VENV)/bin/uv pip install --quiet --compile-bytecode --python $(PY) -e ".[dev]"
	$(PY) -m compileall -q -j 0 "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
		> /dev/null || true  # torch ships a few files for newer Pythons only (pip skips them the same way)
	touch $(STAMP)

demo: bytecode
	HF_HUB_OFFLINE=1 $(VENV)/bin/wikiref demo

# pytest exits 5 when it collects no test: that is not a failure of the suite's code, report it and pass.
# One pytest-xdist worker per core; a whole test file to one worker (module fixtures are built once), or one page of
# test_readme.py, the slowest units first (tests/conftest.py); the ten slowest tests are listed at the end.
test: bytecode
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -n auto --dist loadscope --no-loadscope-reorder --durations=10; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "no tests collected"; exit 0; fi; exit $$rc

# The default recipe's DUC grid (seeds 42, 43, 44 x 5 cluster folds: 15 fine-tuning units) with the CPU setting (a frozen,
# cached encoder prefix: trainer_scripts/experiments/grid.py), resumed when OUT exists; ends with one line
# "grid: ROUGE-1 m ± sd, ROUGE-2 m ± sd, 15 units, T s". GRID_OPTIONS go to the units (a lever, or
# --frozen_prefix_layers 0 for full fine-tuning).
grid: bytecode
	@if [ -z "$(DUC)" ] || [ -z "$(OUT)" ]; then \
		echo "usage: make grid DUC=<a DUC 2006 folder converted by wikiref duc convert> OUT=<dir> [GRID_OPTIONS=...]" >&2; \
		exit 2; fi
	HF_HUB_OFFLINE=1 $(PY) -m trainer_scripts.experiments.grid --duc "$(DUC)" --out "$(OUT)" $(GRID_OPTIONS)

# The three builds and `wikiref experiments` through --executor slurm on a one-node Slurm cluster started here (root;
# Debian's slurm-wlm and munge), compared with the local executor. The tests run in the cluster's network namespace, where sbatch reaches it. The
# cluster stays up for the next run: `scripts/slurm_local.sh stop` stops it. Not part of `make test` (cluster_tests/).
test-cluster: $(STAMP)
	scripts/slurm_local.sh start
	HF_HUB_OFFLINE=1 scripts/slurm_local.sh exec $(abspath $(PY)) -m pytest -q cluster_tests

bench: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) benchmarks/run_all.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
