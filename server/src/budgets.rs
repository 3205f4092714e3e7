//! The budgets `flakery doctor` reports, as the server's gauges (the clock's sync state and
//! errors from the kernel, the date its layout's IDs pass 2^53, a coordinator's free node IDs)
//! and as a note in its log at start (docs/doctor.md): the same core functions, so the server
//! and the doctor agree.

use std::time::Duration;

use flakery::doctor::budget::{first_ms_at_or_above, js_safe_note};
use flakery::doctor::census::Census;
use flakery::doctor::clock::KernelClock;
use flakery::lease::connector::census_coordinator;
use flakery::{Layout, Options, Plan};
use prometheus::{Gauge, IntGauge, Registry};

/// How often a coordinator's free node IDs are counted: each count opens a session (or a
/// connection) of its own and reads the namespace, so not on every scrape.
const CENSUS_EVERY: Duration = Duration::from_secs(60);

/// The longest one count may take (then it counts as failed).
pub const CENSUS_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Budgets {
    clock_synchronised: IntGauge,
    clock_estimated_error: Gauge,
    clock_maximum_error: Gauge,
    above_2_53_at: Gauge,
    node_ids_free: IntGauge,
}

impl Budgets {
    pub fn new(registry: &Registry) -> Result<Budgets, prometheus::Error> {
        let budgets = Budgets {
            clock_synchronised: IntGauge::new(
                "flakery_clock_synchronised",
                "1 when the kernel marks the clock synchronised (adjtimex), 0 when not, -1 \
                 when it cannot be read",
            )?,
            clock_estimated_error: Gauge::new(
                "flakery_clock_estimated_error_seconds",
                "The kernel's estimated clock error (adjtimex esterror)",
            )?,
            clock_maximum_error: Gauge::new(
                "flakery_clock_maximum_error_seconds",
                "The kernel's maximum clock error (adjtimex maxerror)",
            )?,
            above_2_53_at: Gauge::new(
                "flakery_layout_above_2_53_timestamp_seconds",
                "When the layout's IDs pass 2^53, JavaScript's exact integers (+Inf: never)",
            )?,
            node_ids_free: IntGauge::new(
                "flakery_node_ids_free",
                "Node IDs of the coordinator's namespace no holder has (counted every minute; \
                 -1 before the first count and when the last count failed)",
            )?,
        };
        registry.register(Box::new(budgets.clock_synchronised.clone()))?;
        registry.register(Box::new(budgets.clock_estimated_error.clone()))?;
        registry.register(Box::new(budgets.clock_maximum_error.clone()))?;
        registry.register(Box::new(budgets.above_2_53_at.clone()))?;
        Ok(budgets)
    }

    /// Reads the kernel's clock state (read-only) into the gauges, and the layout's 2^53 date.
    pub fn show(&self, layout: &Layout, fields: &[(String, u64)]) {
        self.show_clock(KernelClock::read());
        self.above_2_53_at.set(
            first_ms_at_or_above(layout, fields, 53).map_or(f64::INFINITY, |ms| ms as f64 / 1000.0),
        );
    }

    /// For a coordinator's lease (as `options` and the environment plan it, which the
    /// generator read too): the count of its namespace's free node IDs, started.
    pub fn count_for(&self, registry: &Registry, options: &Options) -> Result<(), String> {
        let layout = options
            .resolved_layout()
            .map_err(|e| e.message().to_string())?;
        let env = flakery::Environment::capture();
        if let Ok(Plan::Coordinator(plan)) = flakery::lease::resolve::plan(options, &layout, &env) {
            self.count_free_node_ids(registry, move || {
                census_coordinator(&plan, &layout, CENSUS_TIMEOUT)
            })?;
        }
        Ok(())
    }

    /// Registers the free node IDs gauge and counts them with `census` now and every
    /// `CENSUS_EVERY`, on a thread of its own: a count is I/O with a timeout of its own, never
    /// on a scrape's path, and the gauge is one atomic store (no lock is held across it).
    /// One count at a time; the thread lives as long as the process.
    pub fn count_free_node_ids(
        &self,
        registry: &Registry,
        census: impl Fn() -> flakery::Result<Census> + Send + 'static,
    ) -> Result<(), String> {
        // Not counted yet: -1 (never 0, which would read as none free) until the first count.
        self.node_ids_free.set(-1);
        registry
            .register(Box::new(self.node_ids_free.clone()))
            .map_err(|e| e.to_string())?;
        let gauge = self.node_ids_free.clone();
        std::thread::Builder::new()
            .name("flakery-census".into())
            .spawn(move || {
                let mut failing = false;
                loop {
                    failing = show_census(&gauge, census(), failing);
                    std::thread::sleep(CENSUS_EVERY);
                }
            })
            .map(drop)
            .map_err(|e| format!("cannot start the node ID count: {e}"))
    }

    fn show_clock(&self, kernel: Option<KernelClock>) {
        match kernel {
            None => self.clock_synchronised.set(-1),
            Some(k) => {
                self.clock_synchronised
                    .set(i64::from(k.classify().synchronised));
                self.clock_estimated_error.set(k.esterror_us as f64 / 1e6);
                self.clock_maximum_error.set(k.maxerror_us as f64 / 1e6);
            }
        }
    }
}

/// One count into the gauge; a failure is -1 and logged when the counts start failing (and
/// when they work again), not each minute. Returns whether this count failed.
fn show_census(gauge: &IntGauge, census: flakery::Result<Census>, was_failing: bool) -> bool {
    match census {
        Ok(census) => {
            gauge.set(i64::try_from(census.free()).unwrap_or(i64::MAX));
            if was_failing {
                tracing::info!(event = "node_ids_counted", "the node IDs are counted again");
            }
            false
        }
        Err(error) => {
            gauge.set(-1);
            if !was_failing {
                tracing::warn!(
                    event = "node_ids_not_counted",
                    "cannot count the coordinator's free node IDs ({}: {}): \
                     flakery_node_ids_free is -1 until a count works",
                    error.code(),
                    error.message()
                );
            }
            true
        }
    }
}

/// One log line at start when the layout's IDs pass 2^53 before it runs out, naming the
/// JavaScript-safe choices.
pub fn note_if_above_2_53(options: &Options) -> Result<(), String> {
    let layout = options
        .resolved_layout()
        .map_err(|e| format!("{}: {}", e.code(), e.message()))?;
    let now_ms = flakery::Clock::now_ms(&flakery::SystemClock);
    if let Some(note) = js_safe_note(&layout, &options.fields, now_ms) {
        tracing::info!(event = "layout_above_2_53", "{note}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus::{Encoder, TextEncoder};

    fn rendered(registry: &Registry) -> String {
        let mut buffer = Vec::new();
        TextEncoder::new()
            .encode(&registry.gather(), &mut buffer)
            .unwrap();
        String::from_utf8(buffer).unwrap()
    }

    fn census(range: u64, held: u64) -> Census {
        Census {
            range,
            held,
            unreadable: vec![],
            unreadable_count: 0,
            oldest: Ok(None),
            taken_last_hour: Ok(0),
            basis: String::new(),
        }
    }

    /// The 2^53 date is of the IDs the server makes: its constant fields as `--field` set
    /// them, not each field's default (a high constant bit puts every ID past 2^53).
    #[test]
    fn the_layout_gauges_read_the_configured_fields() {
        let layout = Layout::parse("top:2=0,time:40,worker:10,sequence:12;epoch=0").unwrap();
        let gauge = |fields: &[(String, u64)]| {
            let metrics = crate::metrics::Metrics::new().unwrap();
            metrics
                .configure(&Options {
                    layout: Some(layout.clone()),
                    worker_id: Some(1),
                    fields: fields.to_vec(),
                    ..Options::default()
                })
                .unwrap();
            metrics.show_layout_time_left(&layout);
            let text = metrics.render().unwrap();
            text.lines()
                .find_map(|l| l.strip_prefix("flakery_layout_above_2_53_timestamp_seconds "))
                .unwrap()
                .parse::<f64>()
                .unwrap()
        };
        let set = [("top".to_string(), 1)];
        let want = |fields: &[(String, u64)]| {
            flakery::doctor::budget::first_ms_at_or_above(&layout, fields, 53).unwrap() as f64
                / 1000.0
        };
        assert_eq!(gauge(&set), want(&set));
        assert_eq!(gauge(&[]), want(&[]));
        assert!(
            gauge(&set) < gauge(&[]),
            "top=1 passes 2^53 from the epoch on"
        );
    }

    /// Only a coordinator's server has the gauge; a count that fails shows -1, the next that
    /// works its value.
    #[test]
    fn the_free_node_ids_gauge_shows_each_count() {
        let registry = Registry::new();
        let budgets = Budgets::new(&registry).unwrap();
        assert!(!rendered(&registry).contains("flakery_node_ids_free"));
        let (tx, rx) = std::sync::mpsc::sync_channel(0);
        budgets
            .count_free_node_ids(&registry, move || {
                let _ = tx.send(());
                Ok(census(4, 3))
            })
            .unwrap();
        // The census waits for this test to take its call: nothing is counted yet.
        assert!(rendered(&registry)
            .lines()
            .any(|l| l == "flakery_node_ids_free -1"));
        // The first count has been asked for; it is shown before the thread sleeps. (The
        // thread sends once more a minute later, to a receiver by then gone: it ends.)
        rx.recv().unwrap();
        let gauge = budgets.node_ids_free.clone();
        let until = std::time::Instant::now() + Duration::from_secs(120);
        while gauge.get() != 1 {
            assert!(std::time::Instant::now() < until, "never shown");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(rendered(&registry)
            .lines()
            .any(|l| l == "flakery_node_ids_free 1"));
        let failed = flakery::Error::new(flakery::ErrorCode::CoordinatorUnavailable, "down");
        assert!(show_census(&gauge, Err(failed), false));
        assert_eq!(gauge.get(), -1);
        assert!(!show_census(&gauge, Ok(census(4, 4)), true));
        assert_eq!(gauge.get(), 0);
    }

    #[test]
    fn the_gauges_show_the_clock_and_the_2_53_date() {
        let registry = Registry::new();
        let budgets = Budgets::new(&registry).unwrap();
        budgets.show(&Layout::twitter(), &[]);
        budgets.show_clock(Some(KernelClock {
            state: 5,
            status: 0x41,
            esterror_us: 1_500_000,
            maxerror_us: 16_000_000,
        }));
        let text = rendered(&registry);
        for line in [
            "flakery_clock_synchronised 0",
            "flakery_clock_estimated_error_seconds 1.5",
            "flakery_clock_maximum_error_seconds 16",
            "flakery_layout_above_2_53_timestamp_seconds 1290982458.305",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        budgets.show(&Layout::preset("safe53").unwrap(), &[]);
        budgets.show_clock(Some(KernelClock {
            state: 0,
            status: 0x2001,
            esterror_us: 0,
            maxerror_us: 0,
        }));
        let text = rendered(&registry);
        let never = text
            .lines()
            .find_map(|l| l.strip_prefix("flakery_layout_above_2_53_timestamp_seconds "))
            .unwrap();
        assert!(never.parse::<f64>().unwrap().is_infinite(), "{text}");
        assert!(text.contains("flakery_clock_synchronised 1"), "{text}");
    }
}
