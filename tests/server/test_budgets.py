"""The budgets of docs/doctor.md in the server: a note at start, once, when the layout's IDs
pass 2^53 (none for safe53), and the gauges of the clock and of the 2^53 date."""

import json


def events(server, name):
    return [e for e in server.log_events() if e.get("fields", {}).get("event") == name]


def test_a_layout_above_2_53_is_noted_once_and_its_date_is_a_gauge(start_server):
    s = start_server("--layout", "twitter", "--worker-id", "1")
    _, _, body = s.get("/metrics")
    _, _, body = s.get("/metrics")
    notes = events(s, "layout_above_2_53")
    assert len(notes) == 1, notes
    message = notes[0]["fields"]["message"]
    assert "2010-11-28T22:14:18.305Z" in message and "safe53" in message, message
    metrics = dict(line.split(" ", 1) for line in body.decode().splitlines()
                   if line and not line.startswith("#"))
    assert float(metrics["flakery_layout_above_2_53_timestamp_seconds"]) == 1290982458.305
    assert metrics["flakery_clock_synchronised"] in ("0", "1")
    assert float(metrics["flakery_clock_maximum_error_seconds"]) >= 0
    safe = start_server("--layout", "safe53", "--worker-id", "1")
    _, _, body = safe.get("/metrics")
    assert not [e for e in safe.log_events() if "layout_above_2_53" in json.dumps(e)]
    never = [line.split()[1] for line in body.decode().splitlines()
             if line.startswith("flakery_layout_above_2_53_timestamp_seconds ")]
    assert never and float(never[0]) == float("inf"), never
