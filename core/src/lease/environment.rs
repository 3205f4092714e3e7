//! The part of the environment that chooses a node ID: the `FLAKERY_*` variables of
//! docs/spec.md#node-identity and the host name, read once into a value. `resolve::plan` reads
//! only this snapshot, so a test builds one by hand instead of setting variables of its
//! process, and a generator's plan cannot see the environment change half way.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;

use crate::error::{Error, Result};

/// The variables `resolve::plan` reads. (`FLAKERY_LAYOUT` is the options' own: the layout is
/// resolved before the node ID.)
pub const NODE_VARIABLES: [&str; 8] = [
    "FLAKERY_WORKER_ID",
    "FLAKERY_DATACENTER_ID",
    "FLAKERY_ZOOKEEPER",
    "FLAKERY_DATABASE_URL",
    "FLAKERY_DATABASE_MODE",
    "FLAKERY_NAMESPACE",
    "FLAKERY_SESSION_TIMEOUT_MS",
    "FLAKERY_LEASE_DIR",
];

/// A snapshot of `NODE_VARIABLES` and the host name. `Debug` names the variables set, never
/// their values (a connect string or a database URL may hold a password).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Environment {
    vars: BTreeMap<String, OsString>,
    /// `None`: the host name could not be read (an error only if a plan needs it).
    host_name: Option<String>,
}

impl Environment {
    /// This process's variables and host name, now.
    pub fn capture() -> Environment {
        Environment {
            vars: NODE_VARIABLES
                .iter()
                .filter_map(|name| Some((name.to_string(), std::env::var_os(name)?)))
                .collect(),
            host_name: read_host_name(),
        }
    }

    /// A snapshot of the given variables (others unset) and no host name: for tests, and for
    /// programs that take their configuration from elsewhere than their own environment.
    pub fn from_vars<K: Into<String>, V: Into<OsString>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Environment {
        Environment {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            host_name: None,
        }
    }

    /// The same with `host_name` as the host's name.
    pub fn with_host_name(mut self, host_name: impl Into<String>) -> Environment {
        self.host_name = Some(host_name.into());
        self
    }

    /// A variable, trimmed; unset and empty are the same, and a value that is not Unicode is
    /// an error.
    pub fn var(&self, name: &str) -> Result<Option<String>> {
        match self.vars.get(name).map(|value| value.to_str()) {
            None => Ok(None),
            Some(None) => Err(not_unicode(name)),
            Some(Some(value)) if value.trim().is_empty() => Ok(None),
            Some(Some(value)) => Ok(Some(value.trim().to_string())),
        }
    }

    /// A variable holding a non-negative integer in canonical decimal (`crate::decimal`):
    /// unset or empty is `None`; the value is read untrimmed (` 5` is refused as
    /// `--worker-id ' 5'` is).
    pub fn u64(&self, name: &str) -> Result<Option<u64>> {
        match self.vars.get(name).map(|value| value.to_str()) {
            None => Ok(None),
            Some(None) => Err(not_unicode(name)),
            Some(Some(value)) if value.trim().is_empty() => Ok(None),
            Some(Some(value)) => crate::decimal::parse_u64(name, value).map(Some),
        }
    }

    /// The host name, or the refusal to go on without it.
    pub fn host_name(&self) -> Result<&str> {
        self.host_name
            .as_deref()
            .ok_or_else(|| Error::invalid_argument("cannot read the host name"))
    }
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Environment")
            .field("set", &self.vars.keys().collect::<Vec<_>>())
            .field("host_name", &self.host_name)
            .finish()
    }
}

fn not_unicode(name: &str) -> Error {
    Error::invalid_argument(format!("{name} is not valid UTF-8"))
}

/// This host's name (coordinators write it into their records for operators).
pub fn host_name() -> Result<String> {
    read_host_name().ok_or_else(|| Error::invalid_argument("cannot read the host name"))
}

fn read_host_name() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length, which is passed.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_as_the_process_environment_is() {
        let env = Environment::from_vars([
            ("FLAKERY_WORKER_ID", " 5"),
            ("FLAKERY_NAMESPACE", " ids "),
            ("FLAKERY_ZOOKEEPER", "  "),
        ]);
        assert_eq!(
            env.var("FLAKERY_NAMESPACE").unwrap().as_deref(),
            Some("ids")
        );
        assert_eq!(env.var("FLAKERY_ZOOKEEPER").unwrap(), None);
        assert!(env.u64("FLAKERY_WORKER_ID").is_err(), "read untrimmed");
        assert_eq!(env.u64("FLAKERY_DATACENTER_ID").unwrap(), None);
        assert!(env.host_name().is_err());
        let shown = format!(
            "{:?}",
            Environment::from_vars([("FLAKERY_ZOOKEEPER", "u:pw@h")])
        );
        assert!(!shown.contains("pw"), "{shown}");
    }
}
