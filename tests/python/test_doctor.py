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


def test_the_doctor_takes_every_keyword_of_generator_converted_alike(tmp_path):
    """One conversion (bindings-python/src/options.rs): the doctor's keywords are Generator's,
    an option it once ignored is reported, and a bad value is refused as Generator refuses it."""
    import inspect

    from flakery import _flakery

    doctor = inspect.signature(_flakery._doctor_json).parameters
    assert list(doctor) == list(inspect.signature(flakery.Generator).parameters)
    report = flakery.doctor(worker_id=None, lease_dir=str(tmp_path))
    assert f"host lease: in {tmp_path} (lease_dir or FLAKERY_LEASE_DIR)" in report["node"]["steps"]
    for kwargs in ({"sequence_policy": "sometimes"}, {"database_mode": "both"}):
        with pytest.raises(flakery.InvalidArgumentError) as by_generator:
            flakery.Generator(worker_id=1, **kwargs)
        with pytest.raises(flakery.InvalidArgumentError) as by_doctor:
            flakery.doctor(**kwargs)
        assert str(by_doctor.value) == str(by_generator.value)
