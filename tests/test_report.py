"""The HTML report: written by the nightly job after its commit and by `kafkalog report`; every number in the page
equals the snapshot's Delta tables; a real headless Chromium opens it without a JavaScript error and draws
every chart from the same numbers."""

from __future__ import annotations

import datetime as dt
import shutil
from collections import Counter
from pathlib import Path

import pytest
from plotly.offline import get_plotlyjs

from kafkalog_spark import nightly, read_log
from kafkalog_spark.cli import main
from kafkalog_spark.delta import MANIFEST, TableLocation
from kafkalog_spark.kafka_versions import parse_kafka_version
from tests.helpers.corpus import ROOT
from tests.helpers.report_page import Page

WHAT_IF = "retention.ms=3600000"
FIGURES = {"fig-size-histogram", "fig-top-partitions", "fig-growth", "fig-timeline", "fig-retention",
           "fig-compaction", "fig-findings"}

pytestmark = pytest.mark.long  # a nightly run and the report's pages: minutes, make test-long


@pytest.fixture(scope="module")
def snapshot(spark, samples: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("report")
    config = nightly.NightlyConfig(
        log_dirs=(str(samples / "broker"),), location=TableLocation(warehouse=str(work / "wh")),
        snapshot_id="r1", topic_config=str(ROOT / "conf" / "samples-topics.ini"),
        kafka_version=parse_kafka_version("3.9"), what_if=(WHAT_IF,), report=str(work / "out" / "report.html"))
    # "now" is a day after the corpus's newest record, not the clock: once the corpus is older than the topics'
    # retention.ms (7 days by default) their own configs would free every closed segment, as the what-if does
    newest = max(t.as_py() for t in read_log([str(samples / "broker")], findings=[]).column("timestamp"))
    done: list[str] = []
    tables = nightly.run(spark, config, now=lambda: newest + dt.timedelta(days=1), after_commit=done.append)
    path = Path(config.report)
    return {"tables": tables, "done": done, "path": path, "page": Page(path.read_text()), "work": work}


def text(value) -> str:
    """A value as the page's data-value writes it ('' for null)."""
    return "" if value is None else str(value)


def ints(values) -> list[int | None]:
    return [None if v == "" else int(v) for v in values]


def test_the_nightly_job_writes_a_self_contained_report_after_its_commit(snapshot: dict) -> None:
    assert snapshot["done"][-1] == "report" and MANIFEST in snapshot["done"][:-1]
    page, text = snapshot["page"], snapshot["path"].read_text()
    assert page.external == []  # nothing to fetch: opens offline
    assert "Plotly.newPlot" in text and f"<script>{get_plotlyjs()}</script>" in text  # plotly.js itself is inlined
    assert set(page.figures) == FIGURES
    assert [p.name for p in snapshot["path"].parent.iterdir()] == ["report.html"]  # no temp file left behind


def test_the_summary_equals_the_tables(snapshot: dict, samples: Path) -> None:
    t, cards = snapshot["tables"], snapshot["page"].cards
    parts = t["partition_stats"].collect()
    dirs = [p.name for p in (samples / "broker").iterdir() if p.is_dir()]  # the partition dirs, internal ones too
    assert int(cards["partitions"]) == len(parts) == len(dirs)
    assert int(cards["logDirs"]) == len({p.logDir for p in parts}) == 1
    assert int(cards["topics"]) == len({p.topic for p in parts}) == len({d.rsplit("-", 1)[0] for d in dirs})
    for key, column in (("segments", "segments"), ("bytes", "logBytes"), ("records", "records")):
        assert int(cards[key]) == sum(p[column] for p in parts)
    assert int(cards["segments"]) == t["segment_stats"].count()
    severities = Counter(r.severity for r in t["index_findings"].collect())
    assert {s: int(cards[s]) for s in ("error", "warning", "info")} == {s: severities.get(s, 0) for s in
                                                                        ("error", "warning", "info")}
    # compacted-cleaned-0's leftovers (tests/test_index_validation.py): a warning per .log.deleted file the cleaner
    # left, an info for each of the 2 segments that start above their names and the 3 gaps after them
    deleted = list((samples / "broker" / "compacted-cleaned-0").glob("*.log.deleted"))
    assert severities == Counter({"warning": len(deleted), "info": 2 + 3})


def test_the_topic_and_partition_tables_equal_partition_stats(snapshot: dict) -> None:
    parts = snapshot["tables"]["partition_stats"].collect()
    per_topic: dict[tuple[str, str], list[int]] = {}
    for p in parts:
        acc = per_topic.setdefault((p.logDir, p.topic), [0, 0, 0, 0])
        for i, v in enumerate((1, p.segments, p.logBytes, p.records)):
            acc[i] += v
    rows = snapshot["page"].tables["table-topics"].records()
    assert {(r["logDir"], r["topic"]): ints([r["partitions"], r["segments"], r["bytes"], r["records"]])
            for r in rows} == per_topic
    assert ints(r["bytes"] for r in rows) == sorted(ints(r["bytes"] for r in rows), reverse=True)
    largest = sorted(parts, key=lambda p: (-p.logBytes, p.logDir, p.topic, p.partition))[:20]
    shown = snapshot["page"].tables["table-partitions"].records()
    assert [(r["topic"], int(r["partition"]), int(r["bytes"])) for r in shown] == [
        (p.topic, p.partition, p.logBytes) for p in largest]


def test_the_growth_table_is_bytes_over_the_records_time_span(snapshot: dict) -> None:
    parts = {(p.logDir, p.topic, p.partition): p for p in snapshot["tables"]["partition_stats"].collect()}
    rows = snapshot["page"].tables["table-growth"].records()
    assert len(rows) == 20 and "bytesSincePrevious" not in rows[0]  # one snapshot: nothing to compare with
    for r in rows:
        p = parts[(r["logDir"], r["topic"], int(r["partition"]))]
        span = p.maxTimestamp - p.minTimestamp
        assert int(r["bytes"]) == p.logBytes
        assert (float(r["bytesPerDay"]) if r["bytesPerDay"] else None) == (
            p.logBytes * 86_400_000 / span if span > 0 else None)
    rates = [float(r["bytesPerDay"]) for r in rows if r["bytesPerDay"]]
    assert rates == sorted(rates, reverse=True) and rates


def test_growth_since_the_previous_snapshot(spark, snapshot: dict) -> None:
    """A later snapshot in which every partition has 100 more bytes: the report of the newest snapshot measures
    growth against the one before it."""
    from pyspark.sql import functions as F

    from kafkalog_spark.delta import append_rows, commit, new_run_id
    from kafkalog_spark.report import REPORT_TABLES, report_data, snapshot_tables

    where = TableLocation(warehouse=str(snapshot["work"] / "wh"))
    later = snapshot["tables"]["partition_stats"].select(F.max("snapshotTime")).collect()[0][0] + dt.timedelta(days=1)
    run = new_run_id()
    for name in REPORT_TABLES:
        rows = snapshot["tables"][name].drop("snapshotId", "snapshotTime")
        if name == "partition_stats":
            rows = rows.withColumn("logBytes", F.col("logBytes") + 100)
        append_rows(rows, where, name, "r2", later, run)
    commit(spark, where, "r2", later, run, list(REPORT_TABLES))
    tables = snapshot_tables(spark, where)  # the newest: r2, and r1 before it
    data = report_data(tables)
    assert data.summary["snapshotId"] == "r2" and data.previous_snapshot == "r1"
    assert len(data.growth) == 20 and {r["bytesSincePrevious"] for r in data.growth} == {100}
    assert snapshot_tables(spark, where, "r1").get("previous_partition_stats") is None


def test_the_forecast_table_equals_the_retention_tables(snapshot: dict) -> None:
    t = snapshot["tables"]
    plan = t["retention_plan"].collect()
    forecast = t["retention_forecast"].collect()
    assert {r.day for r in forecast} == set(range(15)) and all(r.whatIfBytesReclaimed is not None for r in forecast)
    rows = snapshot["page"].tables["table-retention"].records()
    # a row per topic of the plan (the page shows the 20 that free the most; the corpus has fewer topics)
    topics = {p.topic for p in plan}
    assert len(topics) <= 20 and sorted(r["topic"] for r in rows) == sorted(topics)
    assert {"day0", "whatIfDay0", "day14", "whatIfDay14"} <= rows[0].keys()
    for r in rows:
        topic = r["topic"]
        # day 0 of the forecast is the retention plan of the snapshot
        assert int(r["day0"]) == sum(p.bytesReclaimed for p in plan if p.topic == topic)
        assert int(r["bytes"]) == sum(p.size for p in plan if p.topic == topic)
        for day in (1, 7, 14):
            mine = [f for f in forecast if f.topic == topic and f.day == day]
            assert int(r[f"day{day}"]) == sum(f.bytesReclaimed for f in mine)
            assert int(r[f"whatIfDay{day}"]) == sum(f.whatIfBytesReclaimed for f in mine)
        at_horizon = [f for f in forecast if f.topic == topic and f.day == 14]
        assert int(r["segmentsAtHorizon"]) == sum(f.deletableSegments for f in at_horizon)
        assert int(r["whatIfSegmentsAtHorizon"]) == sum(f.whatIfDeletableSegments for f in at_horizon)
    # retention.ms=1h frees every closed segment older than an hour: at least what the topics' own configs free
    assert sum(int(r["whatIfDay0"]) for r in rows) > sum(int(r["day0"]) for r in rows)


def test_the_compaction_and_findings_tables_equal_theirs(snapshot: dict) -> None:
    t, page = snapshot["tables"], snapshot["page"]
    preview = [p for p in t["compaction_preview"].collect() if "compact" in p.cleanupPolicy]
    shown = page.tables["table-compaction"].records()
    assert sorted((r["topic"], int(r["partition"]), r["dirtyRatio"], r["wouldClean"], r["bytesRemoved"])
                  for r in shown) == sorted((p.topic, p.partition, text(p.dirtyRatio), text(int(p.wouldClean)),
                                             text(p.bytesRemoved)) for p in preview)
    assert any(r["wouldClean"] == "1" for r in shown)
    findings = t["index_findings"].collect()
    rows = page.tables["table-findings"].records()
    assert sorted((r["check"], r["file"], int(r["position"])) for r in rows) == sorted(
        (f.check, f.file, f.position) for f in findings)


def test_the_report_command_from_tables_and_from_log_dirs(spark, snapshot: dict, samples: Path, capsys) -> None:
    work = snapshot["work"]
    out = work / "cli.html"
    assert main(["report", "--warehouse", str(work / "wh"), "--snapshot-id", "r1", "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert Page(out.read_text()).cards == snapshot["page"].cards  # the fixture's snapshot, as the job reported it
    direct = work / "direct.html"
    assert main(["report", str(samples / "legacy"), "--set", WHAT_IF, "--top", "5", "-o", str(direct)]) == 0
    page = Page(direct.read_text())
    # legacy-v0 and legacy-v1: one partition each (data/samples/README.md)
    assert int(page.cards["partitions"]) == 2 and page.cards["logDirs"] == "1"
    # legacy-v0's 26 records and legacy-v1's 29 (data/samples/README.md, from kafka-dump-log's goldens)
    assert int(page.cards["records"]) == read_log([str(samples / "legacy")], findings=[]).num_rows == 26 + 29
    assert "whatIfDay0" in page.tables["table-retention"].keys


@pytest.mark.skipif(__import__("importlib.util").util.find_spec("pysail") is None, reason="needs pysail ([local])")
@pytest.mark.parametrize("snapshot_id", [["--snapshot-id", "r1"], []])
def test_the_report_from_tables_is_the_same_page_on_the_local_engine(snapshot: dict, snapshot_id: list[str],
                                                                     tmp_path: Path) -> None:
    """`kafkalog report --warehouse` on Sail (what --engine auto picks for a warehouse on this machine) reads the
    Delta tables without a JVM and writes Spark's page byte for byte: r1, and the newest (r2 and growth since r1
    once the growth test has added it)."""
    from tests.helpers.child_process import run_python

    pages = {}
    for engine in ("local", "spark"):
        out = tmp_path / f"{engine}.html"
        args = ["report", "--warehouse", str(snapshot["work"] / "wh"), *snapshot_id, "-o", str(out)]
        if engine == "local":  # a process of its own: a process holds a classic session or Connect ones, not both
            done = run_python("-m", "kafkalog_spark.cli", "--verbose", *args)
            assert done.returncode == 0 and "on the local engine (Sail" in done.stderr, done.stderr[-3000:]
        else:
            assert main([*args, "--engine", "spark"]) == 0
        pages[engine] = out.read_bytes()
    assert pages["local"] == pages["spark"]
    assert int(Page(pages["local"].decode()).cards["partitions"]) == snapshot["tables"]["partition_stats"].count()


@pytest.mark.parametrize("argv, message", [
    (["report"], "give LOGDIRs, or the tables'"),
    (["report", "--warehouse", "{work}/wh", "--snapshot-id", "nope"], "no committed rows"),
    (["report", "--warehouse", "{work}/empty"], "no committed snapshot"),
    (["report", "--warehouse", "{work}/wh", "--set", WHAT_IF], "--set needs LOGDIRs"),
    (["report", "{samples}/legacy", "--warehouse", "{work}/wh"], "not both"),
    (["report", "{samples}/legacy", "--top", "0"], "--top 0"),
    (["report", "{samples}/legacy", "-o", "{work}"], "is a directory"),
    (["report", "{samples}/legacy", "--set", "retention.ms=soon"], "retention.ms"),
    (["nightly", "--log-dir", "{samples}/legacy", "--warehouse", "{work}/wh2", "--set", "retention.ms=soon"],
     "--set"),
    (["nightly", "--log-dir", "{samples}/legacy", "--warehouse", "{work}/wh2", "--report", "{work}"], "a directory"),
    (["nightly", "--config", "{work}/bad-what-if.toml", "--log-dir", "{samples}/legacy", "--warehouse", "{work}/wh2"],
     "[configs] what_if"),
])
def test_report_usage_errors(snapshot: dict, samples: Path, capsys, argv: list[str], message: str) -> None:
    (snapshot["work"] / "bad-what-if.toml").write_text('[configs]\nwhat_if = ["retention.ms=soon"]\n')
    code = main([a.format(work=snapshot["work"], samples=samples) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


# --------------------------------------------------------------------------- in a real headless browser

def browser():
    """Headless Chromium through chromedriver (Debian's chromium and chromium-driver; `make test` installs them
    where it can), or a skip saying what is missing."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.skip("no chromium/chromedriver on PATH (apt-get install chromium chromium-driver)")
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver))


def open_page(driver, path: Path) -> list[dict]:
    """Load the page, wait until plotly has drawn every chart, return the console's errors."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(path.as_uri())
    WebDriverWait(driver, 60).until(lambda d: d.execute_script(
        "return document.readyState === 'complete' && Array.from(document.querySelectorAll('.plotly-graph-div'))"
        ".every(function (div) { return div.querySelector('.main-svg') !== null; });"))
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_the_report_opens_in_a_headless_browser(snapshot: dict, tmp_path: Path) -> None:
    driver = browser()
    try:
        assert open_page(driver, snapshot["path"]) == []
        drawn = driver.execute_script(
            "return Array.from(document.querySelectorAll('.js-plotly-plot')).map(function (e) { return e.id; })")
        assert set(drawn) == FIGURES
        # the charts' numbers are the tables'
        bars = driver.execute_script("var t = document.getElementById('fig-top-partitions').data[0];"
                                     "return [Array.from(t.x), Array.from(t.y)];")
        parts = snapshot["tables"]["partition_stats"].collect()
        largest = sorted(parts, key=lambda p: (-p.logBytes, p.logDir, p.topic, p.partition))[:20][::-1]
        assert bars[0] == [p.logBytes for p in largest]
        assert [label.split(" (")[0] for label in bars[1]] == [f"{p.topic}-{p.partition}" for p in largest]
        offsets = driver.execute_script(
            "return document.getElementById('fig-timeline').data.map(function (t) {"
            "  return t.y.map(function (y, i) { return [y, t.customdata[i][0]]; }); }).flat();")
        segs = snapshot["tables"]["segment_stats"].collect()
        top8 = {(p.topic, p.partition, p.logDir) for p in largest[::-1][:8]}
        expected = {(f"{s.topic}-{s.partition}", s.baseOffset) for s in segs
                    if (s.topic, s.partition, s.logDir) in top8 and s.minTimestamp is not None
                    and s.minTimestamp >= 0}
        assert {(label.split(" (")[0], base) for label, base in offsets} == expected
        # sorting: click "records" in the topics table, ascending, then descending
        header = driver.find_element("css selector", "#table-topics th[data-key='records']")
        column = "return Array.from(document.querySelectorAll('#table-topics tbody tr')).map(function (r) {" \
                 " return Number(r.cells[5].dataset.value); });"
        header.click()
        up = driver.execute_script(column)
        header.click()
        down = driver.execute_script(column)
        assert up == sorted(up) and down == sorted(up, reverse=True) and up != down
        # the check can fail: a page with a script error is caught
        broken = tmp_path / "broken.html"
        broken.write_text(snapshot["path"].read_text().replace("</body>", "<script>noSuchFunction();</script></body>"))
        assert any("noSuchFunction" in e["message"] for e in open_page(driver, broken))
    finally:
        driver.quit()


def test_a_log_dir_with_nothing_in_it_gets_an_empty_report(spark, tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty-log-dir"
    empty.mkdir()
    out = tmp_path / "empty.html"
    assert main(["report", str(empty), "-o", str(out)]) == 0, capsys.readouterr().err
    page = Page(out.read_text())
    assert {k: page.cards[k] for k in ("partitions", "segments", "bytes", "error")} == {
        "partitions": "0", "segments": "0", "bytes": "0", "error": "0"}
    assert page.figures == [] and page.tables == {}  # "Nothing to draw", "None."
