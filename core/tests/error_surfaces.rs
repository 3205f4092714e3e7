//! The surfaces that cannot read the core's error codes (`ErrorCode::ALL`) are checked against
//! them as text: the C header's statuses (the same numbers), Go's codes and their sentinels,
//! Python's exception classes, the TypeScript `ErrorCode`, Java's `FlakeryException` and the
//! table of docs/errors.md each have every code and no other. (The Rust bindings match on
//! `ErrorCode` itself, so the compiler holds them to it: bindings-c's status enum, Python's
//! class names, postgres's SQLSTATEs.)

use flakery::ErrorCode;

fn read(path: &str) -> String {
    let path = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every string found between `before` and the next `after` in `text`.
fn between<'a>(text: &'a str, before: &str, after: &str) -> Vec<&'a str> {
    text.split(before)
        .skip(1)
        .filter_map(|rest| rest.split_once(after).map(|(found, _)| found))
        .collect()
}

/// `found` names every code of the core and nothing else but `extra`.
fn same_codes(surface: &str, found: &[&str], extra: &[&str]) {
    for code in ErrorCode::ALL {
        assert!(
            found.contains(&code.as_str()),
            "{surface} has no {code}: {found:?}"
        );
    }
    for name in found {
        assert!(
            ErrorCode::ALL.iter().any(|c| c.as_str() == *name) || extra.contains(name),
            "{surface} has {name}, which is no code of the core's ErrorCode"
        );
    }
}

#[test]
fn the_c_statuses_are_the_codes_with_their_numbers() {
    let header = read("include/flakery.h");
    let statuses = between(&header, "enum flakery_status", "};");
    let statuses: Vec<(String, i32)> = between(statuses[0], "FLAKERY_STATUS_", ",\n")
        .into_iter()
        .filter_map(|member| member.split_once(" = "))
        .map(|(name, n)| (name.to_lowercase(), n.parse().expect("a number")))
        .collect();
    let names: Vec<&str> = statuses.iter().map(|(name, _)| name.as_str()).collect();
    same_codes("flakery.h", &names, &["ok", "panic"]);
    for code in ErrorCode::ALL {
        let (_, number) = statuses.iter().find(|(n, _)| n == code.as_str()).unwrap();
        assert_eq!(*number, code as i32, "FLAKERY_STATUS_ of {code}");
    }
}

#[test]
fn go_has_every_code_and_its_sentinel() {
    let go = read("go/errors.go");
    let codes = between(&go, "Code = \"", "\"");
    same_codes("go/errors.go", &codes, &["panic"]);
    for line in go.lines().filter(|l| l.contains(" Code = \"")) {
        let constant = line.split_whitespace().next().expect("a name");
        let sentinel = format!("Err{} ", constant.trim_start_matches("Code"));
        assert!(
            go.lines().any(|l| l.trim_start().starts_with(&sentinel)
                && l.ends_with(&format!("&Error{{Code: {constant}}}"))),
            "go/errors.go: no sentinel {sentinel}for {constant}"
        );
    }
}

#[test]
fn python_has_a_class_per_code_exported() {
    let errors = read("bindings-python/python/flakery/_errors.py");
    let init = read("bindings-python/python/flakery/__init__.py");
    let codes = between(&errors, "code: ClassVar[str] = \"", "\"");
    same_codes("_errors.py", &codes, &[""]);
    for class in errors.split("\nclass ").skip(1) {
        let name = class.split(['(', ':']).next().unwrap();
        let quoted = format!("\"{name}\"");
        assert!(
            errors.contains(&quoted),
            "_errors.py's __all__ has no {name}"
        );
        assert!(init.contains(&quoted), "flakery's __all__ has no {name}");
    }
}

#[test]
fn typescript_error_code_is_every_code() {
    let types = read("bindings-node/types.d.ts");
    let union = between(&types, "export type ErrorCode =", "\n\n");
    let codes: Vec<&str> = union
        .first()
        .expect("export type ErrorCode")
        .split('|')
        .map(|c| c.trim().trim_matches('\''))
        .filter(|c| !c.is_empty())
        .collect();
    same_codes("types.d.ts", &codes, &[]);
}

#[test]
fn java_and_the_docs_name_every_code() {
    let java = read("java/src/main/java/dev/flakery/FlakeryException.java");
    let doc = java.split("public final class").next().unwrap();
    let codes: Vec<&str> = between(doc, "{@code ", "}");
    same_codes("FlakeryException.java", &codes, &["panic"]);
    let docs = read("docs/errors.md");
    let table = docs
        .split("\n\n")
        .find(|p| p.starts_with("| code |"))
        .unwrap();
    let codes: Vec<&str> = table
        .lines()
        .skip(2)
        .map(|row| between(row, "| `", "`")[0])
        .collect();
    same_codes("docs/errors.md's table", &codes, &[]);
}
