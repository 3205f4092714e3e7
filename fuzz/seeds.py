#!/usr/bin/env python3
"""Writes the seed inputs of each fuzz target into corpus/<target>/: the presets (read from
core/src/layout/presets.rs), the layouts and IDs of tests/vectors/decode.json, and edge cases. Run it
once before a campaign; `cargo fuzz cmin` then keeps only the inputs that add coverage."""
import hashlib
import json
import pathlib
import re
import struct

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent
presets = re.findall(r'\(\s*"([a-z0-9-]+)",\s*"([^"]+)",?\s*\)',
                     (ROOT / "core/src/layout/presets.rs").read_text())
vectors = json.loads((ROOT / "tests/vectors/decode.json").read_text())
assert presets and vectors

layouts = [name for name, _ in presets] + [spec for _, spec in presets]
layouts += sorted({v["layout"] for v in vectors})
layouts += [
    "twitter;epoch=1000", "discord;epoch=2015-01-01T00:00:00Z", "twitter;unit=s",
    "sequence:12,time:41;epoch=0", "v:2=3,time:40,worker:7,sequence:12;epoch=1700000000000;unit=10ms",
    "c:1=1,time:51,sequence:12;epoch=0", "time:62,sequence:1;epoch=0;unit=s",
    "time:41,sequence:22;epoch=9999-12-31T23:59:59.999Z", "time:1,sequence:1;epoch=0",
    " time : 41 , sequence : 12 ; epoch = 0 ; unit = ms ", "", ";", "time:41;epoch=0",
    "twitter;epoch=1;epoch=2", "x:64,time:1,sequence:1;epoch=0",
]
ids = [v["id"] for v in vectors] + [
    "0", "-0", "+0", "1", "+5", "-1", "007", " 42 ", "9223372036854775807",
    "9223372036854775808", "18446744073709551616", "-9223372036854775808", "", "+", "1e3", "١٢",
]

def write(target, data):
    out = FUZZ / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)

for spec in layouts:
    write("layout_parse", spec.encode())
for text in ids:
    write("parse_id", text.encode())
for v in vectors:
    i = int(v["id"])
    write("parse_id", struct.pack("<q", i))
    write("decode_compose", v["layout"].encode() + b"\n" + struct.pack("<q", i) + bytes(range(64)))
for spec in layouts:
    write("decode_compose", spec.encode() + b"\n" + bytes(range(255, 127, -1)))
write("decode_compose", b"\n" + bytes(range(128)))
write("decode_compose", b"\n" + bytes(128))

# env_options: the values of FLAKERY_LAYOUT, _DATACENTER_ID, _WORKER_ID, _NAMESPACE,
# _SESSION_TIMEOUT_MS, _ZOOKEEPER, _LEASE_DIR, then the options namespace,
# session_timeout_ms, zookeeper, layout; "!" is "not set".
env = [
    ["!"] * 11,
    ["twitter", "3", "7", "prod", "30000", "127.0.0.1:2181", "/run/lock/flakery"],
    ["safe53", "", "hostname-ordinal", "default", " 10000 ", "", ""],
    ["!", "03", "!", "!", "010", "!", "!"],
    ["sonyflake;epoch=2025-01-01T00:00:00Z", "!", "+3", "..", "0", "  ", "!"],
    ["nope", "-1", "18446744073709551616", "a/b", "x", "!", "!"],
    ["  instagram  ", "31", "0x10", "ns.1", "18446744073709551615", "!", "!",
     "explicit", "500", "zk:2181", "baidu"],
    ["!", "!", "!", "\xff", "!", "!", "!", "!", "!", " ", "!"],
    ["time:41,worker:10,sequence:12;epoch=0", "1", "1", "." * 65, "!", "!", "!", "..", "!"],
]
for lines in env:
    write("env_options", "\n".join(lines).encode("utf-8", "surrogateescape")
          .replace("\xff".encode(), b"\xff"))

texts = ["0000000000000", "7ZZZZZZZZZZZZ", "8000000000000", "7zzzzzzzzzzzz", "0OIL0oil00000",
         "000000000000U", "00000000000", "AzL8n0Y58m7", "AzL8n0Y58m8", "zzzzzzzzzzz",
         "0000000000-0", "decimal", "base32", "base62", "Base32", "00000000000é"]
for text in texts:
    write("text_forms", text.encode())
for v in vectors:
    i = int(v["id"])
    write("text_forms", struct.pack("<qq", i, min(i + 1, 2**63 - 1)))
write("text_forms", struct.pack("<qq", 0, 2**63 - 1))
write("text_forms", struct.pack("<qq", 31, 32))
write("text_forms", struct.pack("<qq", 61, 62))
