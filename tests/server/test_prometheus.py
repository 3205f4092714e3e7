"""The alert rules and dashboard of docs/ops/ against a real Prometheus scraping a real,
ZooKeeper-leased `flakery serve` on loopback: the rules load and evaluate without error, and
every new metric (lease state, losses, round trip, headroom, 503s by code, start time, build
info, the layout's time left) is read by Prometheus itself."""

import json
import os
import re
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

import zkserver
from conftest import ROOT, free_port

RULES = os.path.join(ROOT, "docs", "ops", "flakery-alerts.yml")
DASHBOARD = os.path.join(ROOT, "docs", "ops", "grafana-dashboard.json")


def test_promtool_accepts_the_rules():
    out = subprocess.run(["promtool", "check", "rules", RULES], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.fixture
def prometheus():
    procs = []

    def start(target):
        workdir = tempfile.mkdtemp(prefix="prometheus-test-")
        config = os.path.join(workdir, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [{RULES}]
scrape_configs:
  - job_name: flakery
    static_configs: [{{targets: ["{target}"]}}]
""")
        port = free_port()
        log = open(os.path.join(workdir, "prometheus.log"), "w")
        proc = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={workdir}/data",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=log)
        procs.append((proc, log))
        return f"http://127.0.0.1:{port}"

    yield start
    for proc, log in procs:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def api(base, path, **params):
    url = f"{base}/api/v1/{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)["data"]


def wait_for(what, fn, timeout=90):
    deadline = time.time() + timeout  # a safety net against a hang, not a measure
    last = None
    while time.time() < deadline:
        try:
            last = fn()
            if last:
                return last
        except OSError as e:
            last = e
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}: {last}")


def test_a_real_prometheus_reads_the_new_metrics_and_rules(start_server, prometheus):
    with zkserver.start() as zk:
        s = start_server(env={"FLAKERY_ZOOKEEPER": zk.connect, "FLAKERY_NAMESPACE": "prom"})
        assert s.get("/v1/id")[0] == 200
        base = prometheus(f"127.0.0.1:{s.port}")

        def value(query):
            result = api(base, "query", query=query)["result"]
            return result[0]["value"][1] if result else None

        wait_for("a scrape", lambda: value('up{job="flakery"}') == "1")
        assert value('flakery_build_info{version!=""}') == "1"
        assert value('flakery_lease_state{state="held"}') == "1"
        assert value('flakery_lease_state{state="suspect"}') == "0"
        started = float(value("process_start_time_seconds"))
        assert abs(started - time.time()) < 3600  # this process's start, not 0
        assert float(value("flakery_layout_time_left_seconds")) > 365 * 86400
        assert float(value("flakery_coordinator_round_trip_seconds")) > 0
        assert value("flakery_lease_mark_headroom_seconds") is not None
        assert value('flakery_lease_losses_total{reason="lost"}') == "0"
        # A 503 with its cause, and a lease loss: pause ZooKeeper until IDs are refused.
        zk.pause()
        try:
            wait_for("a lease_lost 503", lambda: s.get("/v1/id")[0] == 503)
        finally:
            zk.resume()
        wait_for("503s by code in Prometheus",
                 lambda: value('flakery_unavailable_total{code="lease_lost"}'))
        wait_for("a lease loss in Prometheus",
                 lambda: float(value("sum(flakery_lease_losses_total)") or 0) >= 1)

        def rules_ok():
            groups = api(base, "rules")["groups"]
            rules = [r for g in groups for r in g["rules"]]
            return len(rules) == 7 and all(r["health"] == "ok" and r.get("lastEvaluation", "")
                                           [:4] != "0001" for r in rules) and rules
        rules = wait_for("every rule evaluated without error", rules_ok)
        assert {r["name"] for r in rules} >= {"FlakeryNotIssuing", "FlakeryLeaseUnstable"}

        # Every metric the dashboard draws is one the server exposes.
        _, _, body = s.get("/metrics")
        exposed = {line.split("{")[0].split(" ")[0] for line in body.decode().splitlines()
                   if line and not line.startswith("#")}
        with open(DASHBOARD) as f:
            dashboard = json.load(f)
        for panel in dashboard["panels"]:
            for target in panel["targets"]:
                for name in re.findall(r"\b(flakery_[a-z_]+|process_[a-z_]+)", target["expr"]):
                    assert name in exposed, f"dashboard panel {panel['title']!r} reads {name}"


def documented_labels(series):
    """The label values docs/server.md's metrics table names for `series` (`name{label}`)."""
    with open(os.path.join(ROOT, "docs", "server.md")) as f:
        row = next(line for line in f if line.startswith(f"| `{series}` |"))
    return set(re.findall(r"`([a-z_]+)`", row.split("|")[3]))


def test_a_fresh_server_lists_every_label_value_at_0(start_server):
    """Prometheus's instrumentation guidance: every label value known in advance is exposed
    from the start, so that `rate()` and dashboards see the first event. A fresh
    ZooKeeper-leased server, asked for nothing but its health and metrics, lists each value
    docs/server.md names (the Rust unit tests check the same lists against the core's tables),
    every counter at 0."""
    with zkserver.start() as zk:
        s = start_server(env={"FLAKERY_ZOOKEEPER": zk.connect, "FLAKERY_NAMESPACE": "fresh"})
        _, _, body = s.get("/metrics")
    samples = [sample for family in text_string_to_metric_families(body.decode())
               for sample in family.samples]
    for metric, label, counter in [("flakery_unavailable_total", "code", True),
                                   ("flakery_lease_losses_total", "reason", True),
                                   ("flakery_lease_state", "state", False)]:
        shown = {x.labels[label]: x.value for x in samples if x.name == metric}
        expected = documented_labels(f"{metric}{{{label}}}")
        assert len(expected) >= 4, expected
        assert set(shown) == expected, f"{metric}: {sorted(shown)} != {sorted(expected)}"
        if counter:
            assert all(v == 0 for v in shown.values()), f"{metric}: {shown}"

