# kafkalog-spark: every target creates or updates the virtualenv first, from nothing.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench samples clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (Python 3.11 is required)"; exit 1; }
	@command -v java >/dev/null || { echo "error: java not found (Java 17 is required by Spark)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,bench]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) -m kafkalog_spark.cli demo

test: $(STAMP)
	$(PY) -m ruff check kafkalog_spark jobs tests
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check kafkalog_spark jobs tests

bench: $(STAMP)
	$(PY) -m tests.bench.run
	$(PY) -m tests.bench.spark_scan

samples: $(STAMP)
	$(PY) -m tests.harness.make_samples

clean:
	rm -rf $(VENV) warehouse spark-warehouse .pytest_cache .ruff_cache
