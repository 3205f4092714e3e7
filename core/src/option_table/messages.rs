//! How a message names an option on each surface: the core writes its messages with the
//! Rust names (`worker_id`); the surface that shows one passes itself to `message_on`, which
//! rewrites each whole word that is an option's Rust name to the surface's spelling from the
//! table (`workerId`, `--worker-id`). Only names of more than one word are rewritten: they are
//! identifiers that appear in messages only as option names, while `layout` or `namespace`
//! are also plain words of a sentence ("the layout's epoch").

use std::borrow::Cow;

use super::{name_of, Surface};
use crate::error::Error;

/// `error`'s message with every option it names spelt as `surface` spells it: each whole
/// word that is the Rust name of an option of more than one word (see the module's doc), and
/// the option the error is `about` (a compose part such as `timestamp_ms`, by the surface's
/// case rule when the table has no such option).
pub fn message_on(error: &Error, surface: Surface) -> String {
    let mut out = String::with_capacity(error.message().len() + 16);
    let mut rest = error.message();
    while let Some(c) = rest.chars().next() {
        if is_word(c) {
            let end = rest.find(|c| !is_word(c)).unwrap_or(rest.len());
            out.push_str(&spelt(&rest[..end], error.option(), surface));
            rest = &rest[end..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// `error` about a value that came from the environment: the option it names (`worker_id`)
/// spelt as the variable (`FLAKERY_WORKER_ID`), and no longer marked as naming an option, so
/// that no surface spells it again as its own argument.
pub fn from_environment(error: Error) -> Error {
    let message = message_on(&error, Surface::Environment);
    Error::new(error.code(), message)
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn spelt(word: &str, about: Option<&str>, surface: Surface) -> Cow<'static, str> {
    if let Some(name) = name_of(word, surface).filter(|_| word.contains('_')) {
        return name;
    }
    if about == Some(word) {
        return Cow::Owned(case_rule(word, surface));
    }
    Cow::Owned(word.to_string())
}

/// A name the table does not hold (a compose part, `timestamp_ms`) as `surface` would spell
/// it.
fn case_rule(name: &str, surface: Surface) -> String {
    match surface {
        Surface::Rust | Surface::Python | Surface::C | Surface::Environment => name.to_string(),
        Surface::Node => {
            let mut parts = name.split('_');
            let mut out = parts.next().unwrap_or_default().to_string();
            for part in parts {
                let mut chars = part.chars();
                if let Some(first) = chars.next() {
                    out.extend(first.to_uppercase());
                    out.push_str(chars.as_str());
                }
            }
            out
        }
        Surface::Go => name
            .split('_')
            .map(|part| match part {
                "id" => "ID".to_string(),
                part => {
                    let mut chars = part.chars();
                    chars.next().map_or(String::new(), |first| {
                        first.to_uppercase().chain(chars).collect()
                    })
                }
            })
            .collect(),
        Surface::Cli | Surface::Server => format!("--{}", name.replace('_', "-")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::option_table::OPTIONS;

    #[test]
    fn a_message_names_every_option_as_the_surface_spells_it() {
        for o in OPTIONS {
            let error = Error::invalid_argument(format!(
                "{} is wrong (not max_{}; see FLAKERY_X and {}.)",
                o.rust, o.rust, o.rust
            ));
            for surface in [Surface::Node, Surface::Cli, Surface::Go, Surface::Python] {
                let shown = message_on(&error, surface);
                if o.rust.contains('_') {
                    let name = o.name(surface);
                    assert_eq!(
                        shown,
                        format!(
                            "{name} is wrong (not max_{}; see FLAKERY_X and {name}.)",
                            o.rust
                        ),
                        "{surface:?}"
                    );
                } else {
                    assert_eq!(shown, error.message(), "{surface:?}");
                }
            }
        }
        // A client's option too, where Python's keyword is not the Rust name.
        let error = Error::invalid_argument("max_age is past the deadline").about("max_age");
        for (surface, name) in [(Surface::Python, "max_age_ms"), (Surface::Node, "maxAgeMs")] {
            let shown = message_on(&error, surface);
            assert_eq!(shown, format!("{name} is past the deadline"));
        }
        let error = Error::invalid_argument("timestamp_ms 5 is 'é' wrong").about("timestamp_ms");
        assert_eq!(
            message_on(&error, Surface::Node),
            "timestampMs 5 is 'é' wrong"
        );
        assert_eq!(
            message_on(&error, Surface::Cli),
            "--timestamp-ms 5 is 'é' wrong"
        );
        assert_eq!(message_on(&error, Surface::C), error.message());
    }

    #[test]
    fn a_value_of_the_environment_is_named_as_its_variable() {
        let error = Error::invalid_argument("worker_id 32 does not fit in 5 bits (0 to 31)")
            .about("worker_id");
        let error = from_environment(error);
        assert_eq!(
            error.message(),
            "FLAKERY_WORKER_ID 32 does not fit in 5 bits (0 to 31)"
        );
        assert_eq!(error.option(), None);
        assert_eq!(message_on(&error, Surface::Node), error.message());
    }
}
