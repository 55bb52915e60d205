# Conveniences; the README's two commands are scripts/nightly.sh and scripts/test.sh.
.PHONY: setup test nightly lint fmt fuzz
setup:
	bash scripts/setup.sh
test:
	bash scripts/test.sh
nightly:
	bash scripts/nightly.sh
lint:
	.venv/bin/ruff check evalkit tests benchmarks
	.venv/bin/ruff format --check evalkit tests benchmarks
fmt:
	.venv/bin/ruff format evalkit tests benchmarks
	.venv/bin/ruff check --fix evalkit tests benchmarks
# the loader fuzz campaign (SECURITY.md): 10,000 cases in 2 worker processes; CASES=N to change
fuzz:
	.venv/bin/python -m tests.fuzz.campaign --cases $${CASES:-10000} --json .fuzz/summary.json
