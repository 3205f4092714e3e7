//! No type that holds a secret shows it in `Debug`: every options and configuration type of
//! the workspace this binary links (the server's flags, the core's options and what they
//! become, the client's options, builder and client), each with every secret it can hold set,
//! formatted with `{:?}` and `{:#?}`. The coordinators' own types keep only what these carry
//! (ZooKeeper's credentials and the database URL), shown by their hand-written `Debug`.

use clap::{Args, FromArgMatches};
use flakery::{CoordinatorKind, CoordinatorPlan, DatabaseMode, DatabaseUrl, Environment};

const TOKEN: &str = "tok3n-Secret-A";
const ZK_PASSWORD: &str = "zkPassw0rd-B";
const DB_PASSWORD: &str = "dbPassw0rd-C";
/// A password with characters a URL escapes: neither its text nor its escaped form may show.
const ESCAPED_PASSWORD: &str = "p%40ss-D";

fn secrets() -> [&'static str; 5] {
    [TOKEN, ZK_PASSWORD, DB_PASSWORD, ESCAPED_PASSWORD, "p@ss-D"]
}

fn zookeeper() -> String {
    format!("flakery:{ZK_PASSWORD}@127.0.0.1:2181/ids")
}

fn database_urls() -> Vec<DatabaseUrl> {
    [
        format!("postgres://app:{DB_PASSWORD}@127.0.0.1:5432/ids"),
        format!("mysql://app:{ESCAPED_PASSWORD}@127.0.0.1:3306/ids"),
        format!("postgresql://app@127.0.0.1/ids?sslmode=disable&password={DB_PASSWORD}"),
    ]
    .iter()
    .map(|url| DatabaseUrl::parse(url).unwrap())
    .collect()
}

/// `what`, formatted both ways, shows no secret (and is not empty: it was formatted).
fn hides_secrets(name: &str, what: &dyn std::fmt::Debug) {
    for text in [format!("{what:?}"), format!("{what:#?}")] {
        assert!(text.len() > name.len(), "{name}: {text}");
        for secret in secrets() {
            assert!(!text.contains(secret), "{name} shows a secret: {text}");
        }
    }
}

fn serve_args(args: &[&str]) -> flakery_server::ServeArgs {
    let command = flakery_server::ServeArgs::augment_args(clap::Command::new("serve"));
    let matches = command
        .try_get_matches_from(std::iter::once("serve").chain(args.iter().copied()))
        .unwrap();
    flakery_server::ServeArgs::from_arg_matches(&matches).unwrap()
}

fn core_options() -> flakery::Options {
    flakery::Options {
        zookeeper: Some(zookeeper()),
        database_url: Some(database_urls().remove(0)),
        ..flakery::Options::default()
    }
}

fn client_options() -> flakery_client::Options {
    flakery_client::Options {
        servers: vec!["http://127.0.0.1:9".into()],
        token: Some(TOKEN.into()),
        ..flakery_client::Options::default()
    }
}

#[test]
fn no_options_type_shows_a_secret_in_debug() {
    let serve = serve_args(&["--token", TOKEN, "--worker-id", "1"]);
    assert_eq!(serve.token.as_deref(), Some(TOKEN), "the token was set");
    hides_secrets("ServeArgs", &serve);

    let options = core_options();
    hides_secrets("flakery::Options", &options);
    for url in database_urls() {
        hides_secrets("DatabaseUrl", &url);
        let plan = CoordinatorPlan {
            kind: CoordinatorKind::Database {
                url,
                mode: DatabaseMode::Lease,
                datacenter_id: None,
            },
            namespace: "ids".into(),
            session_timeout_ms: 10_000,
        };
        hides_secrets("CoordinatorPlan (database)", &plan);
        hides_secrets("Plan (database)", &flakery::Plan::Coordinator(plan));
    }
    let plan = CoordinatorPlan {
        kind: CoordinatorKind::ZooKeeper {
            connect: zookeeper(),
        },
        namespace: "ids".into(),
        session_timeout_ms: 10_000,
    };
    hides_secrets("CoordinatorPlan (ZooKeeper)", &plan);

    // The options as the environment gives them, and the plan the core makes of them.
    for (name, value) in [
        ("FLAKERY_ZOOKEEPER", zookeeper()),
        (
            "FLAKERY_DATABASE_URL",
            format!("postgres://app:{DB_PASSWORD}@127.0.0.1/ids"),
        ),
        ("FLAKERY_SERVER_TOKEN", TOKEN.to_string()),
    ] {
        let env = Environment::from_vars([(name, value)]);
        hides_secrets("Environment", &env);
        let layout = flakery::Layout::twitter();
        if name != "FLAKERY_SERVER_TOKEN" {
            let plan =
                flakery::lease::resolve::plan(&flakery::Options::default(), &layout, &env).unwrap();
            hides_secrets("Plan (from the environment)", &plan);
        }
    }

    let client = client_options();
    hides_secrets("flakery_client::Options", &client);
    let builder = flakery_client::Client::builder()
        .server("http://127.0.0.1:9")
        .token(TOKEN);
    hides_secrets("flakery_client::Builder", &builder);
    let client = flakery_client::Client::new(client).unwrap();
    hides_secrets("flakery_client::Client", &client);
}

/// The refusals of a secret that cannot be used do not show it either.
#[test]
fn a_refused_secret_is_not_in_the_error() {
    let serve = serve_args(&["--token", &format!(" {TOKEN}")]);
    let error = serve.checked_token().unwrap_err();
    assert!(!error.contains(TOKEN), "{error}");
    for url in [
        format!("app:{DB_PASSWORD}@127.0.0.1/ids"),
        format!("redis://app:{DB_PASSWORD}@127.0.0.1/ids"),
    ] {
        let error = DatabaseUrl::parse(&url).unwrap_err();
        hides_secrets("DatabaseUrl::parse's error", &error);
    }
}
