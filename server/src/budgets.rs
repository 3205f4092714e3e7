//! The budgets `flakery doctor` reports, as the server's gauges (the clock's sync state and
//! errors from the kernel, the date its layout's IDs pass 2^53) and as a note in its log at
//! start (docs/doctor.md): the same core functions, so the server and the doctor agree.

use flakery::doctor::budget::{first_ms_at_or_above, js_safe_note};
use flakery::doctor::clock::KernelClock;
use flakery::{Layout, Options};
use prometheus::{Gauge, IntGauge, Registry};

pub struct Budgets {
    clock_synchronised: IntGauge,
    clock_estimated_error: Gauge,
    clock_maximum_error: Gauge,
    above_2_53_at: Gauge,
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
