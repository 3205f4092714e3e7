//! How options left unset are filled from the FLAKERY_* variables (core/src/lease/resolve.rs), on
//! any values the variables can hold, checked against a model of the documented rules:
//! unset, empty and blank are "not given"; values are trimmed (numbers are not: they are
//! canonical decimal, as every surface reads them); a value that is not UTF-8 is
//! `invalid_argument` naming the variable; numbers are unsigned decimal integers; a namespace
//! is one safe path segment; an explicit option wins over its variable.
//!
//! Input: lines. Lines 1 to 7 are the values of the variables in `VARS` (a line that is just
//! `!` leaves the variable unset, a missing line too); then the explicit options `namespace`,
//! `session_timeout_ms`, `zookeeper` and `layout` (`!` or missing: not given).
//!
//! The target sets real process variables with `std::env::set_var`. That is sound here only
//! because libFuzzer runs the target on one thread (never run it with -fork/-jobs threads in
//! one process: each libFuzzer job is its own process) and nothing else in this process reads
//! the environment concurrently. Setting every variable on each input, unset ones removed,
//! keeps one input from leaking into the next. NUL bytes are dropped from values: no
//! environment can carry them (set_var refuses them), so they are not inputs flakery can see.
#![no_main]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use std::sync::OnceLock;

use flakery::options::{
    env_var, hostname_ordinal, node_from_env, resolved_namespace, resolved_session_timeout_ms,
    resolved_zookeeper, DEFAULT_NAMESPACE, DEFAULT_SESSION_TIMEOUT_MS,
};
use flakery::{ErrorCode, Layout, NodeId, NodeSource, Options};
use libfuzzer_sys::fuzz_target;

const VARS: [&str; 7] = [
    "FLAKERY_LAYOUT",
    "FLAKERY_DATACENTER_ID",
    "FLAKERY_WORKER_ID",
    "FLAKERY_NAMESPACE",
    "FLAKERY_SESSION_TIMEOUT_MS",
    "FLAKERY_ZOOKEEPER",
    "FLAKERY_LEASE_DIR",
];

/// Two rules issue 10 changes in options.rs (class 4 and 7), as today's main has them. Whichever
/// way the core goes, the model must say the same or the target fails; flip them when the
/// change lands.
/// - Numbers: today `u64::from_str`, which also takes "+3" and "03"; canonical decimal only
///   (digits, no sign, no leading zero) after the change.
const CANONICAL_NUMBERS_ONLY: bool = true;
/// - `FLAKERY_DATACENTER_ID` alone: today a fixed node with worker 0; after the change it is
///   no fixed node (the worker is leased under that datacenter).
const DATACENTER_ALONE_IS_LEASED: bool = true;

/// The model's error: the code and the variable the message must name.
#[derive(Debug, PartialEq)]
struct Refusal(ErrorCode, &'static str);

type Model<T> = Result<T, Refusal>;

fn model_var(name: &'static str, raw: Option<&[u8]>) -> Model<Option<String>> {
    let Some(raw) = raw else { return Ok(None) };
    let text = std::str::from_utf8(raw).map_err(|_| Refusal(ErrorCode::InvalidArgument, name))?;
    let text = text.trim();
    Ok((!text.is_empty()).then(|| text.to_string()))
}

fn model_number(name: &'static str, raw: Option<&[u8]>) -> Model<Option<u64>> {
    if model_var(name, raw)?.is_none() {
        return Ok(None);
    }
    // Blank is unset, but a number is read untrimmed: " 5" is refused, as everywhere.
    let text = raw.map(String::from_utf8_lossy).unwrap_or_default();
    let text = if CANONICAL_NUMBERS_ONLY {
        &text[..]
    } else {
        text.trim()
    };
    let digits = match text.strip_prefix('+') {
        Some(rest) if !CANONICAL_NUMBERS_ONLY => rest,
        _ => text,
    };
    let leading_zero = digits.len() > 1 && digits.starts_with('0');
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (CANONICAL_NUMBERS_ONLY && leading_zero)
    {
        return Err(Refusal(ErrorCode::InvalidArgument, name));
    }
    digits
        .bytes()
        .try_fold(0u64, |acc, b| {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        })
        .map(Some)
        .ok_or(Refusal(ErrorCode::InvalidArgument, name))
}

fn host_name() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .expect("the host name")
            .trim_end_matches('\n')
            .to_string()
    })
}

fn model_node(vars: &[Option<Vec<u8>>]) -> Model<Option<(NodeId, NodeSource)>> {
    let datacenter = model_number(VARS[1], vars[1].as_deref())?;
    let (worker, source) = match model_var(VARS[2], vars[2].as_deref())?.as_deref() {
        Some("hostname-ordinal") => {
            let ordinal = hostname_ordinal(host_name())
                .map_err(|_| Refusal(ErrorCode::InvalidArgument, "FLAKERY_WORKER_ID"))?;
            (Some(ordinal), NodeSource::Hostname)
        }
        _ => (
            model_number(VARS[2], vars[2].as_deref())?,
            NodeSource::Environment,
        ),
    };
    if worker.is_none() && (datacenter.is_none() || DATACENTER_ALONE_IS_LEASED) {
        return Ok(None);
    }
    let node = NodeId {
        datacenter_id: datacenter.unwrap_or(0),
        worker_id: worker.unwrap_or(0),
    };
    Ok(Some((node, source)))
}

fn model_namespace(options: &Options, raw: Option<&[u8]>) -> Model<String> {
    let namespace = match &options.namespace {
        Some(namespace) => namespace.clone(),
        None => model_var(VARS[3], raw)?.unwrap_or_else(|| DEFAULT_NAMESPACE.to_string()),
    };
    let safe = (1..=64).contains(&namespace.len())
        && namespace
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        && namespace != "."
        && namespace != "..";
    if !safe {
        return Err(Refusal(ErrorCode::InvalidArgument, "namespace"));
    }
    Ok(namespace)
}

/// `got` must be what the model says; a refusal must have the code and name the variable.
fn agree<T: PartialEq + std::fmt::Debug>(what: &str, got: flakery::Result<T>, model: Model<T>) {
    match (got, model) {
        (Ok(got), Ok(model)) => assert_eq!(got, model, "{what}"),
        (Err(e), Err(Refusal(code, name))) => {
            assert_eq!(e.code(), code, "{what}: {e}");
            assert!(
                e.message().contains(name),
                "{what}: '{e}' does not name {name}"
            );
        }
        (got, model) => panic!("{what}: flakery gives {got:?}, the model {model:?}"),
    }
}

fn option_line(line: Option<&[u8]>) -> Option<String> {
    match line {
        None | Some(b"!") => None,
        Some(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|&b| b == b'\n');
    let mut vars: Vec<Option<Vec<u8>>> = Vec::new();
    for name in VARS {
        let value = match lines.next() {
            None | Some(b"!") => None,
            Some(bytes) => Some(
                bytes
                    .iter()
                    .copied()
                    .filter(|&b| b != 0)
                    .collect::<Vec<u8>>(),
            ),
        };
        match &value {
            Some(v) => std::env::set_var(name, OsStr::from_bytes(v)),
            None => std::env::remove_var(name),
        }
        vars.push(value);
    }
    let layout_line = |line: Option<String>| line.and_then(|spec| Layout::parse(&spec).ok());
    let options = Options {
        namespace: option_line(lines.next()),
        session_timeout_ms: option_line(lines.next()).and_then(|t| t.parse().ok()),
        zookeeper: option_line(lines.next()),
        layout: layout_line(option_line(lines.next())),
        ..Options::default()
    };

    for (name, value) in VARS.iter().zip(&vars) {
        agree(name, env_var(name), model_var(name, value.as_deref()));
    }

    let layout_model = match &options.layout {
        Some(layout) => Ok(layout.clone()),
        None => match model_var(VARS[0], vars[0].as_deref()) {
            Err(refusal) => Err(refusal),
            Ok(None) => Ok(Layout::twitter()),
            // The spec itself is Layout::parse's business (the layout_parse target): here
            // only that the variable's trimmed text is what gets parsed.
            Ok(Some(spec)) => match Layout::parse(&spec) {
                Ok(layout) => Ok(layout),
                Err(e) => {
                    assert_eq!(options.resolved_layout(), Err(e));
                    return;
                }
            },
        },
    };
    agree("resolved_layout", options.resolved_layout(), layout_model);

    agree("node_from_env", node_from_env(), model_node(&vars));

    let namespace = resolved_namespace(&options);
    if let Ok(ns) = &namespace {
        // Whatever the rules, a namespace is joined to the lease directory: it must stay one
        // plain segment below it.
        let parts: Vec<Component> = Path::new(ns).components().collect();
        assert_eq!(
            parts,
            [Component::Normal(OsStr::new(ns))],
            "namespace {ns:?}"
        );
    }
    agree(
        "resolved_namespace",
        namespace,
        model_namespace(&options, vars[3].as_deref()),
    );

    // 0 is refused, from the option or the variable: no surface reads it as "not given".
    let at_least_1 = |ms: u64, name: &'static str| match ms {
        0 => Err(Refusal(ErrorCode::InvalidArgument, name)),
        ms => Ok(ms),
    };
    let timeout_model = match options.session_timeout_ms {
        Some(ms) => at_least_1(ms, "session_timeout_ms"),
        None => model_number(VARS[4], vars[4].as_deref()).and_then(|ms| match ms {
            Some(ms) => at_least_1(ms, VARS[4]),
            None => Ok(DEFAULT_SESSION_TIMEOUT_MS),
        }),
    };
    agree(
        "resolved_session_timeout_ms",
        resolved_session_timeout_ms(&options),
        timeout_model,
    );

    let zookeeper_model = match options.zookeeper.as_deref().map(str::trim) {
        Some(connect) if !connect.is_empty() => Ok(Some(connect.to_string())),
        _ => model_var(VARS[5], vars[5].as_deref()),
    };
    agree(
        "resolved_zookeeper",
        resolved_zookeeper(&options),
        zookeeper_model,
    );
});
