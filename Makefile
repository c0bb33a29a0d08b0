# kafkalog-spark: every target creates or updates the virtualenv first, from nothing.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# make compat: the pyspark minors and the Pythons to test (each pair gets its own venv under .compat/).
PYSPARKS       ?= 4.0 4.1 4.2
COMPAT_PYTHONS ?= $(PYTHON)

.PHONY: demo browser test test-incremental test-fleet test-integration test-cluster test-engines test-field test-long test-internal test-stores test-packaging lint docs bench samples samples-internal samples-tiered samples-replicas samples-incremental samples-fleet wheel compat dump-compare fuzz kill-matrix many-dirs clean

# [spark]: the package itself does not depend on Spark (a platform's own Spark must stay); a local run does.
$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (Python 3.11 or later is required)"; exit 1; }
	@command -v java >/dev/null || { echo "error: java not found (Java 17 is required by Spark)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[spark,test,bench,docs]'
	touch $(STAMP)

venv: $(STAMP)

# The full sample corpus (conf/nightly.toml: data/samples -> ./warehouse). `kafkalog demo` without --config
# uses the smaller corpus shipped inside the package instead.
demo: $(STAMP)
	$(PY) -m kafkalog_spark.cli demo --config conf/nightly.toml

# A headless Chromium and its driver (Debian's packages) for the report's browser test; installed only where
# missing and apt-get may run (root), else the test says it is skipped and why.
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      chromium chromium-driver >/dev/null; } || echo "note: no chromium: the report's browser test will skip"; }

# The suite but for its long parts, each a target of its own (test-packaging, test-cluster, test-engines,
# test-internal, test-field, test-long, kill-matrix): together they would take make test past 20 minutes.
# Both run the test files TEST_WORKERS processes at a time, each file's tests in one process (they share its module
# fixtures: brokers, corpora, runs); each process has its Spark session. On two cores: make test 1738 s -> 1469 s,
# make test-integration about 2400 s -> 2154 s (docs/development.md, Tests and CI).
TEST_WORKERS ?= 2
PYTEST_PARALLEL = -n $(TEST_WORKERS) --dist loadfile
test: $(STAMP)
	$(PY) -m ruff check kafkalog_spark jobs tests
	$(PY) -m pytest $(PYTEST_PARALLEL)

# The long suites CI runs (test-field, test-packaging, test-internal, test-cluster, test-long, the nightly job over S3),
# in one pytest run of two processes: each suite's other engines, servers, clusters and venvs are processes of their
# own, and their tests compare them with a classic session of the test process, which starts and warms up once in
# each (a fresh process's first nightly run takes twice a warm one's). Each suite's time is printed at the end
# (tests/conftest.py). `.ci/run`
# runs `make test` and then this. On a machine that ran everything two to three times slower than before, CI's whole
# run went past its 90 minutes twice; so these long suites run on their own targets, not in CI (docs/development.md,
# Tests and CI, says what each covers and what CI still does of it):
#   make test-engines   the local engine against Spark on every corpus (make test compares one small dir);
#   make kill-matrix    the job killed after its commits (CI kills one run over S3, after a table's commit);
#   make test-stores    every command and the nightly job over GCS's and Azure's emulators and every command over S3
#                       (CI runs the nightly job over S3, make test reads every view over all three stores);
#   make many-dirs, make test-incremental (CI's long suite runs 3.9.2's stage 0 to 3), make test-fleet.
INTEGRATION_MARKERS     ?= field or packaging or clusters_nightly or cluster or long or stores
# In this order: pytest-xdist hands each process two files first, then the next file to whichever is free; the
# longest (the stores suite's, about 1400 s; the cluster's, about 660 s) first, so neither ends alone.
INTEGRATION_TESTS       := tests/test_object_store_spark.py tests/test_standalone.py \
                           tests/test_databricks_notebook.py tests/test_connect.py tests/test_report.py \
                           tests/test_packaging.py tests/test_nightly_incremental.py \
                           tests/test_replica_comparison.py tests/test_nightly_internal.py
test-integration: $(STAMP) browser
	$(PY) -m pytest $(PYTEST_PARALLEL) -m "$(INTEGRATION_MARKERS)" $(INTEGRATION_TESTS)

# The nightly job and the source on a real Spark standalone cluster (a master and two workers on loopback; about
# 4 minutes): not part of make test, which it would take past 20 minutes.
test-cluster: $(STAMP)
	$(PY) -m pytest -m cluster tests/test_standalone.py

# The nightly job over two clusters' brokers (the internal-topic tables and the report's section) against the
# brokers' own oracles (minutes): not part of make test, which it would take past 20 minutes.
test-internal: $(STAMP)
	$(PY) -m pytest -m clusters_nightly tests/test_nightly_internal.py tests/test_replica_comparison.py

# The local engine (Sail) against Spark, table by table, on every corpus and the damaged dirs (minutes): make test
# compares one small dir only.
test-engines: $(STAMP)
	$(PY) -m pytest -m engines tests/test_local_engine.py

# Spark Connect (a local Connect server: every view, read_committed, pushdown, the CLI, the nightly job and the
# Databricks notebook over it) and the notebook's nightly on a classic session (minutes each).
test-field: $(STAMP)
	$(PY) -m pytest -m field tests/test_connect.py tests/test_databricks_notebook.py

# The report's tests: the nightly job's report, the report command from tables and from log dirs, growth between
# two snapshots, the page in a headless browser (about 4 minutes).
test-long: $(STAMP) browser
	$(PY) -m pytest -m long tests/test_report.py

# The nightly job and the commands over an S3-compatible server on loopback (moto's, behind a counting proxy),
# against the same over the local copies, two commands over Spark Connect reading the store, and the nightly job
# over GCS's and Azure's emulators (about 16 minutes; make test-integration runs the nightly job over S3 and the two
# commands over Spark Connect), make test the source's views over every store on every corpus.
test-stores: $(STAMP)
	$(PY) -m pytest -m stores tests/test_object_store_spark.py tests/test_object_store_clouds_nightly.py \
		tests/test_object_store_commands.py

# Only the packaging test: builds the wheel, installs it with [spark] into a fresh venv and runs `kafkalog demo`
# from an empty directory.
test-packaging: $(STAMP)
	$(PY) -m pytest -m packaging tests/test_packaging.py

lint: $(STAMP)
	$(PY) -m ruff check kafkalog_spark jobs tests

# The documentation site (mkdocs.yml, docs/; the API reference from the docstrings) into the git-ignored site/,
# with warnings as errors: a link between pages (or to a heading) that does not resolve fails the build.
# NO_MKDOCS_2_WARNING: Material's banner about its end of life (May 2027; see docs/development.md), every build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# The sdist and the wheel built from it, into dist/ (tests/test_packaging.py builds them the same way).
wheel: $(STAMP)
	rm -rf dist/kafkalog_spark-*
	$(PY) -m build --outdir dist .

# The Spark tests against every supported pyspark, one venv each; writes tests/compat/matrix.md.
compat:
	$(PYTHON) tests/compat/run.py --pythons $(COMPAT_PYTHONS) --pysparks $(PYSPARKS)

# The decoder against its peers and the codec libraries alone, the Spark scan, and the jobs on generated fleets
# (FLEET_SETS of 1m, 100m, 1g, 4g, where 1m is the jobs' fixed cost; the sets are generated once into bench-data/
# with Kafka's LogSegment), the nightly job's fixed cost against its anchor (a session making the same Delta commits),
# the nightly job on broker-shaped log dirs (BROKER_SETS: 1g, 8g; a broker's mix of partition sizes, 1 GiB segments,
# the files a broker writes), and the incremental nightly run with a seventh of the bytes new (INCREMENTAL_SETS).
FLEET_SETS ?= 1m 100m 1g
BROKER_SETS ?= 1g 8g
INCREMENTAL_SETS ?= 1g 4g
bench: $(STAMP)
	$(PY) -m tests.bench.run
	$(PY) -m tests.bench.spark_scan
	$(PY) -m tests.bench.fleet --sets $(FLEET_SETS)
	$(PY) -m tests.bench.fixed_cost
	$(PY) -m tests.bench.broker_shaped --sets $(BROKER_SETS)
	$(PY) -m tests.bench.spark_jobs --set 1m
	for s in $(BROKER_SETS); do $(PY) -m tests.bench.spark_jobs --broker-set $$s || exit 1; done
	$(PY) -m tests.bench.object_store
	$(PY) -m tests.bench.replicas
	$(PY) -m tests.bench.incremental --sets $(INCREMENTAL_SETS)

# Both corpora (data/samples: Kafka 3.9.2, data/samples-kafka4: 4.4.0), each with both versions' dump goldens.
samples: $(STAMP)
	$(PY) -m tests.harness.make_samples

# Kafka's internal topics (__consumer_offsets, __transaction_state, __cluster_metadata, __share_group_state) from a
# 3.9.2 and a 4.4.0 broker, each with oracle.json: the broker's own view recorded before its clean stop.
samples-internal: $(STAMP)
	$(PY) -m tests.harness.internal_corpus

# Tiered storage (KIP-405): __remote_log_metadata from 3.9.2 and 4.4.0 brokers with Kafka's LocalTieredStorage
# (data/samples-internal/<version>/tiered) and all its dump goldens.
samples-tiered: $(STAMP)
	$(PY) -m tests.harness.tiered_corpus

# A 3-broker KRaft cluster (a dedicated controller, brokers 1-3) of 3.9.2 and of 4.4.0 whose replicas diverge (in
# sync, a lagging follower, an unclean election, cleaners at different points): each broker's log dir copied with
# every broker down (data/samples-replicas/<version>/broker-<id>), and oracle.json: what each replica truncated
# and lost when the brokers came back on those log dirs (a few minutes per version).
samples-replicas: $(STAMP)
	$(PY) -m tests.harness.replica_corpus

# One single-node KRaft broker of 3.9.2 and of 4.4.0 with two log dirs, both copied with the broker stopped cleanly
# at four stages (appends and rolls, a transaction aborted after a roll, retention, a cleaner pass, a partition moved
# between the log dirs, a topic deleted): data/samples-incremental/<version>/stage-<n>/logdir-{a,b} and stages.json,
# for incremental runs that decode only new or changed segments (about a minute per version).
samples-incremental: $(STAMP)
	$(PY) -m tests.harness.incremental_corpus

# One 3-broker KRaft cluster (a dedicated controller, brokers 1-3) of 3.9.2 and of 4.4.0 whose __consumer_offsets and
# __transaction_state are spread over the brokers (three partitions of one replica each): consumer groups caught up,
# lagging and spread over the brokers, a committed, an aborted and an open transaction, a compacted topic; each
# broker's log dir copied with every node down (data/samples-fleet/<version>/broker-<id>), and oracle.json: what the
# admin API said before the stop, for per-broker runs joined into a fleet view (under a minute per version).
samples-fleet: $(STAMP)
	$(PY) -m tests.harness.fleet_corpus

# kafkalog dump against kafka-dump-log 3.9.2 and 4.4.0 on any log dirs (not part of `make test`):
# make dump-compare DIRS="/var/lib/kafka/data other/log/dir"; exits 1 on any difference.
dump-compare: $(STAMP)
	@test -n "$(DIRS)" || { echo 'usage: make dump-compare DIRS="<log dir> [<log dir> ...]"'; exit 2; }
	$(PY) -m tests.compat.dump_compare $(DIRS)

# Differential fuzzing of the two decoders (compiled and pure Python; tests/fuzz/driver.py), not part of `make
# test` (which runs a fixed-seed sample): FUZZ_CASES cases from FUZZ_SEED on FUZZ_WORKERS processes. A failing
# input is kept in tests/fuzz/regressions/ (the suite replays every one); exits 1 if any failed.
FUZZ_CASES   ?= 1000000
FUZZ_SEED    ?= 1
FUZZ_WORKERS ?= 2
fuzz: $(STAMP)
	$(PY) -m tests.fuzz.driver --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) --workers $(FUZZ_WORKERS) \
		--save tests/fuzz/regressions

# The nightly job SIGKILLed after each of its Delta commits (every table, the manifest, every clean-up), then re-run:
# readers must see each snapshot whole or not at all. KILL_MATRIX=all kills after every one of the 36 commits (each
# kill a fresh job and a re-run: 28 min 42 s when the job made 17 commits); KILL_MATRIX=kinds after the manifest's
# commit and the last clean-up's; KILL_MATRIX=manifest after the manifest's alone (CI kills one run, after a table's
# commit, with the tables in S3: the stores suite).
KILL_MATRIX ?= all
kill-matrix: $(STAMP)
	KAFKALOG_KILL_MATRIX=$(KILL_MATRIX) $(PY) -m pytest -q -m kill tests/test_nightly.py tests/test_snapshots.py

# Memory against the number of log dirs (tests/test_many_dirs.py, on tests/bench/many_dirs.py): validate and the
# nightly job over 50 small log dirs, all in one job, on a 512 MiB driver heap (in local mode the executors share
# it); prints each run's JSON line and fails on an error, an uneven result, or rows unlike one dir's alone.
# The incremental nightly run against full runs at every stage of both versions' corpora (data/samples-incremental),
# with a re-run of a snapshot id: about 15 minutes (CI's long suite takes 3.9.2's stage 0 to 3 in one step); and
# tests/test_nightly.py's second run reading back the first and a warehouse of an older version for each table kept
# per segment (three runs each). The two files in processes of their own: in one JVM (1 GiB heap), the last of the
# six tests failed on the Spark memory it could not get (UNABLE_TO_ACQUIRE_MEMORY) after the corpora's dozens of runs.
test-incremental: $(STAMP)
	$(PY) -m pytest $(PYTEST_PARALLEL) -m incremental tests/test_nightly_incremental.py tests/test_nightly.py

# Three brokers' nightly runs at once into one warehouse (data/samples-fleet), one killed and run again, then the
# fleet step, against one run over all three dirs: 6 to 9 minutes on two cores, so not in CI's long suite.
test-fleet: $(STAMP)
	$(PY) -m pytest -m fleet tests/test_nightly_fleet.py

many-dirs: $(STAMP)
	$(PY) -m pytest -q -s -m many_dirs tests/test_many_dirs.py

clean:
	rm -rf $(VENV) .compat build dist site warehouse spark-warehouse .pytest_cache .ruff_cache
