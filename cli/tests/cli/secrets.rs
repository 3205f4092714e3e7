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

/// Words that name a secret in a field's name.
const SECRET_WORDS: [&str; 7] = [
    "token",
    "password",
    "secret",
    "credential",
    "authorization",
    "url",
    "connect",
];

/// Fields with such a name whose `Debug` shows no secret, by their type or their whole line:
/// their type's `Debug` masks it, or it is no secret.
const SHOWN_SAFELY: [(&str, &str); 6] = [
    (
        "bool",
        "a flag named for a secret (send_token_in_clear): whether, never what",
    ),
    (
        "DatabaseUrl",
        "its Debug shows the URL with every password masked",
    ),
    (
        "Option<Credentials>",
        "its Debug shows the user, the password redacted",
    ),
    (
        "*const c_char",
        "a C struct's pointer: Debug shows the address",
    ),
    ("Token", "a lease's holder ID and mark version, no secret"),
    (
        "pub(crate) connect: String,",
        "ZooKeeper's settings: the connect string with its credentials cut off",
    ),
];

/// Every `struct` or `enum` that derives `Debug` in the crates' sources, with the fields
/// whose names say they may hold a secret: `(file, item, field line)`; and how many files
/// were read.
fn derived_debug_with_secret_names() -> (Vec<(String, String, String)>, usize) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut read = 0;
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                // Build output, packages of others, and tests (whose fakes hold no secret).
                let skip = name.starts_with('.')
                    || ["target", "node_modules", "tests"].contains(&name.as_str());
                if !skip {
                    dirs.push(path);
                }
            } else if name.ends_with(".rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                read += 1;
                let file = path.strip_prefix(&root).unwrap().display().to_string();
                found.extend(
                    scan(&text)
                        .into_iter()
                        .map(|(item, field)| (file.clone(), item, field)),
                );
            }
        }
    }
    (found, read)
}

/// `(item, field line)` for each field with a secret's name in an item deriving `Debug`.
fn scan(text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let line = line.trim();
        if !(line.starts_with("#[derive(") && line.contains("Debug")) {
            continue;
        }
        // The item: the next line that is not an attribute or a comment.
        let Some(start) = (at + 1..lines.len()).find(|&i| {
            let l = lines[i].trim();
            !(l.starts_with("#[") || l.starts_with("//"))
        }) else {
            continue;
        };
        let head = lines[start].trim();
        if !(head.contains("struct ") || head.contains("enum ")) || !head.ends_with('{') {
            continue;
        }
        let item = head.trim_end_matches('{').trim().to_string();
        let mut depth = 1;
        for body in &lines[start + 1..] {
            depth += body.matches('{').count() as i32 - body.matches('}').count() as i32;
            if depth <= 0 {
                break;
            }
            let field = body.trim();
            let name = field
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ")
                .split(':')
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            let is_field = field.contains(':') && !field.starts_with("//");
            if is_field && SECRET_WORDS.iter().any(|w| name.contains(w)) {
                found.push((item.clone(), field.to_string()));
            }
        }
    }
    found
}

/// The class, not only the instances above: no type in the workspace's sources derives
/// `Debug` over a field whose name says it may hold a secret, unless that field's type shows
/// it masked (`SHOWN_SAFELY`, each with its reason). A new `token: String` in a type that
/// derives `Debug` fails here.
#[test]
fn nothing_that_holds_a_secret_derives_debug() {
    let (found, read) = derived_debug_with_secret_names();
    assert!(read > 100, "the scan read {read} files");
    let unsafe_fields: Vec<_> = found
        .iter()
        .filter(|(_, _, field)| {
            let ty = field.split_once(':').map_or("", |(_, ty)| ty.trim());
            let ty = ty.trim_end_matches(',');
            !SHOWN_SAFELY
                .iter()
                .any(|(safe, _why)| *safe == ty || *safe == field)
        })
        .collect();
    assert!(
        unsafe_fields.is_empty(),
        "these derive Debug over what may be a secret: write Debug by hand, hiding it \
         (as ServeArgs does): {unsafe_fields:#?}"
    );
}
