//! The Prometheus metrics `/metrics` exposes, in a registry of the server's own.

use flakery::{Layout, LeaseState, LeaseStatus, LossReason, Options};
use prometheus::{
    Encoder, Gauge, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

/// The route label of a request no route matched.
pub const UNMATCHED: &str = "unmatched";

/// Every route label the server counts (as declared in `serve::app`, gRPC by method) and the
/// statuses it may answer there, each series listed at 0 from the start (Prometheus's
/// instrumentation guidance: a series that appears with its first event has no earlier sample,
/// so `rate()` misses that event). Every route may be refused by the guard (400 a repeated
/// parameter, 401, 408, 414, 431, 503 `overloaded`), answer 405 for another method, or 500.
const GUARDED: &[u16] = &[200, 400, 401, 405, 408, 414, 431, 500, 503];
const ROUTES: &[(&str, &[u16])] = &[
    ("/v1/id", GUARDED),
    ("/v1/ids", GUARDED),
    ("/v1/decode/:id", GUARDED),
    (
        "/v1/compose",
        &[200, 400, 401, 405, 408, 413, 414, 415, 431, 500, 503],
    ),
    ("/v1/layout", GUARDED),
    ("/healthz", GUARDED),
    ("/readyz", GUARDED),
    ("/metrics", GUARDED),
    ("/genid", GUARDED),
    ("/expid", GUARDED),
    ("/makeid", GUARDED),
    ("/transtime", GUARDED),
    ("/api/snowflake/get/:key", GUARDED),
    ("/decodeSnowflakeId", GUARDED),
    // gRPC answers HTTP 200 and carries its own status in trailers.
    ("/flakery.v1.Ids/NextId", &[200]),
    ("/flakery.v1.Ids/NextIds", &[200]),
    ("/flakery.v1.Ids/StreamIds", &[200]),
    ("/flakery.v1.Ids/Decode", &[200]),
    ("/grpc.health.v1.Health/Check", &[200]),
    ("/grpc.health.v1.Health/Watch", &[200]),
    (UNMATCHED, &[400, 401, 404, 405, 408, 414, 431, 503]),
];

/// The route label of a path that is not a route's label itself: a route with a parameter, a
/// gRPC service's unknown method, or unmatched.
fn route_label(path: &str) -> &'static str {
    let segment = |rest: &str| !rest.is_empty() && !rest.contains('/');
    match path {
        _ if path.strip_prefix("/v1/decode/").is_some_and(segment) => "/v1/decode/:id",
        _ if path
            .strip_prefix("/api/snowflake/get/")
            .is_some_and(segment) =>
        {
            "/api/snowflake/get/:key"
        }
        _ if path.starts_with("/flakery.v1.Ids/") => "/flakery.v1.Ids/*rest",
        _ if path.starts_with("/grpc.health.v1.Health/") => "/grpc.health.v1.Health/*rest",
        _ => UNMATCHED,
    }
}

/// One route's series, looked up once per request instead of by label (a hash of the labels
/// and a lock per metric per request).
pub struct RouteSeries {
    pub label: &'static str,
    latency: Histogram,
    answered: Vec<(u16, IntCounter)>,
}

/// A request's route: its series made in advance, or a label outside `ROUTES` (a gRPC
/// service's unknown method).
pub enum Route<'a> {
    Known(&'a RouteSeries),
    Other(&'static str),
}

impl Route<'_> {
    pub fn label(&self) -> &str {
        match self {
            Route::Known(series) => series.label,
            Route::Other(label) => label,
        }
    }
}

pub struct Metrics {
    registry: Registry,
    /// Set once the lease-only metrics (losses, round trip, headroom) are registered: only
    /// for a lease kept by a coordinator.
    coordinated: std::sync::OnceLock<()>,
    pub ids_issued: IntCounter,
    requests: IntCounterVec,
    latency: HistogramVec,
    routes: Vec<RouteSeries>,
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
    /// 1 for the lease's state now, 0 for the others.
    pub lease_state: IntGaugeVec,
    pub lease_losses: IntCounterVec,
    pub coordinator_round_trip: Gauge,
    pub mark_headroom: Gauge,
    /// 503 answers (and gRPC UNAVAILABLE) by their error code.
    pub unavailable: IntCounterVec,
    pub layout_time_left: Gauge,
    budgets: crate::budgets::Budgets,
    /// The constant fields as configured (`--field`), set by `configure`: the layout's
    /// gauges read them, not each field's default.
    fields: std::sync::OnceLock<Vec<(String, u64)>>,
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
        let lease_state = IntGaugeVec::new(
            Opts::new(
                "flakery_lease_state",
                "1 for the node ID lease's state now (acquiring, held, suspect, lost, released)",
            ),
            &["state"],
        )?;
        let lease_losses = IntCounterVec::new(
            Opts::new(
                "flakery_lease_losses_total",
                "Times a held lease stopped issuing, by reason (disconnected, unconfirmed, \
                 mark_stalled, lost)",
            ),
            &["reason"],
        )?;
        let coordinator_round_trip = Gauge::new(
            "flakery_coordinator_round_trip_seconds",
            "The latest answered request to the lease's coordinator, in seconds",
        )?;
        let mark_headroom = Gauge::new(
            "flakery_lease_mark_headroom_seconds",
            "The confirmed high-water mark minus the clock: how long IDs can be issued without \
             the coordinator",
        )?;
        let unavailable = IntCounterVec::new(
            Opts::new(
                "flakery_unavailable_total",
                "Requests answered 503 (or gRPC UNAVAILABLE), by error code",
            ),
            &["code"],
        )?;
        // Every label value known in advance is shown at 0 from the start (Prometheus's
        // instrumentation guidance): a series that appears with its first event has no
        // earlier sample, so `rate()` and `increase()` miss that event.
        for code in crate::unavailable::codes() {
            unavailable.with_label_values(&[code]);
        }
        let routes = ROUTES
            .iter()
            .map(|&(label, statuses)| RouteSeries {
                label,
                latency: latency.with_label_values(&[label]),
                answered: statuses
                    .iter()
                    .map(|&status| {
                        let status_label = status.to_string();
                        (status, requests.with_label_values(&[label, &status_label]))
                    })
                    .collect(),
            })
            .collect();
        let layout_time_left = Gauge::new(
            "flakery_layout_time_left_seconds",
            "Seconds until the layout's time field is used up",
        )?;
        let process_start = Gauge::new(
            "process_start_time_seconds",
            "Start time of the process since the Unix epoch, in seconds",
        )?;
        process_start.set(unix_seconds());
        let build_info = IntGaugeVec::new(
            Opts::new("flakery_build_info", "1, labelled with the flakery version"),
            &["version"],
        )?;
        build_info
            .with_label_values(&[env!("CARGO_PKG_VERSION")])
            .set(1);
        registry.register(Box::new(lease_state.clone()))?;
        registry.register(Box::new(unavailable.clone()))?;
        registry.register(Box::new(layout_time_left.clone()))?;
        registry.register(Box::new(process_start))?;
        registry.register(Box::new(build_info))?;
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
        let budgets = crate::budgets::Budgets::new(&registry)?;
        Ok(Metrics {
            registry,
            coordinated: std::sync::OnceLock::new(),
            ids_issued,
            requests,
            latency,
            routes,
            sequence_waits,
            ticks_borrowed,
            clock_backwards,
            lease_held,
            lease_changes,
            datacenter_id,
            worker_id,
            connections_open,
            connections_refused,
            lease_state,
            lease_losses,
            coordinator_round_trip,
            mark_headroom,
            unavailable,
            layout_time_left,
            budgets,
            fields: std::sync::OnceLock::new(),
        })
    }

    /// What the gauges need of the server's options: the constant fields as configured,
    /// and, for a coordinator's lease, the count of its namespace's free node IDs (started
    /// here, on a thread of its own). Called once, at start.
    pub fn configure(&self, options: &Options) -> Result<(), String> {
        let _ = self.fields.set(options.fields.clone());
        self.budgets.count_for(&self.registry, options)
    }

    /// The route `path` is answered by, as declared in `serve::app` (gRPC by method), with
    /// its series if they were made in advance. The guard stands in front of the router, so it
    /// matches the path itself: the same few patterns, a parameter being one segment.
    pub fn route(&self, path: &str) -> Route<'_> {
        // Most paths are a route's label as they are (the parameters' labels cannot be paths
        // but their own, which they then are).
        let find = |label: &str| self.routes.iter().find(|series| series.label == label);
        let label = route_label(path);
        match find(path).or_else(|| find(label)) {
            Some(series) => Route::Known(series),
            None => Route::Other(label),
        }
    }

    /// Counts a request answered with `status` after `seconds`.
    pub fn answered(&self, route: &Route, status: axum::http::StatusCode, seconds: f64) {
        let status = status.as_u16();
        match route {
            Route::Known(series) => {
                series.latency.observe(seconds);
                match series.answered.iter().find(|(s, _)| *s == status) {
                    Some((_, counter)) => counter.inc(),
                    None => self.count_by_label(series.label, status),
                }
            }
            Route::Other(label) => {
                self.latency.with_label_values(&[label]).observe(seconds);
                self.count_by_label(label, status);
            }
        }
    }

    #[cold]
    fn count_by_label(&self, label: &str, status: u16) {
        let status = status.to_string();
        self.requests.with_label_values(&[label, &status]).inc();
    }

    /// Copies what the lease says of itself into the gauges and counters.
    pub fn show_lease(&self, status: &LeaseStatus) {
        let now = status.state();
        for state in LeaseState::ALL {
            self.lease_state
                .with_label_values(&[state.as_str()])
                .set((state == now) as i64);
        }
        self.lease_held.set(now.can_issue() as i64);
        if !status.is_coordinated() {
            return;
        }
        self.coordinated.get_or_init(|| {
            for metric in [
                Box::new(self.lease_losses.clone()) as Box<dyn prometheus::core::Collector>,
                Box::new(self.coordinator_round_trip.clone()),
                Box::new(self.mark_headroom.clone()),
            ] {
                // Registered once, with names unique in this registry: cannot fail.
                let _ = self.registry.register(metric);
            }
        });
        // Every reason from the first scrape on, at 0 until it happens (see `new`).
        for reason in LossReason::ALL {
            let counter = self.lease_losses.with_label_values(&[reason.as_str()]);
            counter.inc_by(status.losses(reason).saturating_sub(counter.get()));
        }
        if let Some(seconds) = status.round_trip_s() {
            self.coordinator_round_trip.set(seconds);
        }
        if let Some(mark_ms) = status.mark_ms() {
            self.mark_headroom
                .set((mark_ms as f64 - unix_seconds() * 1000.0) / 1000.0);
        }
    }

    pub fn show_layout_time_left(&self, layout: &Layout) {
        self.layout_time_left.set(layout_time_left_seconds(layout));
        let fields = self.fields.get().map_or(&[][..], Vec::as_slice);
        self.budgets.show(layout, fields);
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> Result<String, prometheus::Error> {
        let mut buffer = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut buffer)?;
        String::from_utf8(buffer).map_err(|e| prometheus::Error::Msg(e.to_string()))
    }
}

fn unix_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Seconds from now until the layout can stamp no later time (the core's `time_left_ms`).
pub fn layout_time_left_seconds(layout: &Layout) -> f64 {
    layout.time_left_ms((unix_seconds() * 1000.0) as i64) as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of `name{label="value"}` in the exposition, if listed.
    fn value(text: &str, name: &str, label: &str, value: &str) -> Option<String> {
        let series = format!("{name}{{{label}=\"{value}\"}} ");
        text.lines()
            .find_map(|line| line.strip_prefix(&series))
            .map(str::to_string)
    }

    /// Every route and status of `ROUTES` is listed at 0 before any request; a request is
    /// counted on its route's series by its path (a parameter is one segment), and an answer
    /// outside the list still gets a series of its own.
    #[test]
    fn every_route_and_status_is_listed_at_0_and_counted_by_path() {
        let metrics = Metrics::new().unwrap();
        let text = metrics.render().unwrap();
        for (route, statuses) in ROUTES {
            for status in *statuses {
                let series =
                    format!("flakery_requests_total{{route=\"{route}\",status=\"{status}\"}} 0");
                assert!(text.lines().any(|l| l == series), "{series}");
            }
        }
        let ok = axum::http::StatusCode::OK;
        for (path, label) in [
            ("/v1/id", "/v1/id"),
            ("/v1/decode/123", "/v1/decode/:id"),
            ("/v1/decode/1/2", UNMATCHED),
            ("/v1/decode/", UNMATCHED),
            ("/api/snowflake/get/k", "/api/snowflake/get/:key"),
            ("/flakery.v1.Ids/NextIds", "/flakery.v1.Ids/NextIds"),
            ("/flakery.v1.Ids/Other", "/flakery.v1.Ids/*rest"),
            ("/v1/ids/", UNMATCHED),
            ("/", UNMATCHED),
        ] {
            let route = metrics.route(path);
            assert_eq!(route.label(), label, "{path}");
            metrics.answered(&route, ok, 0.001);
            metrics.answered(&route, axum::http::StatusCode::IM_A_TEAPOT, 0.001);
        }
        let text = metrics.render().unwrap();
        let count = |route: &str, status: u16| {
            let series =
                format!("flakery_requests_total{{route=\"{route}\",status=\"{status}\"}} ");
            text.lines()
                .find_map(|l| l.strip_prefix(&series))
                .map(str::to_string)
        };
        assert_eq!(count("/v1/decode/:id", 200).as_deref(), Some("1"));
        assert_eq!(count(UNMATCHED, 200).as_deref(), Some("4"));
        assert_eq!(count("/flakery.v1.Ids/*rest", 418).as_deref(), Some("1"));
        assert_eq!(count("/v1/id", 418).as_deref(), Some("1"));
    }

    /// A fresh server lists every label value of its labelled counters at 0, each list read
    /// from where it is defined (the core's loss reasons and lease states, the error table's
    /// codes answered 503), so `rate()` sees the first event.
    #[test]
    fn every_known_label_value_is_listed_at_0_from_the_start() {
        let metrics = Metrics::new().unwrap();
        metrics.show_lease(&LeaseStatus::new());
        let text = metrics.render().unwrap();
        let mut codes = 0;
        for code in flakery::ErrorCode::ALL {
            if crate::error::status_of(code) == axum::http::StatusCode::SERVICE_UNAVAILABLE {
                codes += 1;
                let shown = value(&text, "flakery_unavailable_total", "code", code.as_str());
                assert_eq!(shown.as_deref(), Some("0"), "{code}:\n{text}");
            }
        }
        assert!(codes >= 3, "the table's 503s: {codes}");
        for code in ["overloaded", "other"] {
            let shown = value(&text, "flakery_unavailable_total", "code", code);
            assert_eq!(shown.as_deref(), Some("0"), "{code}");
        }
        for reason in LossReason::ALL {
            let shown = value(
                &text,
                "flakery_lease_losses_total",
                "reason",
                reason.as_str(),
            );
            assert_eq!(shown.as_deref(), Some("0"), "{}:\n{text}", reason.as_str());
        }
        for state in LeaseState::ALL {
            let shown = value(&text, "flakery_lease_state", "state", state.as_str());
            let expected = if state == LeaseState::Acquiring {
                "1"
            } else {
                "0"
            };
            assert_eq!(shown.as_deref(), Some(expected), "{}", state.as_str());
        }
    }
}
