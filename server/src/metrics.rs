//! The Prometheus metrics `/metrics` exposes, in a registry of the server's own.

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
    TextEncoder,
};

pub struct Metrics {
    registry: Registry,
    pub ids_issued: IntCounter,
    pub requests: IntCounterVec,
    pub latency: HistogramVec,
    /// The generator's calls that found the current tick used up and waited for the next.
    pub sequence_waits: IntCounter,
    /// Ticks the generator took ahead of the clock (`borrow` policy).
    pub ticks_borrowed: IntCounter,
    pub clock_backwards: IntCounter,
    pub lease_held: IntGauge,
    pub lease_changes: IntCounter,
    pub datacenter_id: IntGauge,
    pub worker_id: IntGauge,
    pub connections_open: IntGauge,
    pub connections_refused: IntCounter,
}

impl Metrics {
    pub fn new() -> Result<Self, prometheus::Error> {
        let registry = Registry::new();
        let ids_issued = IntCounter::new("flakery_ids_issued_total", "IDs handed out")?;
        let requests = IntCounterVec::new(
            Opts::new(
                "flakery_requests_total",
                "Requests answered, by route and status",
            ),
            &["route", "status"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "flakery_request_duration_seconds",
                "Time to answer a request, by route",
            )
            .buckets(vec![
                0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05,
                0.1, 0.25, 0.5, 1.0, 2.5,
            ]),
            &["route"],
        )?;
        let sequence_waits = IntCounter::new(
            "flakery_sequence_waits_total",
            "Calls of the generator that found the tick's sequence used up and waited for the \
             clock's next tick",
        )?;
        let ticks_borrowed = IntCounter::new(
            "flakery_ticks_borrowed_total",
            "Ticks taken ahead of the clock because the current one's sequence was used up \
             (borrow policy)",
        )?;
        let clock_backwards = IntCounter::new(
            "flakery_clock_backwards_total",
            "Requests refused because the clock stepped back past the tolerance",
        )?;
        let lease_held = IntGauge::new(
            "flakery_lease_held",
            "1 while the node identity is held and IDs can be issued, else 0",
        )?;
        let lease_changes = IntCounter::new(
            "flakery_lease_changes_total",
            "Times the identity was lost or taken back",
        )?;
        let datacenter_id = IntGauge::new("flakery_datacenter_id", "The node's datacenter ID")?;
        let worker_id = IntGauge::new("flakery_worker_id", "The node's worker ID")?;
        let connections_open =
            IntGauge::new("flakery_connections_open", "Client connections open now")?;
        let connections_refused = IntCounter::new(
            "flakery_connections_refused_total",
            "Connections closed at once because --max-connections were open",
        )?;
        registry.register(Box::new(ids_issued.clone()))?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(sequence_waits.clone()))?;
        registry.register(Box::new(ticks_borrowed.clone()))?;
        registry.register(Box::new(clock_backwards.clone()))?;
        registry.register(Box::new(lease_held.clone()))?;
        registry.register(Box::new(lease_changes.clone()))?;
        registry.register(Box::new(datacenter_id.clone()))?;
        registry.register(Box::new(worker_id.clone()))?;
        registry.register(Box::new(connections_open.clone()))?;
        registry.register(Box::new(connections_refused.clone()))?;
        Ok(Metrics {
            registry,
            ids_issued,
            requests,
            latency,
            sequence_waits,
            ticks_borrowed,
            clock_backwards,
            lease_held,
            lease_changes,
            datacenter_id,
            worker_id,
            connections_open,
            connections_refused,
        })
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> Result<String, prometheus::Error> {
        let mut buffer = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut buffer)?;
        String::from_utf8(buffer).map_err(|e| prometheus::Error::Msg(e.to_string()))
    }
}

/// `flakery_layout_time_left_seconds`: how long the layout can still make IDs, as of each
/// scrape (an alert can fire long before it ends; docs/server.md#metrics).
struct TimeLeft {
    layout: flakery::Layout,
    gauge: prometheus::Gauge,
}

impl prometheus::core::Collector for TimeLeft {
    fn desc(&self) -> Vec<&prometheus::core::Desc> {
        self.gauge.desc()
    }

    fn collect(&self) -> Vec<prometheus::proto::MetricFamily> {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        self.gauge
            .set(self.layout.time_left_ms(now_ms) as f64 / 1000.0);
        self.gauge.collect()
    }
}

impl Metrics {
    pub fn register_time_left(&self, layout: flakery::Layout) -> Result<(), prometheus::Error> {
        let gauge = prometheus::Gauge::new(
            "flakery_layout_time_left_seconds",
            "Seconds until the layout's time field runs out and every ID fails with \
             time_exhausted",
        )?;
        self.registry.register(Box::new(TimeLeft { layout, gauge }))
    }
}
