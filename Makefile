# Conveniences; the README's two commands are scripts/nightly.sh and scripts/test.sh.
.PHONY: setup test nightly lint fmt
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
