"""Unit tests of the JMH converter (reporting/jmh.py) and of its Java table in the report, on a
small JMH JSON sample (testdata/jmh-sample.json, JMH 1.37's `-rf json` shape, with iterations
whose mean and median differ). bench/smoke.sh runs them:

    python3 bench/reporting/test_jmh.py
"""

from __future__ import annotations

import copy
import json
import os
import sys
import tempfile
import unittest
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import report  # noqa: E402  bench/report.py
from reporting import jmh  # noqa: E402
from reporting.figures import by_key  # noqa: E402

SAMPLE = os.path.join(HERE, "testdata", "jmh-sample.json")
POM = os.path.join(os.path.dirname(HERE), "java", "pom.xml")


def sample() -> list:
    with open(SAMPLE) as f:
        return json.load(f)


def with_floors(records: list, path: float, cas: float, flakery: float) -> list:
    """The sample with activePathBaseline and casFloor added and flakeryBelowCeiling set: every
    iteration of each at the given ns."""
    def at(record: dict, ns: float, name: Optional[str] = None) -> dict:
        record = copy.deepcopy(record)
        if name:
            record["benchmark"] = name
        metric = record["primaryMetric"]
        metric["rawData"] = [[ns] * len(fork) for fork in metric["rawData"]]
        metric["score"] = ns
        return record
    base = next(r for r in records if r["benchmark"].endswith(".flakeryBelowCeiling"))
    out = [at(r, flakery) if r is base else r for r in records]
    out.append(at(base, path, "dev.flakery.bench.IdBenchmarks.activePathBaseline"))
    out.append(at(base, cas, "dev.flakery.bench.IdBenchmarks.casFloor"))
    return out


def jdk17(flakery: float, cosid: float, call: float, cas: float) -> list:
    """Java 17's few benchmarks (jmh.JDK17_BENCHMARKS) at the given ns, as JMH writes them."""
    records = []
    for name, ns in (("flakeryBelowCeiling", flakery), ("cosidBelowCeiling", cosid),
                     ("jniBaseline", call), ("casFloor", cas)):
        base = next(r for r in sample() if r["benchmark"].endswith(".flakeryBelowCeiling"))
        record = copy.deepcopy(base)
        record["benchmark"] = f"dev.flakery.bench.IdBenchmarks.{name}"
        record["jdkVersion"] = "17.0.15"
        metric = record["primaryMetric"]
        metric["rawData"] = [[ns] * len(fork) for fork in metric["rawData"]]
        metric["score"] = ns
        records.append(record)
    return records


class FromJmh(unittest.TestCase):
    def setUp(self) -> None:
        self.java = jmh.from_jmh(sample(), jmh.pom_versions(POM))
        self.gens = by_key(self.java)

    def test_per_call_is_the_median_of_the_iterations(self) -> None:
        # Iterations 14.0, 15.0, 14.5, 13.9, 60.0: the mean is 23.48, the median 14.5.
        self.assertEqual(self.gens["flakery-nextId"]["per_call"]["ns"], 14.5)
        self.assertEqual(self.gens["cosid"]["per_call"]["ns"], 30.5)

    def test_each_benchmark_lands_in_its_generator_and_part(self) -> None:
        self.assertEqual([g["key"] for g in self.java["generators"]],
                         ["flakery-nextId", "flakery-borrow", "cosid", "tsid", "uuidv7", "uuid4"])
        self.assertEqual(self.gens["tsid"]["per_call"]["ns"], 31.3)
        self.assertEqual(self.gens["tsid"]["sustained"]["ns"], 30.2)
        self.assertNotIn("per_call", self.gens["flakery-borrow"])
        self.assertEqual(self.java["call_floor"]["ns"], 5.5)

    def test_sustained_is_a_rate_against_the_12_bit_ceiling(self) -> None:
        s = self.gens["flakery-nextId"]["sustained"]
        self.assertAlmostEqual(s["ids_per_s"], 1e9 / 244.5)
        self.assertAlmostEqual(s["ceiling_ratio"], 1e9 / 244.5 / 4_096_000)

    def test_a_batch_in_ms_per_op_is_converted(self) -> None:
        b = self.gens["flakery-nextId"]["batch"]
        self.assertEqual(b["n"], 1_000_000)
        self.assertAlmostEqual(b["ms"], 2.11)
        self.assertAlmostEqual(b["ns_per_id"], 2.11)

    def test_versions_come_from_the_pom_and_the_jdk(self) -> None:
        self.assertEqual(self.gens["cosid"]["version"], "2.13.3")
        self.assertEqual(self.gens["tsid"]["version"], "5.2.6")
        self.assertEqual(self.gens["uuid4"]["version"], "JDK 25")
        self.assertEqual(self.java["jmh"], "1.37")

    def test_an_unknown_benchmark_is_an_error(self) -> None:
        records = sample()
        records[0]["benchmark"] = "dev.flakery.bench.IdBenchmarks.renamed"
        with self.assertRaisesRegex(ValueError, "renamed"):
            jmh.from_jmh(records, {})

    def test_a_throughput_run_is_an_error(self) -> None:
        records = sample()
        records[0]["mode"] = "thrpt"
        records[0]["primaryMetric"]["scoreUnit"] = "ops/ms"
        with self.assertRaisesRegex(ValueError, "thrpt"):
            jmh.from_jmh(records, {})

    def test_no_benchmark_is_an_error(self) -> None:
        with self.assertRaises(ValueError):
            jmh.from_jmh([], {})


class Report(unittest.TestCase):
    def test_the_report_sets_java_against_its_peers_in_one_run(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            raw, out = os.path.join(tmp, "raw"), os.path.join(tmp, "out")
            os.makedirs(raw)
            with open(os.path.join(raw, "jmh.json"), "w") as f:
                json.dump(sample(), f)
            with open(os.devnull, "w") as null:
                stdout, sys.stdout = sys.stdout, null
                try:
                    rc = report.main(["report.py", raw, out])
                finally:
                    sys.stdout = stdout
            self.assertEqual(rc, 0)
            table = open(os.path.join(out, "table.md")).read()
            latest = json.load(open(os.path.join(out, "latest.json")))
        self.assertIn("**Java** (JMH 1.37, Java 25)", table)
        # CosId 30.5 ns against flakery's 14.5: 2.10×; TSID's sustained 30.2 ns runs ahead.
        self.assertIn("| CosId MillisecondSnowflakeId 2.13.3 | 30.5 | 2.10× |", table)
        self.assertIn("ran ahead of the clock", table)
        self.assertIn("| Java: nextId() ≥ 3× faster than CosId's MillisecondSnowflakeId (below the ceiling) | missed | 14.5 ns against 30.5 ns (2.10×) |", table)
        self.assertIn("| Java: nextId() ≥ 2× faster than tsid-creator (below the ceiling) | met |", table)
        self.assertIn("| Java: nextId() within 15 ns of a bare JNI call | met | 14.5 ns against 5.5 ns (+9.0 ns) |", table)
        self.assertIn("| Java, per call | 14.5 ns (`nextId()`) |", latest["headline"]["headline-table"])
        self.assertEqual(by_key(latest["java"])["flakery-nextId"]["per_call"]["ns"], 14.5)

    def test_a_cas_above_the_goal_says_the_goal_is_out_of_reach(self) -> None:
        # The FFM path's bare call 2.2 ns, one compare-and-set 4.8 ns, nextId 7.1 ns: the goal
        # (3 ns above the bare call) is below the bare call plus the CAS.
        java = jmh.from_jmh(with_floors(sample(), path=2.2, cas=4.8, flakery=7.1), jmh.pom_versions(POM))
        text = "\n".join(jmh.java_table(java))
        self.assertIn("The bare call plus one compare-and-set (casFloor) is 7.00 ns, nextId's floor on this "
                      "machine: flakery's call is +0.1 ns from it. The goal, within 3 ns of the bare call, is "
                      "out of reach here: one compare-and-set alone costs 4.80 ns", text)
        bar = {name: (met, figure) for name, met, figure in jmh.java_bar({"java": java})}
        self.assertEqual(bar["Java: nextId() within 3 ns of a bare call of its own path (FFM on Java 22+)"],
                         (False, "7.1 ns against 2.2 ns (+4.9 ns); one compare-and-set alone 4.8 ns"))

    def test_a_cas_below_the_goal_leaves_the_goal_in_reach(self) -> None:
        java = jmh.from_jmh(with_floors(sample(), path=2.2, cas=1.5, flakery=4.0), jmh.pom_versions(POM))
        text = "\n".join(jmh.java_table(java))
        self.assertIn("The bare call plus one compare-and-set (casFloor) is 3.70 ns", text)
        self.assertNotIn("out of reach", text)
        bar = {name: met for name, met, _ in jmh.java_bar({"java": java})}
        self.assertTrue(bar["Java: nextId() within 3 ns of a bare call of its own path (FFM on Java 22+)"])

    def test_java_17_is_set_against_cosid_and_its_jni_floor(self) -> None:
        # Java 17: nextId 12.3 ns, CosId 31.3 ns (2.54×), the bare JNI call 7.1 and one
        # compare-and-set 4.7: 11.8 ns, above the 10.4 ns that 3× CosId asks for.
        java = jmh.from_jmh(sample(), jmh.pom_versions(POM))
        java["jdk17"] = jmh.from_jmh(jdk17(flakery=12.3, cosid=31.3, call=7.1, cas=4.7), {})
        text = "\n".join(jmh.java_table(java))
        self.assertIn("On Java 17.0.15 (JNI) in the same run: flakery's call 12.3 ns, CosId's 31.3 ns (2.54×); "
                      "the bare JNI call 7.10 ns and one compare-and-set 4.70 ns, 11.8 ns together: nextId's floor "
                      "there. 3× CosId asks for 10.4 ns, below that floor: out of reach through JNI on this machine.",
                      text)
        bar = {name: (met, figure) for name, met, figure in jmh.java_bar({"java": java})}
        self.assertEqual(bar["Java 17: nextId() ≥ 3× faster than CosId's MillisecondSnowflakeId (below the ceiling)"],
                         (False, "12.3 ns against 31.3 ns (2.54×); the bare JNI call and one compare-and-set 11.8 ns"))
        # A machine whose floor is below CosId / 3: no "out of reach", and the goal met.
        java["jdk17"] = jmh.from_jmh(jdk17(flakery=9.0, cosid=31.3, call=5.0, cas=2.0), {})
        self.assertNotIn("out of reach", "\n".join(jmh.java_table(java)))
        bar = {name: met for name, met, _ in jmh.java_bar({"java": java})}
        self.assertTrue(bar["Java 17: nextId() ≥ 3× faster than CosId's MillisecondSnowflakeId (below the ceiling)"])

    def test_java_17_with_the_critical_native_has_its_own_verdict(self) -> None:
        # Default 12.3 ns (2.54× CosId's 31.3), with the flag 8.0 ns (3.91×): the sentence and
        # the bar say both, and which configuration meets the goal.
        java = jmh.from_jmh(sample(), jmh.pom_versions(POM))
        java["jdk17"] = jmh.from_jmh(jdk17(flakery=12.3, cosid=31.3, call=7.1, cas=4.7), {})
        java["jdk17_critical"] = jmh.from_jmh(jdk17(flakery=8.0, cosid=31.3, call=7.1, cas=4.7)[:1], {})
        text = "\n".join(jmh.java_table(java))
        self.assertIn("out of reach through JNI on this machine. With -XX:+CriticalJNINatives (opt-in; deprecated "
                      "in Java 16, obsolete from 18; Java 22 and later take FFM): 8.00 ns, 3.91× CosId's, meeting the 3× goal.",
                      text)
        bar = {name: (met, figure) for name, met, figure in jmh.java_bar({"java": java})}
        self.assertEqual(bar["Java 17: nextId() ≥ 3× faster than CosId's MillisecondSnowflakeId (below the ceiling)"][0],
                         False)
        self.assertEqual(bar["Java 17 with -XX:+CriticalJNINatives (opt-in, deprecated): nextId() ≥ 3× faster than "
                             "CosId's MillisecondSnowflakeId"], (True, "8.0 ns against 31.3 ns (3.91×)"))
        java["jdk17_critical"] = jmh.from_jmh(jdk17(flakery=11.0, cosid=31.3, call=7.1, cas=4.7)[:1], {})
        self.assertIn("11.0 ns, 2.85× CosId's, short of the 3× goal.", "\n".join(jmh.java_table(java)))
        bar = {name: met for name, met, _ in jmh.java_bar({"java": java})}
        self.assertFalse(bar["Java 17 with -XX:+CriticalJNINatives (opt-in, deprecated): nextId() ≥ 3× faster than "
                             "CosId's MillisecondSnowflakeId"])

    def test_the_report_reads_java_17_from_its_own_file(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "jmh.json"), "w") as f:
                json.dump(sample(), f)
            with open(os.path.join(tmp, "jmh17.json"), "w") as f:
                json.dump(jdk17(flakery=12.3, cosid=31.3, call=7.1, cas=4.7), f)
            with open(os.path.join(tmp, "jmh17crit.json"), "w") as f:
                json.dump(jdk17(flakery=8.0, cosid=31.3, call=7.1, cas=4.7)[:1], f)
            r = report.merge(tmp, os.path.dirname(os.path.dirname(HERE)))
        self.assertEqual(by_key(r["java"]["jdk17"])["flakery-nextId"]["per_call"]["ns"], 12.3)
        self.assertEqual(by_key(r["java"]["jdk17_critical"])["flakery-nextId"]["per_call"]["ns"], 8.0)
        self.assertEqual(by_key(r["java"])["flakery-nextId"]["per_call"]["ns"], 14.5)

    def test_a_broken_jmh_file_fails_the_report(self) -> None:
        records = copy.deepcopy(sample())
        del records[0]["primaryMetric"]
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "jmh.json"), "w") as f:
                json.dump(records, f)
            with open(os.devnull, "w") as null:
                stderr, sys.stderr = sys.stderr, null
                try:
                    rc = report.main(["report.py", tmp, os.path.join(tmp, "out")])
                finally:
                    sys.stderr = stderr
        self.assertEqual(rc, 1)


if __name__ == "__main__":
    result = unittest.TextTestRunner(verbosity=2).run(unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__]))
    failed = len(result.failures) + len(result.errors)
    print(f"JMH converter: {result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
