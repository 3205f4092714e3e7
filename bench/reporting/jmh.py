"""The Java figures: JMH's JSON (`-rf json`) of bench/java's benchmarks, turned into the
report's shape (a `generators` list, as the other languages have), their table and their part
of the bar.

JMH measures each benchmark method alone, as an average time per call; a generator's figures
are spread over several methods (below the ceiling, sustained, a batch), which BENCHMARKS maps.
A method the report does not know, a mode other than average time, or a unit it cannot convert
is an error: a renamed benchmark must not vanish from the report in silence.
"""

from __future__ import annotations

import statistics
import xml.etree.ElementTree as ET
from typing import Any, Optional

from .figures import by_key, fmt_ns, fmt_rate, fmt_ratio, get, ratio

# The 12-bit sequence of the sustained benchmarks (flakery's twitter, CosId's 41/10/12, TSID's
# 1,024 nodes): 4,096 IDs a millisecond.
SUSTAINED_CEILING_PER_S = 4_096_000.0
BATCH_N = 1_000_000
JNI_FLOOR = "a bare JNI call of nextId's shape returning a constant (jniBaseline)"
PATH_FLOOR = ("a bare call of nextId's shape by nextId's own path (an FFM downcall on Java 22 and later, "
              "JNI before) returning a constant (activePathBaseline)")
CAS_FLOOR = "one compare-and-set of a counter in Java (casFloor), the one atomic step of nextId's hot path"
CORE_LOOP = ("the core's own cost per ID, nextId's steps in a loop in native code with no call from Java "
             "(flakeryCoreInNativeLoop)")
# The benchmarks bench/run.sh runs again on Java 17 (JNI): flakery's call, CosId's, and the
# floors of a JNI call and of a compare-and-set.
JDK17_BENCHMARKS = r"IdBenchmarks\.(flakeryBelowCeiling|cosidBelowCeiling|jniBaseline|casFloor)$"
# Java 17's opt-in critical native (docs/java.md): flakery's call again, in a JVM given CRITICAL_FLAG.
JDK17_CRITICAL_BENCHMARKS = r"IdBenchmarks\.flakeryBelowCeiling$"
CRITICAL_FLAG = "-XX:+CriticalJNINatives"
# Issue 37's goals: nextId() within PATH_GOAL_NS of a bare call of its own path, and at least
# COSID_GOAL times faster than CosId below the ceiling.
PATH_GOAL_NS = 3.0
COSID_GOAL = 3.0
FLOORS = {"call_floor": JNI_FLOOR, "path_floor": PATH_FLOOR, "cas_floor": CAS_FLOOR, "core_loop": CORE_LOOP}

# key: (name, Maven groupId:artifactId or None for the JDK's own, flakery?, configuration)
GENERATORS = {
    "flakery-nextId": ("flakery Generator.nextId()", "dev.flakery:flakery", True,
                       "below the ceiling: time:41,worker:1,sequence:21; sustained: twitter, wait; batch: nextIds(1_000_000) on the 21-bit layout"),
    "flakery-borrow": ("flakery nextId(), borrow", "dev.flakery:flakery", True,
                       "twitter, SequencePolicy.BORROW (1 s ahead at most)"),
    "cosid": ("CosId MillisecondSnowflakeId", "me.ahoo.cosid:cosid-core", False,
              "below the ceiling: 41/1/21 bits; sustained: 41/10/12"),
    "tsid": ("tsid-creator TsidFactory", "com.github.f4b6a3:tsid-creator", False,
             "below the ceiling: a 1-bit node (21-bit counter); sustained: newInstance1024 (12-bit counter)"),
    "uuidv7": ("java-uuid-generator UUIDv7", "com.fasterxml.uuid:java-uuid-generator", False,
               "Generators.timeBasedEpochGenerator()"),
    "uuid4": ("UUID.randomUUID() (v4)", None, False, "the JDK's"),
}
# JMH's benchmark (class.method, without the package) -> (generator key, part); the JNI
# floor is no generator's.
BENCHMARKS = {
    "IdBenchmarks.flakeryBelowCeiling": ("flakery-nextId", "per_call"),
    "IdBenchmarks.flakeryTwitter": ("flakery-nextId", "sustained"),
    "IdBenchmarks.flakeryTwitterBorrow": ("flakery-borrow", "sustained"),
    "BatchBenchmarks.nextIdsMillion": ("flakery-nextId", "batch"),
    "IdBenchmarks.cosidBelowCeiling": ("cosid", "per_call"),
    "IdBenchmarks.cosidSnowflake": ("cosid", "sustained"),
    "IdBenchmarks.tsidBelowCeiling": ("tsid", "per_call"),
    "IdBenchmarks.tsid": ("tsid", "sustained"),
    "IdBenchmarks.uuidV7": ("uuidv7", "per_call"),
    "IdBenchmarks.uuidRandom": ("uuid4", "per_call"),
    "IdBenchmarks.jniBaseline": (None, "call_floor"),
    "IdBenchmarks.activePathBaseline": (None, "path_floor"),
    "IdBenchmarks.casFloor": (None, "cas_floor"),
    "IdBenchmarks.flakeryCoreInNativeLoop": (None, "core_loop"),
}
NS_PER_UNIT = {"ns/op": 1.0, "us/op": 1e3, "ms/op": 1e6, "s/op": 1e9}


def pom_versions(pom_path: str) -> dict[str, str]:
    """groupId:artifactId -> version of bench/java/pom.xml's dependencies (properties resolved)."""
    try:
        root = ET.parse(pom_path).getroot()
    except (OSError, ET.ParseError):
        return {}
    for el in root.iter():  # Maven's namespace on every tag: read the bare names
        el.tag = el.tag.split("}")[-1]
    props = {child.tag: (child.text or "").strip() for p in root.findall("properties") for child in p}
    out = {}
    for dep in root.iter("dependency"):
        g, a, v = ((dep.findtext(t) or "").strip() for t in ("groupId", "artifactId", "version"))
        if g and a and v:
            if v.startswith("${") and v.endswith("}"):
                v = props.get(v[2:-1], v)
            out[f"{g}:{a}"] = v
    return out


def median_ns(record: dict[str, Any]) -> float:
    """The median of a benchmark's measured iterations, in ns (JMH's score is their mean)."""
    metric = record["primaryMetric"]
    unit = metric.get("scoreUnit")
    if unit not in NS_PER_UNIT:
        raise ValueError(f"{record['benchmark']}: unit {unit!r}, not a time per call (mode avgt)")
    raw = [v for fork in metric.get("rawData") or [] for v in fork]
    if raw:
        value = statistics.median(raw)
    elif "50.0" in (metric.get("scorePercentiles") or {}):
        value = metric["scorePercentiles"]["50.0"]
    else:
        value = metric["score"]
    return float(value) * NS_PER_UNIT[unit]


def from_jmh(records: list[dict[str, Any]], versions: dict[str, str]) -> dict[str, Any]:
    """The `java` part of the results from JMH's JSON records and the dependencies' versions."""
    if not isinstance(records, list) or not records:
        raise ValueError("JMH's JSON holds no benchmark")
    gens: dict[str, dict[str, Any]] = {}
    java: dict[str, Any] = {"language": "java"}
    for rec in records:
        name = rec.get("benchmark", "")
        short = ".".join(name.split(".")[-2:])
        if short not in BENCHMARKS:
            raise ValueError(f"JMH benchmark {name!r} is not one the report knows (bench/reporting/jmh.py BENCHMARKS)")
        if rec.get("mode") != "avgt":
            raise ValueError(f"{name}: mode {rec.get('mode')!r}, the report reads average time (avgt)")
        ns = median_ns(rec)
        key, part = BENCHMARKS[short]
        method = (f"JMH {short}: {rec.get('forks')} fork(s) of {rec.get('warmupIterations')} warm-up and "
                  f"{rec.get('measurementIterations')} measured iterations of {rec.get('measurementTime')}, "
                  f"{rec.get('threads')} thread; median of the measured iterations")
        java.setdefault("jmh", rec.get("jmhVersion"))
        java.setdefault("jdk", rec.get("jdkVersion"))
        java.setdefault("vm", f"{rec.get('vmName', '')} {rec.get('vmVersion', '')}".strip())
        if key is None:
            java[part] = {"ns": ns, "what": FLOORS[part], "method": method}
            continue
        if key not in gens:
            label, artifact, flakery, config = GENERATORS[key]
            gens[key] = {
                "key": key, "name": label, "library": artifact or "JDK",
                "version": versions.get(artifact, "?") if artifact else f"JDK {rec.get('jdkVersion', '?')}",
                "flakery": flakery, "config": config,
            }
        if part == "per_call":
            gens[key]["per_call"] = {"ns": ns, "method": method}
        elif part == "sustained":
            rate = 1e9 / ns
            gens[key]["sustained"] = {"ns": ns, "ids_per_s": rate, "ceiling_per_s": SUSTAINED_CEILING_PER_S,
                                      "ceiling_ratio": rate / SUSTAINED_CEILING_PER_S, "method": method}
        else:
            gens[key]["batch"] = {"n": BATCH_N, "ms": ns / 1e6, "ns_per_id": ns / BATCH_N, "method": method}
    java["generators"] = [gens[k] for k in GENERATORS if k in gens]
    return java


def java_table(java: dict[str, Any]) -> list[str]:
    gens = by_key(java)
    base = gens.get("flakery-nextId")
    bpc = get(base, "per_call", "ns")
    brate = get(base, "sustained", "ids_per_s")
    lines = [
        f"**Java** (JMH {java.get('jmh', '?')}, Java {java.get('jdk', '?')})",
        "",
        "| generator | below the ceiling, ns | ratio | sustained (12-bit), ns/ID | IDs/s (of ceiling) | ratio | batch of 1M, ms | note |",
        "|---|--:|--:|--:|--:|--:|--:|---|",
    ]
    for g in java.get("generators", []):
        pc = get(g, "per_call", "ns")
        sns = get(g, "sustained", "ns")
        rate = get(g, "sustained", "ids_per_s")
        cr = get(g, "sustained", "ceiling_ratio")
        bms = get(g, "batch", "ms")
        note = "ran ahead of the clock (above the ceiling)" if cr is not None and cr > 1.01 else ""
        lines.append("| " + " | ".join([
            f"{g['name']} {g.get('version', '')}".strip(),
            fmt_ns(pc),
            "" if g.get("flakery") else fmt_ratio(ratio(pc, bpc)),
            fmt_ns(sns),
            fmt_rate(rate) + (f" ({cr:.1%})" if cr is not None else ""),
            "" if g is base else fmt_ratio(ratio(brate, rate)),
            fmt_ns(bms) if bms is not None else "",
            note,
        ]) + " |")
    floor = get(java, "call_floor", "ns")
    if floor is not None:
        lines.append(f"\nThe floor under any JNI call, {java['call_floor']['what']}, costs {fmt_ns(floor)} ns in the same run"
                     + (f": flakery's call is {bpc - floor:.1f} ns above it." if bpc is not None else "."))
    path = get(java, "path_floor", "ns")
    if path is not None:
        lines.append(f"\n{java['path_floor']['what'][0].upper()}{java['path_floor']['what'][1:]} costs {fmt_ns(path)} ns"
                     + (f": flakery's call is {bpc - path:.1f} ns above it." if bpc is not None else "."))
        floor_sentence = cas_floor_sentence(java, bpc, path)
        if floor_sentence:
            lines.append(f"\n{floor_sentence}")
    # What of flakery's call above the bare call is the core's own work, which no path removes.
    for key in ("core_loop", "cas_floor"):
        v = get(java, key, "ns")
        if v is not None:
            what = java[key]["what"]
            lines.append(f"\n{what[0].upper()}{what[1:]}: {fmt_ns(v)} ns in the same run.")
    jdk17 = jdk17_sentence(java.get("jdk17"), java.get("jdk17_critical"))
    if jdk17:
        lines.append(f"\n{jdk17}")
    lines.append("")
    return lines


def jdk17_figures(j17: Optional[dict[str, Any]]) -> Optional[tuple[float, float, float, float]]:
    """(flakery's nextId, CosId's, the bare JNI call, one compare-and-set) on Java 17, in ns."""
    gens = by_key(j17 or {})
    figures = (get(gens.get("flakery-nextId"), "per_call", "ns"), get(gens.get("cosid"), "per_call", "ns"),
               get(j17 or {}, "call_floor", "ns"), get(j17 or {}, "cas_floor", "ns"))
    return None if any(v is None for v in figures) else figures  # type: ignore[return-value]


def jdk17_critical_ns(critical: Optional[dict[str, Any]]) -> Optional[float]:
    """flakery's nextId on Java 17 in a JVM given CRITICAL_FLAG, in ns."""
    return get(by_key(critical or {}).get("flakery-nextId"), "per_call", "ns")


def jdk17_sentence(j17: Optional[dict[str, Any]], critical: Optional[dict[str, Any]] = None) -> Optional[str]:
    """Java 17's call (JNI) against CosId's and against its floor, the bare JNI call plus one
    compare-and-set; then the call with the opt-in critical native, when measured."""
    figures = jdk17_figures(j17)
    if figures is None:
        return None
    fj, cosid, call, cas = figures
    text = (f"On Java {j17.get('jdk', '?')} (JNI) in the same run: flakery's call {fmt_ns(fj)} ns, CosId's "
            f"{fmt_ns(cosid)} ns ({cosid / fj:.2f}×); the bare JNI call {fmt_ns(call)} ns and one compare-and-set "
            f"{fmt_ns(cas)} ns, {fmt_ns(call + cas)} ns together: nextId's floor there.")
    if call + cas > cosid / COSID_GOAL:
        text += (f" {COSID_GOAL:g}× CosId asks for {fmt_ns(cosid / COSID_GOAL)} ns, below that floor: out of reach "
                 f"through JNI on this machine.")
    crit = jdk17_critical_ns(critical)
    if crit is not None:
        text += (f" With {CRITICAL_FLAG} (opt-in; deprecated in Java 16, obsolete from 18; Java 22 and later take FFM): "
                 f"{fmt_ns(crit)} ns, {cosid / crit:.2f}× CosId's, "
                 f"{'meeting' if cosid >= COSID_GOAL * crit else 'short of'} the {COSID_GOAL:g}× goal.")
    return text


def cas_floor_sentence(java: dict[str, Any], bpc: Optional[float], path: float) -> Optional[str]:
    """Whether the goal of PATH_GOAL_NS above the bare call is within reach of this machine: the
    core's hot path keeps IDs increasing across threads by one compare-and-set (docs/spec.md
    "Generating"), which no binding removes, so the bare call plus one casFloor is nextId's floor."""
    cas = get(java, "cas_floor", "ns")
    if bpc is None or cas is None:
        return None
    text = (f"The bare call plus one compare-and-set (casFloor) is {fmt_ns(path + cas)} ns, nextId's floor on this "
            f"machine: flakery's call is {bpc - path - cas:+.1f} ns from it.")
    if cas > PATH_GOAL_NS:
        text += (f" The goal, within {PATH_GOAL_NS:g} ns of the bare call, is out of reach here: one compare-and-set "
                 f"alone costs {fmt_ns(cas)} ns, and the core's one atomic step is what keeps every ID above "
                 f"every ID returned before it on any thread.")
    return text


def configuration_rows(java: Optional[dict[str, Any]]) -> list[str]:
    rows = []
    for g in (java or {}).get("generators", []):
        ceiling = f"{SUSTAINED_CEILING_PER_S:,.0f} (sustained)" if g.get("sustained") else "none"
        rows.append(f"| Java | {g['name']} | `{g['config']}` | | {ceiling} | |")
    return rows


def java_bar(r: dict[str, Any]) -> list[tuple[str, Optional[bool], str]]:
    java = r.get("java") or {}
    gens = by_key(java)
    fj = get(gens.get("flakery-nextId"), "per_call", "ns")
    out: list[tuple[str, Optional[bool], str]] = []
    for key, name, times in (("cosid", "CosId's MillisecondSnowflakeId", COSID_GOAL), ("tsid", "tsid-creator", 2)):
        v = get(gens.get(key), "per_call", "ns")
        out.append((
            f"Java: nextId() ≥ {times:g}× faster than {name} (below the ceiling)",
            None if fj is None or v is None else v >= times * fj,
            "not measured" if fj is None or v is None else f"{fj:.1f} ns against {v:.1f} ns ({v / fj:.2f}×)",
        ))
    floor = get(java, "call_floor", "ns")
    out.append((
        "Java: nextId() within 15 ns of a bare JNI call",
        None if fj is None or floor is None else fj - floor <= 15,
        "not measured" if fj is None or floor is None else f"{fj:.1f} ns against {floor:.1f} ns (+{fj - floor:.1f} ns)",
    ))
    path = get(java, "path_floor", "ns")
    if path is not None:
        cas = get(java, "cas_floor", "ns")
        out.append((
            f"Java: nextId() within {PATH_GOAL_NS:g} ns of a bare call of its own path (FFM on Java 22+)",
            None if fj is None else fj - path <= PATH_GOAL_NS,
            "not measured" if fj is None else f"{fj:.1f} ns against {path:.1f} ns (+{fj - path:.1f} ns)"
            + ("" if cas is None else f"; one compare-and-set alone {cas:.1f} ns"),
        ))
    if "jdk17" in java:
        figures = jdk17_figures(java["jdk17"])
        out.append((
            f"Java 17: nextId() ≥ {COSID_GOAL:g}× faster than CosId's MillisecondSnowflakeId (below the ceiling)",
            None if figures is None else figures[1] >= COSID_GOAL * figures[0],
            "not measured" if figures is None else
            f"{figures[0]:.1f} ns against {figures[1]:.1f} ns ({figures[1] / figures[0]:.2f}×); "
            f"the bare JNI call and one compare-and-set {figures[2] + figures[3]:.1f} ns",
        ))
    if "jdk17_critical" in java:
        crit = jdk17_critical_ns(java["jdk17_critical"])
        cosid = None if figures is None else figures[1]
        out.append((
            f"Java 17 with {CRITICAL_FLAG} (opt-in, deprecated): nextId() ≥ {COSID_GOAL:g}× faster than CosId's "
            f"MillisecondSnowflakeId",
            None if crit is None or cosid is None else cosid >= COSID_GOAL * crit,
            "not measured" if crit is None or cosid is None else
            f"{crit:.1f} ns against {cosid:.1f} ns ({cosid / crit:.2f}×)",
        ))
    return out
