//! `flakery doctor`'s report, computed here so that every surface (the CLI, the bindings)
//! gives the same one: the budgets nobody watches until they run out (docs/doctor.md).
//!
//! ```text
//! doctor/
//! ├── mod.rs     the request, the report, its findings and exit status
//! ├── value.rs   the report as data, and its text and JSON renderings
//! ├── budget.rs  the layout: its end, 2^53 and 2^63, IDs per second
//! ├── clock.rs   adjtimex read-only, the time daemon, the step back tolerated
//! ├── census.rs  a coordinator's node IDs held and free, counted by its own crate
//! ├── shards.rs  id % N simulated at a rate, with and without random_sequence_start
//! └── node.rs    which source gives the node ID and why; the host lease's directory
//! ```
//!
//! The core knows nothing of HTTP or of a command line: a caller builds a `Request` and
//! renders the `Report`.

pub mod budget;
pub mod census;
pub mod clock;
pub mod coordinator;
pub mod node;
pub mod shards;
pub mod value;

use crate::error::Result;
use crate::layout::Layout;
use crate::lease::environment::Environment;
use crate::options::Options;
pub use shards::ShardQuestion;
pub use value::{MapBuilder, Value};

/// How much a finding matters: the exit status is the worst one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Worth knowing; nothing to fix.
    Note,
    /// Works today, but will fail or misbehave: each comes with its fix.
    Warning,
    /// A generator with this configuration would be refused.
    Refused,
}

impl Level {
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::Note => "note",
            Level::Warning => "warning",
            Level::Refused => "refused",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub level: Level,
    /// The section it comes from: "layout", "clock", "shards", "node", "host lease", "lease".
    pub topic: String,
    pub text: String,
    /// What to do about it; empty for a note, or when the text says it.
    pub fix: String,
}

impl Finding {
    pub fn new(level: Level, topic: &str, text: &str, fix: &str) -> Finding {
        Finding {
            level,
            topic: topic.to_string(),
            text: text.to_string(),
            fix: fix.to_string(),
        }
    }
}

/// How long before a layout runs out the doctor warns, unless FLAKERY_EXHAUSTION_WARNING_DAYS
/// says otherwise: three years, further ahead than the start-up warning's one, because
/// moving stored IDs to another layout takes longer to plan than a year.
pub const DOCTOR_WARNING_DAYS: u64 = 3 * 365;

/// Which sections to report (a CI step checks the layout and the shards, not its own clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checks {
    pub layout: bool,
    pub clock: bool,
    pub node: bool,
    /// Only with `Request::shards`.
    pub shards: bool,
}

impl Checks {
    pub const ALL: Checks = Checks {
        layout: true,
        clock: true,
        node: true,
        shards: true,
    };

    /// A comma-separated list of "layout", "clock", "node", "shards".
    pub fn parse(text: &str) -> Result<Checks> {
        let mut checks = Checks {
            layout: false,
            clock: false,
            node: false,
            shards: false,
        };
        for name in text.split(',').map(str::trim) {
            match name {
                "layout" => checks.layout = true,
                "clock" => checks.clock = true,
                "node" => checks.node = true,
                "shards" => checks.shards = true,
                _ => {
                    return Err(crate::error::Error::invalid_argument(format!(
                        "check '{}' is not one of layout, clock, node, shards",
                        name.escape_debug()
                    )))
                }
            }
        }
        Ok(checks)
    }
}

/// What to report on.
#[derive(Debug, Clone)]
pub struct Request {
    pub checks: Checks,
    /// The generator options the application would use (its layout: `layout`, else
    /// FLAKERY_LAYOUT, else twitter, resolved by the caller into `layout`).
    pub options: Options,
    pub layout: Layout,
    pub env: Environment,
    pub now_ms: i64,
    /// How many days before the layout's end to warn (`FLAKERY_EXHAUSTION_WARNING_DAYS`, else
    /// `DOCTOR_WARNING_DAYS`).
    pub margin_days: u64,
    /// Shards and rate to simulate `id % shards` at; `None`: no shard section.
    pub shards: Option<(u64, u64)>,
    /// Another layout to compare the shard skew with.
    pub compare_layout: Option<Layout>,
    /// Take a lease and give it back (`--lease`); otherwise none is taken.
    pub take_lease: bool,
    /// The process whose view of the host lease directory must be this one's (its mount
    /// namespace): PID 1 unless told.
    pub reference_pid: u32,
}

impl Request {
    /// Simulate `id % shards` at `rate` IDs a second, both as text (`--shards 4 --rate 10/s`):
    /// read and checked here, so that every surface refuses a bad one alike.
    pub fn simulate_shards(&mut self, shards: &str, rate: &str) -> Result<()> {
        self.shards = Some(shards::parse_shards_and_rate(shards, rate)?);
        Ok(())
    }

    /// A request for `options` in this process's environment, now.
    pub fn for_options(options: Options) -> Result<Request> {
        Ok(Request {
            checks: Checks::ALL,
            layout: options.resolved_layout()?,
            options,
            env: Environment::capture(),
            now_ms: crate::clock::Clock::now_ms(&crate::clock::SystemClock),
            margin_days: match std::env::var_os("FLAKERY_EXHAUSTION_WARNING_DAYS") {
                Some(_) => crate::layout::exhaustion_warning_days()?,
                None => DOCTOR_WARNING_DAYS,
            },
            shards: None,
            compare_layout: None,
            take_lease: false,
            reference_pid: 1,
        })
    }
}

/// The report: sections of data, and what they found.
#[derive(Debug, Clone)]
pub struct Report {
    pub sections: Vec<(String, Value)>,
    pub findings: Vec<Finding>,
}

/// The report for `options` in this process's environment, now, every section but the shards,
/// no lease taken: what the bindings' `doctor()` gives, as JSON.
pub fn report_json(options: Options) -> Result<String> {
    Ok(report(&Request::for_options(options)?)?.to_json())
}

/// Reports on `request`: reads the kernel's clock state and /proc, takes no lease unless asked.
pub fn report(request: &Request) -> Result<Report> {
    report_with_clock(request, clock::KernelClock::read(), clock::daemons())
}

/// The same with the clock's state given (a test's fixed kernel values).
pub fn report_with_clock(
    request: &Request,
    kernel: Option<clock::KernelClock>,
    daemons: Vec<Value>,
) -> Result<Report> {
    let mut findings = Vec::new();
    let options = &request.options;
    let checks = request.checks;
    let mut sections = Vec::new();
    if checks.layout {
        sections.push((
            "layout".to_string(),
            budget::section(
                &request.layout,
                &options.fields,
                request.now_ms,
                request.margin_days,
                &mut findings,
            ),
        ));
    }
    if checks.clock {
        sections.push((
            "clock".to_string(),
            clock::section(
                kernel,
                daemons,
                options.backwards_tolerance_ms,
                &mut findings,
            ),
        ));
    }
    if checks.node {
        sections.push((
            "node".to_string(),
            node::section(
                options,
                &request.layout,
                &request.env,
                request.take_lease,
                request.reference_pid,
                &mut findings,
            ),
        ));
    }
    if let Some((shards, rate)) = request.shards.filter(|_| checks.shards) {
        // The node ID the plan fixes (pure: no lease); a leased one is not known before it is
        // taken, and the simulation then stamps node 0.
        let plan = crate::lease::resolve::plan(options, &request.layout, &request.env);
        let node = match plan {
            Ok(crate::lease::resolve::Plan::Fixed(node, _)) => node,
            _ => crate::lease::node::NodeId::default(),
        };
        let question = ShardQuestion {
            shards,
            rate,
            start_ms: request.now_ms,
            node,
            fields: options.fields.clone(),
        };
        sections.push((
            "shards".to_string(),
            shards::section(
                &request.layout,
                options.random_sequence_start,
                request.compare_layout.as_ref(),
                &question,
                &mut findings,
            )?,
        ));
    }
    Ok(Report { sections, findings })
}

impl Report {
    /// The findings of one level, in the order they were found.
    pub fn findings_of(&self, level: Level) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.level == level)
    }

    /// The worst finding's level, if any is a warning or worse.
    pub fn worst(&self) -> Option<Level> {
        [Level::Refused, Level::Warning]
            .into_iter()
            .find(|level| self.findings_of(*level).next().is_some())
    }

    /// 0 all well, 1 warnings (each with its fix), 2 a generator would be refused.
    pub fn exit_code(&self) -> i32 {
        match self.worst() {
            None | Some(Level::Note) => 0,
            Some(Level::Warning) => 1,
            Some(Level::Refused) => 2,
        }
    }

    /// The report as one value: its sections, its findings, its status.
    pub fn to_value(&self) -> Value {
        let findings = self
            .findings
            .iter()
            .map(|f| {
                MapBuilder::new()
                    .put("level", f.level.as_str())
                    .put("topic", f.topic.as_str())
                    .put("text", f.text.as_str())
                    .put("fix", f.fix.as_str())
                    .build()
            })
            .collect();
        let status = match self.exit_code() {
            0 => "ok",
            1 => "warnings",
            _ => "refused",
        };
        let mut members = vec![
            ("status".to_string(), Value::from(status)),
            ("exit_code".to_string(), Value::from(self.exit_code())),
        ];
        members.extend(self.sections.iter().cloned());
        members.push(("findings".to_string(), Value::List(findings)));
        Value::Map(members)
    }

    pub fn to_json(&self) -> String {
        self.to_value().to_json()
    }

    /// The report for a person: each section, then the findings, each with its fix.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (name, value) in &self.sections {
            out.push_str(name);
            out.push_str(":\n");
            value.write_text(&mut out, 2);
        }
        if self.findings.is_empty() {
            out.push_str("all well\n");
        }
        for f in &self.findings {
            out.push_str(&format!("{}: {}: {}\n", f.level.as_str(), f.topic, f.text));
            if !f.fix.is_empty() {
                out.push_str(&format!("  fix: {}\n", f.fix));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(layout: &str, env: Environment) -> Request {
        Request {
            checks: Checks::ALL,
            options: Options::default(),
            layout: Layout::parse(layout).unwrap(),
            env,
            now_ms: 1_764_000_000_000,
            margin_days: 365,
            shards: None,
            compare_layout: None,
            take_lease: false,
            reference_pid: 1,
        }
    }

    fn synced() -> Option<clock::KernelClock> {
        Some(clock::KernelClock {
            state: 0,
            status: 0x2001,
            esterror_us: 10,
            maxerror_us: 100,
        })
    }

    #[test]
    fn the_exit_status_is_the_worst_findings() {
        let fixed = Environment::from_vars([("FLAKERY_WORKER_ID", "1")]);
        let ok = report_with_clock(&request("twitter", fixed.clone()), synced(), vec![]).unwrap();
        // twitter passes 2^53: a note, not a warning.
        assert_eq!(ok.exit_code(), 0, "{}", ok.to_text());
        assert!(ok.findings_of(Level::Note).any(|f| f.text.contains("2^53")));
        let baidu = report_with_clock(&request("baidu", fixed.clone()), synced(), vec![]).unwrap();
        assert_eq!(baidu.exit_code(), 2, "ran out in 2024: {}", baidu.to_text());
        let mut unsynced = request("safe53", fixed);
        unsynced.now_ms = 1_764_000_000_000;
        let r = report_with_clock(
            &unsynced,
            synced().map(|k| clock::KernelClock { status: 0x41, ..k }),
            vec![],
        )
        .unwrap();
        assert_eq!(r.exit_code(), 1, "{}", r.to_text());
        let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(json["exit_code"], 1);
        assert_eq!(json["clock"]["synchronised"], false);
        assert_eq!(json["findings"][0]["level"], "warning");
        let warnings: Vec<_> = r.findings_of(Level::Warning).collect();
        assert_eq!(warnings.len(), 1, "{}", r.to_text());
        assert_eq!(warnings[0].topic, "clock");
        assert_eq!(r.findings_of(Level::Refused).count(), 0);
    }
}
