//! The surfaces that cannot read the options table (core/src/option_table/) are checked
//! against it as text: the C header's `flakery_options`, the Go package's `Options`, the
//! TypeScript `GeneratorOptions` and the Python stub's `Generator.__new__`. Each must have
//! every option, in the table's order, under the surface's name, with the surface's type for
//! its kind, and the table's default where the surface writes one; so must the client options
//! of C, Go, TypeScript and the Python stub's `Client.__new__` against the client's table.
//! (The Python runtime is checked against the stub by stubtest in tests/python, and
//! `flakery.Client`'s keywords against docs/client.md in tests/client; the Node keys are the
//! table's; the flags of `flakery next` and `flakery serve` are checked through clap in their
//! crates.)

use flakery::option_table::{ClientKind, Kind, OptionSpec, CLIENT_OPTIONS, OPTIONS};

fn read(path: &str) -> String {
    let path = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The lines between the line that starts with `open` and the next line that starts with
/// `close` (both trimmed), with each line's comment lines before it joined.
fn block(text: &str, open: &str, close: &str) -> Vec<(String, String)> {
    let mut lines = text.lines().map(str::trim);
    lines
        .by_ref()
        .find(|line| line.starts_with(open))
        .unwrap_or_else(|| panic!("no '{open}'"));
    let mut out = Vec::new();
    let mut comment = String::new();
    for line in lines {
        if line.starts_with(close) {
            return out;
        }
        if line.starts_with("//") || line.starts_with("/*") || line.starts_with('*') {
            comment.push_str(line);
            comment.push(' ');
        } else if !line.is_empty() {
            out.push((line.to_string(), std::mem::take(&mut comment)));
        }
    }
    panic!("no '{close}' after '{open}'");
}

/// Checks `members` (name, type, comment) against the table: every option in order, by
/// `name`, of type `ty`, each with `default_ok`.
fn check(
    surface: &str,
    members: &[(String, String, String)],
    name: impl Fn(&OptionSpec) -> &'static str,
    ty: impl Fn(Kind) -> &'static str,
    default_ok: impl Fn(&OptionSpec, &str, &str) -> bool,
) {
    check_against(&OPTIONS, surface, members, name, ty, default_ok)
}

/// `check` against `table` (the generator's or the client's).
fn check_against<K: Copy>(
    table: &[OptionSpec<K>],
    surface: &str,
    members: &[(String, String, String)],
    name: impl Fn(&OptionSpec<K>) -> &'static str,
    ty: impl Fn(K) -> &'static str,
    default_ok: impl Fn(&OptionSpec<K>, &str, &str) -> bool,
) {
    let mut at = 0;
    let mut skipped = Vec::new();
    for option in table {
        let want = name(option);
        let found = members[at..].iter().position(|(n, _, _)| n == want);
        if let Some(found) = found {
            skipped.extend(members[at..at + found].iter().map(|m| m.0.clone()));
        }
        let Some(found) = found else {
            panic!(
                "{surface}: no {want} (the option {}) after {:?}, in the table's order",
                option.rust,
                members.get(at.wrapping_sub(1)).map(|m| &m.0)
            );
        };
        let (_, member_type, comment) = &members[at + found];
        assert_eq!(
            member_type,
            ty(option.kind),
            "{surface}: the type of {want}"
        );
        assert!(
            default_ok(option, member_type, comment),
            "{surface}: {want} does not say the table's default {:?} ({comment})",
            option.default
        );
        at += found + 1;
    }
    skipped.extend(members[at..].iter().map(|m| m.0.clone()));
    // No member that is not an option of the table, but the C struct's own bookkeeping (its
    // size, which optional integers are set, the lengths and values of the fields' arrays).
    const BOOKKEEPING: [&str; 5] = [
        "struct_size",
        "has_datacenter_id",
        "has_worker_id",
        "field_values",
        "field_count",
    ];
    skipped.retain(|member| !BOOKKEEPING.contains(&member.as_str()));
    assert!(
        skipped.is_empty(),
        "{surface}: members that are no option of the table: {skipped:?}"
    );
}

/// Whether `comment` says `phrase` (such as `default 5000`) as a whole: not `default 50000`.
fn says(comment: &str, phrase: &str) -> bool {
    comment.match_indices(phrase).any(|(i, _)| {
        !comment[i + phrase.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

/// The members of the C struct that opens with `open`.
fn c_members(header: &str, open: &str) -> Vec<(String, String, String)> {
    block(header, open, "}")
        .into_iter()
        .map(|(line, comment)| {
            let line = line.trim_end_matches(';');
            let at = line.rfind([' ', '*']).expect("a member") + 1;
            (
                line[at..].to_string(),
                line[..at].trim_end().to_string(),
                comment,
            )
        })
        .collect()
}

/// The fields of the Go struct that opens with `open`.
fn go_fields(go: &str, open: &str) -> Vec<(String, String, String)> {
    block(go, open, "}")
        .into_iter()
        .map(|(line, comment)| {
            let mut words = line.split_whitespace();
            let name = words.next().unwrap_or_default().to_string();
            (name, words.collect::<Vec<_>>().join(" "), comment)
        })
        .collect()
}

/// The keys of the TypeScript interface that opens with `open`.
fn typescript_keys(types: &str, open: &str) -> Vec<(String, String, String)> {
    block(types, open, "}")
        .into_iter()
        .map(|(line, comment)| {
            let (name, ty) = line.split_once("?: ").expect("an optional key");
            (name.to_string(), ty.to_string(), comment)
        })
        .collect()
}

#[test]
fn the_c_header_has_every_option() {
    let header = read("include/flakery.h");
    let members = c_members(&header, "typedef struct flakery_options {");
    // C's defaults are flakery_options_init's (bindings-c checks them against the table).
    check("flakery.h", &members, |o| o.c, Kind::c_type, |_, _, _| true);
}

#[test]
fn the_client_options_of_every_surface_are_the_client_table() {
    // A zero (C) or a key not given (TypeScript) is the default, which each member's comment
    // states.
    let states_default = |prefix: &'static str| {
        move |o: &OptionSpec<ClientKind>, _: &str, comment: &str| match (o.kind, o.default) {
            (ClientKind::Duration | ClientKind::BlockSize, Some(default)) => {
                says(comment, &format!("{prefix}{default}"))
            }
            _ => true,
        }
    };
    let header = read("include/flakery.h");
    let members = c_members(&header, "typedef struct flakery_client_options {");
    check_against(
        &CLIENT_OPTIONS,
        "flakery.h's flakery_client_options",
        &members,
        |o| o.c,
        ClientKind::c_type,
        states_default("default "),
    );
    let types = read("bindings-node/types.d.ts");
    let keys = typescript_keys(&types, "export interface ClientOptions {");
    check_against(
        &CLIENT_OPTIONS,
        "types.d.ts's ClientOptions",
        &keys,
        |o| o.js,
        ClientKind::typescript_type,
        states_default("Default "),
    );
    // Go's defaults are DefaultClientOptions()'s, which C's init writes (a zero is refused).
    let go = read("go/client.go");
    let fields = go_fields(&go, "type ClientOptions struct {");
    check_against(
        &CLIENT_OPTIONS,
        "go/client.go's ClientOptions",
        &fields,
        |o| o.go,
        ClientKind::go_type,
        |_, _, _| true,
    );
}

#[test]
fn the_go_struct_has_every_option() {
    let go = read("go/generator.go");
    let members = go_fields(&go, "type Options struct {");
    // A zero value is "not given"; a default of its own is written in the field's comment.
    check(
        "go/generator.go",
        &members,
        |o| o.go,
        Kind::go_type,
        |o, _, comment| match (o.kind, o.default) {
            (Kind::Millis, Some(default)) => says(comment, &format!("default {default}")),
            _ => true,
        },
    );
}

#[test]
fn the_typescript_options_have_every_option() {
    let types = read("bindings-node/types.d.ts");
    let members = typescript_keys(&types, "export interface GeneratorOptions {");
    check(
        "types.d.ts",
        &members,
        |o| o.js,
        Kind::typescript_type,
        |o, _, comment| match (o.kind, o.default) {
            (Kind::Millis, Some(default)) => says(comment, &format!("Default {default}")),
            _ => true,
        },
    );
}

/// The keywords of `class`'s `__new__` in the stub: name, annotation, and default.
fn python_keywords(stub: &str, class: &str) -> Vec<(String, String, String)> {
    let class = stub
        .split(&format!("class {class}:"))
        .nth(1)
        .unwrap_or_else(|| panic!("class {class}"));
    block(class, "def __new__(", ")")
        .into_iter()
        .filter(|(line, _)| line != "cls," && line != "*,")
        .map(|(line, _)| {
            let (name, rest) = line.split_once(": ").expect("an annotated keyword");
            let (ty, default) = rest
                .trim_end_matches(',')
                .split_once(" = ")
                .expect("a default");
            (name.to_string(), ty.to_string(), default.to_string())
        })
        .collect()
}

/// Whether a stub's `default` is the table's, as Python writes it.
fn python_default<K>(o: &OptionSpec<K>, default: &str) -> bool {
    default
        == match o.default {
            None => "None".to_string(),
            Some("false") => "False".to_string(),
            Some("true") => "True".to_string(),
            Some(number) if number.parse::<u64>().is_ok() => number.to_string(),
            Some(text) => format!("\"{text}\""),
        }
}

#[test]
fn the_python_stub_has_every_option() {
    let stub = read("bindings-python/python/flakery/_flakery.pyi");
    check(
        "_flakery.pyi's Generator",
        &python_keywords(&stub, "Generator"),
        |o| o.python,
        Kind::python_type,
        |o, _, default| python_default(o, default),
    );
    check_against(
        &CLIENT_OPTIONS,
        "_flakery.pyi's Client",
        &python_keywords(&stub, "Client"),
        |o| o.python,
        ClientKind::python_type,
        |o, _, default| python_default(o, default),
    );
}
