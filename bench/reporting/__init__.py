"""The pieces of bench/report.py, one per idea: the figures' helpers (figures), each source of
figures (generators: the Rust, Python and Node harnesses' JSON; c_abi: bench/c; jmh: JMH's
JSON of bench/java), the bar, the docs' headline figures (headline) and the chart (chart)."""
