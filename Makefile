# Development tasks. `make setup` installs the pinned test environment into the active Python
# environment (a virtual environment: python3.11 -m venv .venv && . .venv/bin/activate).
.PHONY: setup check test snapshots screenshots bench

setup:
	PIP_CONSTRAINT=constraints/test.txt python -m pip install -e '.[test]'

# import-linter contracts, ruff check, ruff format --check, mypy on scars.core and scars.tui (.ci/check)
check:
	bash .ci/check

test:
	pytest -n 2

# Regenerate the app's snapshot SVGs after a deliberate UI change; look at the diff first.
snapshots:
	pytest tests/tui/app/test_app_snapshots.py --snapshot-update

screenshots:
	python screenshots/make_screenshots.py

bench:
	python bench/run.py
