#!/usr/bin/env bash
# The benchmark harness in its smoke mode: every language, tiny counts, a few seconds of
# running once built. CI runs it (tests/run.sh) so the harness cannot rot; it asserts that
# every part ran and produced its figures and checks, never a timing.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lib.sh
status=0
bash bench/run.sh --smoke || status=$?
[ "$status" -ne "$SKIPPED_STATUS" ] || skip_or_fail "bench/run.sh --smoke skipped a part"
[ "$status" -eq 0 ] || fail "bench/run.sh --smoke exited $status"
tally "what bench/run.sh --smoke measured" python3 - bench/results/tmp/smoke/raw <<'PY'
import json, os, sys
raw = sys.argv[1]
passed, failed = 0, []
def check(name, ok, why=""):
    global passed
    if ok:
        passed += 1
    else:
        failed.append(f"{name}: {why}")
for lang in ("rust", "python", "node"):
    try:
        d = json.load(open(os.path.join(raw, f"{lang}.json")))
    except (OSError, ValueError) as e:
        check(lang, False, f"no results ({e})")
        continue
    gens = d.get("generators", [])
    check(f"{lang} generators", len(gens) >= 5, f"only {len(gens)}")
    check(f"{lang} flakery", any(g.get("flakery") for g in gens), "no flakery row")
    for g in gens:
        for part in ("per_call", "sustained", "batch"):
            v = g.get(part) or {}
            check(f"{lang} {g['key']} {part}", isinstance(v, dict) and not v.get("error") and (v.get("ns") or v.get("ids_per_s") or v.get("ms")), str(v.get("error", v))[:300])
        if g.get("flakery"):
            for part in ("batch", "threads"):
                v = g.get(part)
                if isinstance(v, dict):
                    check(f"{lang} {g['key']} {part} unique", v.get("duplicates") == 0, f"{v.get('duplicates')} duplicates")
try:
    c = json.load(open(os.path.join(raw, "c.json")))
    check("c", c.get("tight_borrow", {}).get("ns", 0) > 0, str(c))
except (OSError, ValueError) as e:
    check("c", False, f"no results ({e})")
try:
    s = json.load(open(os.path.join(raw, "server.json")))
    single, batch = s["single_id"]["flakery"], s["batch_route"]
    check("server single ID", single["requests_per_s"] > 0 and single["non_2xx"] == 0, str(single))
    check("server nginx", s["single_id"]["nginx"]["requests_per_s"] > 0, str(s["single_id"]["nginx"]))
    # batch_load fails the run on any answer that is not a 200 with exactly its IDs.
    check("server batch", batch["ids_per_s"] > 0 and batch["ids"] > 0, str(batch))
    check("server StreamIds", s["stream_ids"]["ids_per_s"] > 0, str(s["stream_ids"]))
    tls = s["tls"]
    check("server single ID over TLS", tls["single_id"]["requests_per_s"] > 0
          and tls["single_id"]["non_2xx"] == 0, str(tls["single_id"]))
    check("server batch over TLS", tls["batch_route"]["ids"] > 0, str(tls["batch_route"]))
except (OSError, ValueError, KeyError) as e:
    check("server", False, f"no results ({e})")
try:
    st = json.load(open(os.path.join(raw, "startup.json")))
    check("startup sources", len(st["sources"]) >= 8, str([x["key"] for x in st["sources"]]))
    for x in st["sources"]:
        check(f"startup {x['key']}", x.get("median_ms", 0) > 0, x.get("error", str(x))[:300])
except (OSError, ValueError, KeyError) as e:
    check("startup", False, f"no results ({e})")
try:
    cl = json.load(open(os.path.join(raw, "client.json")))
    rows = cl["throughput"]
    check("client throughput rows", {(r["servers"], r["clients"]) for r in rows}
          == {(1, 1), (1, 2), (3, 1), (3, 2)}, str(rows)[:300])
    for r in rows:
        check(f"client {r['servers']} servers {r['clients']} clients",
              r["ids_per_s"] > 0 and r["failed"] == 0, str(r)[:300])
except (OSError, ValueError, KeyError) as e:
    check("client", False, f"no results ({e})")
for f in failed:
    print("FAIL:", f)
print(f"{passed} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
PY
# The JMH converter of bench/report.py: the smoke run leaves Java out (bench/run.sh), so its
# parsing is checked on a sample of JMH's JSON.
tally "bench/report.py's JMH converter" python3 bench/reporting/test_jmh.py
# The client's page: its prose worded from its own run's figures (bench/client/run.py `prose`).
tally "bench/client/run.py's prose" python3 bench/client/test_run.py
finish "bench smoke"
