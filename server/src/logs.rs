//! The server's log: text or JSON lines on stderr, filtered by `FLAKERY_LOG`. Lines that
//! dependencies write through the `log` crate (the ZooKeeper and database clients) are
//! carried over with their level, target and message only: never the source file and line
//! of the build machine, which tell an operator nothing and leak its paths.

pub fn init(format: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("FLAKERY_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let level = filter
        .max_level_hint()
        .and_then(|l| l.into_level())
        .map_or(log::LevelFilter::Info, level_filter);
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    // Not `try_init`: it would install tracing-log's bridge, which copies `log.file`.
    let installed = if format == "json" {
        tracing::subscriber::set_global_default(builder.json().finish())
    } else {
        tracing::subscriber::set_global_default(builder.finish())
    };
    if installed.is_ok() && log::set_boxed_logger(Box::new(Bridge)).is_ok() {
        log::set_max_level(level);
    }
}

fn level_filter(level: tracing::Level) -> log::LevelFilter {
    match level {
        tracing::Level::ERROR => log::LevelFilter::Error,
        tracing::Level::WARN => log::LevelFilter::Warn,
        tracing::Level::INFO => log::LevelFilter::Info,
        tracing::Level::DEBUG => log::LevelFilter::Debug,
        tracing::Level::TRACE => log::LevelFilter::Trace,
    }
}

/// Forwards a dependency's `log` record as a tracing event of target `dependency`, with the
/// dependency's own target (`zookeeper::io`) as a field.
struct Bridge;

impl log::Log for Bridge {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record) {
        let (from, message) = (record.target(), record.args());
        // rustls warns of what one client sent (an IP address as SNI, which wrk and curl
        // send): a line per connection that any client could make, so at debug.
        let level = match record.level() {
            log::Level::Error | log::Level::Warn if from.starts_with("rustls") => log::Level::Debug,
            level => level,
        };
        match level {
            log::Level::Error => tracing::error!(target: "dependency", from, "{message}"),
            log::Level::Warn => tracing::warn!(target: "dependency", from, "{message}"),
            log::Level::Info => tracing::info!(target: "dependency", from, "{message}"),
            log::Level::Debug => tracing::debug!(target: "dependency", from, "{message}"),
            log::Level::Trace => tracing::trace!(target: "dependency", from, "{message}"),
        }
    }

    fn flush(&self) {}
}
