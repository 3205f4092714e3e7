"""flakery.doctor(): the core's budgets report (docs/doctor.md) as a dict."""

import pytest

import flakery


def test_the_report_is_data_with_its_exit_code():
    report = flakery.doctor(layout="baidu", worker_id=3)
    assert report["exit_code"] == 2
    assert report["layout"]["time_runs_out"] == "2024-11-20T13:24:16.000Z"
    assert report["node"]["source"] == "explicit" and report["node"]["worker_id"] == 3
    refused = [f for f in report["findings"] if f["level"] == "refused"]
    assert refused[0]["topic"] == "layout" and "ran out" in refused[0]["text"]
    safe = flakery.doctor(layout=flakery.Layout("safe53"), worker_id=3)
    assert safe["layout"]["passes_2_53"] is None
    assert all(f["topic"] != "layout" for f in safe["findings"])


def test_bad_options_raise_the_cores_errors():
    with pytest.raises(flakery.InvalidLayoutError):
        flakery.doctor(layout="time:99")
    # A worker ID the layout cannot hold is reported as a generator would refuse it.
    report = flakery.doctor(worker_id=1 << 40)
    assert report["exit_code"] == 2
    assert [f["topic"] for f in report["findings"] if f["level"] == "refused"] == ["node"]
    with pytest.raises(TypeError):
        flakery.doctor(no_such_option=1)
