"""`flakery_requests_total{route,status}` lists every route and status the server answers at 0
from the first scrape (Prometheus's instrumentation guidance: a series that appears with its
first event has no sample before it, so `rate()` misses that event): after every route is
walked, answered and refused, no series is there that was not listed at start."""

from prometheus_client.parser import text_string_to_metric_families

ROUTES = ["/v1/id", "/v1/ids", "/v1/decode/:id", "/v1/compose", "/v1/layout", "/healthz",
          "/readyz", "/metrics", "/genid", "/expid", "/makeid", "/transtime",
          "/api/snowflake/get/:key", "/decodeSnowflakeId"]


def series(server):
    status, _, body = server.get("/metrics", {"Authorization": "Bearer t0ken-series"})
    assert status == 200
    found = {}
    for family in text_string_to_metric_families(body.decode()):
        if family.name == "flakery_requests":
            for sample in family.samples:
                if sample.name == "flakery_requests_total":
                    found[(sample.labels["route"], sample.labels["status"])] = sample.value
    return found


def test_every_route_and_status_is_listed_at_0_from_the_start(start_server):
    s = start_server("--worker-id", "5", "--max-body-bytes", "64",
                     env={"FLAKERY_SERVER_TOKEN": "t0ken-series"})
    before = series(s)
    for route in ROUTES:
        for status in ["200", "400", "401", "405", "503"]:
            # The fixture asked /healthz and /readyz whether the server is up.
            started = route in ("/healthz", "/readyz") and status == "200"
            assert started or before.get((route, status)) == 0, (route, status)
    for status in ["404", "401"]:
        assert before.get(("unmatched", status)) == 0, status
    assert before.get(("/v1/compose", "413")) == 0
    assert before.get(("/flakery.v1.Ids/NextId", "200")) == 0
    auth = {"Authorization": "Bearer t0ken-series"}
    paths = ["/v1/id", "/v1/ids?count=3", "/v1/decode/1", "/v1/layout", "/healthz", "/readyz",
             "/genid", "/expid?id=1", "/makeid", "/transtime?time=1", "/api/snowflake/get/k",
             "/decodeSnowflakeId?snowflakeId=1", "/nowhere", "/v1/ids?count=0", "/v1/id?x=1&x=2"]
    for path in paths:
        s.get(path, auth)
        s.get(path)
        s.request("DELETE", path, headers=auth)
    s.request("POST", "/v1/compose", body=b'{"timestamp_ms": 1}',
              headers={**auth, "Content-Type": "application/json"})
    s.request("POST", "/v1/compose", body=b"x" * 100,
              headers={**auth, "Content-Type": "application/json"})
    s.request("POST", "/v1/compose", body=b"{}", headers={**auth, "Content-Type": "text/plain"})
    after = series(s)
    new = sorted(set(after) - set(before))
    assert not new, f"series that appeared only with their first request: {new}"
    # /v1/id and /v1/id?x=1&x=2 without the token.
    assert after[("/v1/id", "200")] == 1 and after[("/v1/id", "401")] == 2
    assert after[("unmatched", "404")] == 2
    assert after[("/v1/compose", "413")] == 1 and after[("/v1/compose", "415")] == 1
