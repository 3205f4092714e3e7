//! A coordinator's namespace counted without taking a lease: the node IDs held and free, the
//! oldest holder and how fast node IDs are taken. The core knows no coordinator's protocol:
//! each coordinator crate fills a `Census` with its own client (`Connector::census`), and the
//! report (`section`) and its findings are made here, once for all of them.

use super::value::{MapBuilder, Value};
use super::{Finding, Level};

/// The most unreadable records a census names one by one (the rest are counted).
pub const MAX_NAMED: usize = 16;

/// How long before none is free the report warns.
const WARN_HOURS: f64 = 24.0;

/// What a coordinator's records say of its namespace, read without taking a lease.
#[derive(Debug, Clone, PartialEq)]
pub struct Census {
    /// The node IDs a claim may take: the layout's, or a fixed datacenter's workers.
    pub range: u64,
    /// Those a claim would not take: held by a live holder, or unreadable (below).
    pub held: u64,
    /// Records a claim cannot use because they cannot be read (a garbled high-water mark, a
    /// time far ahead): counted as held, at most `MAX_NAMED` named, each with why.
    pub unreadable: Vec<String>,
    /// How many records are unreadable, the unnamed ones included.
    pub unreadable_count: u64,
    /// The live holder held longest, or why the coordinator cannot tell.
    pub oldest: Result<Option<Holder>, String>,
    /// Node IDs taken in the last hour (as the coordinator's history counts them), or why
    /// it cannot tell.
    pub taken_last_hour: Result<u64, String>,
    /// Which timestamps the ages and the rate come from, and what they miss.
    pub basis: String,
}

/// One live holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub node_index: u64,
    /// How long it has been held, by the record's own claim time.
    pub held_ms: i64,
    /// The holder's own note (host and process), as stored.
    pub name: String,
}

impl Census {
    pub fn free(&self) -> u64 {
        self.range.saturating_sub(self.held)
    }

    /// Adds an unreadable record, naming it while fewer than `MAX_NAMED` are.
    pub fn note_unreadable(&mut self, what: String) {
        self.unreadable_count += 1;
        if self.unreadable.len() < MAX_NAMED {
            self.unreadable.push(what);
        }
    }

    /// Hours until none is free at the last hour's rate; `None` when none were taken.
    fn hours_left(&self) -> Option<Result<f64, String>> {
        match &self.taken_last_hour {
            Ok(0) => None,
            Ok(n) => Some(Ok(self.free() as f64 / *n as f64)),
            Err(why) => Some(Err(why.clone())),
        }
    }
}

fn render_hours(hours: f64) -> String {
    if hours < 48.0 {
        format!("{hours:.1} hours")
    } else {
        format!("{:.1} days", hours / 24.0)
    }
}

/// The census as the report's `node_ids` member, with its findings: refused when none is
/// free (a generator would fail with `worker_ids_exhausted`), a warning when few are or
/// when the last hour's rate would take the rest within a day.
pub fn section(census: &Census, what: &str, findings: &mut Vec<Finding>) -> Value {
    let free = census.free();
    let mut map = MapBuilder::new()
        .put("range", census.range)
        .put("held", census.held)
        .put("free", free)
        .put("unreadable", census.unreadable_count);
    if census.unreadable_count > 0 {
        let mut named: Vec<Value> = census
            .unreadable
            .iter()
            .map(|u| Value::from(u.as_str()))
            .collect();
        let unnamed = census.unreadable_count - census.unreadable.len() as u64;
        if unnamed > 0 {
            named.push(Value::from(format!("and {unnamed} more")));
        }
        map = map.put("unreadable_records", Value::List(named));
        findings.push(Finding::new(
            Level::Warning,
            "coordinator",
            &format!(
                "{} record(s) of {what} cannot be read (edited by hand?): counted as held, as a \
                 claim will not take them",
                census.unreadable_count
            ),
            "fix or delete those records, but only if no generator can have used their node \
             IDs since (their high-water marks keep IDs unique)",
        ));
    }
    map = map.put(
        "oldest_holder",
        match &census.oldest {
            Ok(Some(h)) => MapBuilder::new()
                .put("node_index", h.node_index)
                .put("held_s", h.held_ms / 1000)
                .put("holder", h.name.as_str())
                .build(),
            Ok(None) => Value::from("none: no node ID is held"),
            Err(why) => Value::from(format!("cannot tell: {why}")),
        },
    );
    map = map.put(
        "taken_last_hour",
        match &census.taken_last_hour {
            Ok(n) => Value::from(*n),
            Err(why) => Value::from(format!("cannot tell: {why}")),
        },
    );
    let hours = census.hours_left();
    map = map.put(
        "none_free_in",
        match &hours {
            _ if free == 0 => Value::from("none is free now"),
            None => Value::from("never at the last hour's rate (none taken)"),
            Some(Ok(h)) => Value::from(render_hours(*h)),
            Some(Err(_)) => Value::from("cannot tell: no rate (above)"),
        },
    );
    map = map.put("basis", census.basis.as_str());
    // Few: at most a tenth of the range, and at least the last one.
    let few = free.saturating_mul(10) <= census.range || free <= 1;
    if free == 0 {
        findings.push(Finding::new(
            Level::Refused,
            "coordinator",
            &format!(
                "all {} node IDs of {what} are held: a new generator would fail with \
                 worker_ids_exhausted",
                census.range
            ),
            "",
        ));
    } else if few || matches!(hours, Some(Ok(h)) if h < WARN_HOURS) {
        let rate = match hours {
            Some(Ok(h)) => format!(", none left in {} at the last hour's rate", render_hours(h)),
            _ => String::new(),
        };
        findings.push(Finding::new(
            Level::Warning,
            "coordinator",
            &format!(
                "only {free} of {} node IDs of {what} are free{rate}",
                census.range
            ),
            "stop the holders that should not run (a crashed holder's node ID frees itself \
             after the session timeout or lease term), give each namespace fewer generators \
             (one per process, not per thread or request), or move to a layout with more node \
             bits",
        ));
    }
    map.build()
}

/// The section's member when the census failed: a finding, not a crash. A warning, since
/// an outage or a login refused may pass; refused when the coordinator's crate marks the
/// error as an option's (`Error::about`, a bad `sslmode`): a generator is refused for it too.
pub fn failed(error: &crate::error::Error, what: &str, findings: &mut Vec<Finding>) -> Value {
    let level = match (error.code(), error.option()) {
        (crate::error::ErrorCode::InvalidArgument, Some(_)) => Level::Refused,
        _ => Level::Warning,
    };
    findings.push(Finding::new(
        level,
        "coordinator",
        &format!(
            "the node IDs of {what} could not be counted: {}",
            error.message()
        ),
        "check the coordinator's address, credentials and TLS; a generator would fail the same \
         way",
    ));
    Value::from(format!(
        "not counted: {}: {}",
        error.code(),
        error.message()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn census(range: u64, held: u64, taken: Result<u64, String>) -> Census {
        Census {
            range,
            held,
            unreadable: vec![],
            unreadable_count: 0,
            oldest: Ok(None),
            taken_last_hour: taken,
            basis: String::new(),
        }
    }

    fn levels(c: &Census) -> Vec<Level> {
        let mut findings = Vec::new();
        section(c, "x", &mut findings);
        findings.into_iter().map(|f| f.level).collect()
    }

    #[test]
    fn few_free_warns_and_none_free_is_refused() {
        assert!(levels(&census(1024, 10, Ok(0))).is_empty());
        assert_eq!(levels(&census(4, 3, Ok(0))), vec![Level::Warning]);
        assert_eq!(levels(&census(1024, 930, Ok(0))), vec![Level::Warning]);
        assert_eq!(levels(&census(4, 4, Ok(0))), vec![Level::Refused]);
        // 500 free, 30 an hour: gone in under 17 hours.
        assert_eq!(levels(&census(1024, 524, Ok(30))), vec![Level::Warning]);
        assert!(levels(&census(1024, 524, Ok(10))).is_empty());
        assert!(levels(&census(1024, 524, Err("no history".into()))).is_empty());
    }

    #[test]
    fn a_census_failed_on_an_options_value_is_refused_any_other_warns() {
        use crate::error::Error;
        let level = |error: Error| {
            let mut findings = Vec::new();
            failed(&error, "x", &mut findings);
            findings[0].level
        };
        let bad_url = Error::invalid_argument("sslmode 'bogus'").about("database_url");
        assert_eq!(level(bad_url), Level::Refused);
        assert_eq!(
            level(Error::invalid_argument("cannot count")),
            Level::Warning
        );
        let timeout = Error::new(crate::error::ErrorCode::CoordinatorUnavailable, "silent");
        assert_eq!(level(timeout), Level::Warning);
    }

    #[test]
    fn unreadable_records_are_named_up_to_a_bound() {
        let mut c = census(1024, 0, Ok(0));
        for i in 0..40 {
            c.note_unreadable(format!("record {i}"));
        }
        let mut findings = Vec::new();
        let json = section(&c, "x", &mut findings).to_json();
        assert_eq!(c.unreadable.len(), MAX_NAMED);
        assert!(json.contains("and 24 more"), "{json}");
        assert_eq!(findings[0].level, Level::Warning);
    }
}
