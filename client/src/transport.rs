//! One request to one server: `GET /v1/ids?count=N` as 8-byte little-endian words (as bare
//! lines from a server older than them), and once per server `GET /v1/layout`. What comes
//! back is read up to what a right answer can hold, and taken only if it is exactly the IDs
//! asked for, each canonical, strictly increasing.

use std::io::Read;
use std::time::Duration;

use flakery::Layout;

use crate::failure::Failure;
use crate::tls;

/// The longest line of one ID: 19 digits and a newline.
const LINE_BYTES: usize = 20;
/// One ID as a word.
const WORD_BYTES: usize = 8;
/// The words' content type.
const BINARY: &str = "application/octet-stream";
/// Words, or lines: a server older than the words reads the first type only and answers
/// lines (docs/server.md#routes).
const ACCEPT_IDS: &str = "text/plain;q=0.5, application/octet-stream";
/// The most bytes of an error answer or of `/v1/layout` read.
const SMALL_ANSWER: usize = 64 * 1024;
/// The most characters of a server's own message shown in an error.
const SHOWN_CHARS: usize = 200;

pub struct Transport {
    agent: ureq::Agent,
    /// `Bearer <token>`.
    authorization: Option<String>,
    request_timeout: Duration,
}

impl Transport {
    pub fn new(
        authorization: Option<String>,
        request_timeout: Duration,
        tls: Option<std::sync::Arc<tls::Connector>>,
    ) -> Self {
        let mut agent = ureq::AgentBuilder::new()
            .timeout_connect(request_timeout)
            .redirects(0);
        if let Some(tls) = tls {
            agent = agent.tls_connector(tls);
        }
        let agent = agent.build();
        Transport {
            agent,
            authorization,
            request_timeout,
        }
    }

    fn get(&self, url: &str, accept: &str) -> Result<ureq::Response, Failure> {
        let mut request = self
            .agent
            .get(url)
            .timeout(self.request_timeout)
            .set("Accept", accept);
        if let Some(authorization) = &self.authorization {
            request = request.set("Authorization", authorization);
        }
        match request.call() {
            Ok(response) => Ok(response),
            Err(ureq::Error::Status(status, response)) => Err(self.refusal(status, response)),
            Err(ureq::Error::Transport(error)) => {
                if let Some(failure) = tls::failure_of(&error) {
                    return Err(failure);
                }
                let mut said = error.kind().to_string();
                if let Some(message) = error.message() {
                    said = format!("{said}: {}", self.shown(message));
                }
                if let Some(cause) = std::error::Error::source(&error) {
                    said = format!("{said}: {}", self.shown(&cause.to_string()));
                }
                Err(Failure::unavailable(said))
            }
        }
    }

    /// `count` new IDs from `server`, in increasing order: 8-byte words where the server
    /// answers them, else lines (a server older than the binary answer ignores what it does
    /// not know and reads the `Accept` header's first type).
    pub fn fetch(&self, server: &str, count: usize) -> Result<Vec<i64>, Failure> {
        let response = self.get(&format!("{server}/v1/ids?count={count}"), ACCEPT_IDS)?;
        match response.content_type() {
            BINARY => read_words(response.into_reader(), count),
            text if text.starts_with("text/plain") => {
                let most = count * LINE_BYTES;
                let body = read_at_most(response, most)
                    .map_err(|e| Failure::unavailable(format!("the answer was cut off: {e}")))?
                    .ok_or_else(|| {
                        Failure::bad_answer(format!(
                            "answered more than the {most} bytes that {count} IDs take"
                        ))
                    })?;
                // The parser quotes the line it refused: a server's text, shown as any is.
                parse_ids(&body, count).map_err(|e| Failure::bad_answer(self.shown(&e)))
            }
            other => Err(Failure::bad_answer(format!(
                "answered {} where IDs as 8-byte words or text/plain lines were asked for",
                self.shown(other)
            ))),
        }
    }

    /// Fails unless `server` issues IDs of `layout`.
    pub fn check_layout(&self, server: &str, layout: &Layout) -> Result<(), Failure> {
        let response = self.get(&format!("{server}/v1/layout"), "application/json")?;
        let body = read_at_most(response, SMALL_ANSWER)
            .map_err(|e| Failure::unavailable(format!("the answer was cut off: {e}")))?
            .ok_or_else(|| Failure::bad_answer("/v1/layout answered too much"))?;
        let spec = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("spec")?.as_str().map(String::from))
            .ok_or_else(|| Failure::bad_answer("/v1/layout is not a flakery layout"))?;
        match Layout::parse(&spec) {
            Ok(theirs) if theirs == *layout => Ok(()),
            _ => Err(Failure::bad_answer(format!(
                "it issues IDs of layout '{}', this client's layout is '{layout}' (set the \
                 client's layout to the servers')",
                self.shown(&spec)
            ))),
        }
    }

    /// A server's refusal: its status, and the code and message of its JSON error.
    fn refusal(&self, status: u16, response: ureq::Response) -> Failure {
        let body = read_at_most(response, SMALL_ANSWER)
            .ok()
            .flatten()
            .unwrap_or_default();
        let error = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("error").cloned());
        let said = match error {
            Some(error) => format!(
                "{} {}: {}",
                status,
                self.shown(error.get("code").and_then(|c| c.as_str()).unwrap_or("?")),
                self.shown(error.get("message").and_then(|c| c.as_str()).unwrap_or(""))
            ),
            None => format!("{status} without a flakery error"),
        };
        match status {
            401 => Failure::unauthorized(said),
            408 | 429 | 500..=599 => Failure::unavailable(said),
            _ => Failure::bad_answer(said),
        }
    }

    /// A server's text as an error may show it: short, escaped, never holding the token.
    fn shown(&self, text: &str) -> String {
        // Replaced before the cut: a token across the cut would show its first part.
        let text = match self
            .authorization
            .as_deref()
            .and_then(|a| a.strip_prefix("Bearer "))
        {
            Some(token) => text.replace(token, "<token>"),
            None => text.to_string(),
        };
        // Control characters escaped, so that a server cannot write to the caller's terminal.
        text.chars()
            .take(SHOWN_CHARS)
            .map(|c| match c.is_control() {
                true => c.escape_default().to_string(),
                false => c.to_string(),
            })
            .collect()
    }
}

/// The body, or `None` when it is longer than `most` bytes (what is read stays bounded).
fn read_at_most(response: ureq::Response, most: usize) -> std::io::Result<Option<Vec<u8>>> {
    // Sized once from the length the server gives, when it is within bounds: a block grown by
    // doubling would be copied about twice over.
    let given = response
        .header("Content-Length")
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n <= most);
    let mut body = Vec::with_capacity(given.unwrap_or(0));
    response
        .into_reader()
        .take(most as u64 + 1)
        .read_to_end(&mut body)?;
    Ok((body.len() <= most).then_some(body))
}

/// Exactly `count` IDs as 8-byte little-endian words, read straight into the IDs' own memory
/// (no buffer between, nothing copied after the kernel's copy), then checked in one pass
/// (`increasing`). Reading stops at the first word past what was asked for.
fn read_words(mut reader: impl Read, count: usize) -> Result<Vec<i64>, Failure> {
    let cut_off = |e: std::io::Error| Failure::unavailable(format!("the answer was cut off: {e}"));
    let mut ids = vec![0i64; count];
    let mut filled = read_full(&mut reader, as_bytes(&mut ids)).map_err(cut_off)?;
    if filled == count * WORD_BYTES {
        filled += read_full(&mut reader, &mut [0; WORD_BYTES]).map_err(cut_off)?;
    }
    if filled > count * WORD_BYTES && filled % WORD_BYTES == 0 {
        return Err(Failure::bad_answer(too_many(count)));
    }
    if filled % WORD_BYTES != 0 {
        return Err(Failure::bad_answer(format!(
            "answered {filled} bytes, not a whole number of 8-byte IDs (cut off?)"
        )));
    }
    ids.truncate(filled / WORD_BYTES);
    if cfg!(target_endian = "big") {
        ids.iter_mut().for_each(|id| *id = i64::from_le(*id));
    }
    increasing(&ids)
        .and_then(|()| exactly(ids, count))
        .map_err(Failure::bad_answer)
}

/// The IDs' memory as bytes, for the reader to write the words into.
fn as_bytes(ids: &mut [i64]) -> &mut [u8] {
    // SAFETY: the same memory, its length in bytes; any bytes are a valid i64, and u8's
    // alignment is 1.
    unsafe { std::slice::from_raw_parts_mut(ids.as_mut_ptr().cast(), std::mem::size_of_val(ids)) }
}

/// Reads until `buffer` is full or the answer ends; answers the bytes read.
fn read_full(reader: &mut impl Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The one check of what a server answered, for words and lines alike: each ID non-negative
/// and larger than the one before. One pass without a branch per ID, which the compiler
/// turns into vector instructions; the first ID refused is looked for only on failure.
fn increasing(ids: &[i64]) -> Result<(), String> {
    let first_ok = ids.first().is_none_or(|&id| id >= 0);
    let ordered = ids.windows(2).fold(true, |ok, w| ok & (w[0] < w[1]));
    if first_ok && ordered {
        return Ok(());
    }
    let mut last = -1;
    for &id in ids {
        if id <= last {
            return Err(refused(id));
        }
        last = id;
    }
    Err("answered IDs out of order".into())
}

#[cold]
fn refused(id: i64) -> String {
    match id < 0 {
        true => format!("answered a negative ID ({id})"),
        false => format!("answered ID {id} after a larger or equal one"),
    }
}

#[cold]
fn too_many(count: usize) -> String {
    format!("answered more than the {count} IDs asked for")
}

/// `ids` if they are the `count` asked for.
fn exactly(ids: Vec<i64>, count: usize) -> Result<Vec<i64>, String> {
    match ids.len() == count {
        true => Ok(ids),
        false => Err(format!(
            "answered {} IDs where {count} were asked for",
            ids.len()
        )),
    }
}

/// Exactly `count` canonical decimal IDs, one a line (`increasing`).
fn parse_ids(body: &[u8], count: usize) -> Result<Vec<i64>, String> {
    let text = std::str::from_utf8(body).map_err(|_| "answered bytes that are not UTF-8")?;
    let Some(text) = text.strip_suffix('\n') else {
        return Err("answered something that is not lines of IDs".into());
    };
    let mut ids = Vec::with_capacity(count);
    for line in text.split('\n') {
        if ids.len() == count {
            return Err(too_many(count));
        }
        ids.push(match flakery::decimal::parse_id_fast(line.as_bytes()) {
            Some(id) => id,
            // The fast reader refuses what is not a well-written ID: the core says why.
            None => flakery::parse_id(line).map_err(|e| format!("answered a bad ID: {e}"))?,
        });
    }
    increasing(&ids)?;
    exactly(ids, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_ids_asked_for_are_taken() {
        assert_eq!(parse_ids(b"1\n5\n9\n", 3), Ok(vec![1, 5, 9]));
        for (bad, count) in [
            (&b"1\n5\n9"[..], 3),
            (b"1\n5\n", 3),
            (b"1\n5\n9\n10\n", 3),
            (b"1\n1\n", 2),
            (b"5\n1\n", 2),
            (b"01\n", 1),
            (b"-1\n", 1),
            (b"+1\n", 1),
            (b"\n", 1),
            (b"1\r\n", 1),
            (b"9223372036854775808\n", 1),
            (b"\xff\n", 1),
            (b"{\"ids\":[\"1\"]}", 1),
        ] {
            assert!(
                parse_ids(bad, count).is_err(),
                "{:?} taken",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// A reader that gives `body` in pieces of at most `step` bytes.
    struct Pieces<'a> {
        body: &'a [u8],
        step: usize,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buffer.len()).min(self.body.len());
            buffer[..n].copy_from_slice(&self.body[..n]);
            self.body = &self.body[n..];
            Ok(n)
        }
    }

    /// `body` read as words in pieces of `step` bytes.
    fn words_of(body: &[u8], count: usize, step: usize) -> Result<Vec<i64>, String> {
        read_words(Pieces { body, step }, count).map_err(|f| f.reason)
    }

    #[test]
    fn only_whole_words_of_the_ids_asked_for_are_taken() {
        let words =
            |ids: &[i64]| -> Vec<u8> { ids.iter().flat_map(|id| id.to_le_bytes()).collect() };
        for step in [1, 3, 8, 13, 1000] {
            let parse = |body: &[u8], count| words_of(body, count, step);
            assert_eq!(parse(&words(&[0, 5, 9]), 3), Ok(vec![0, 5, 9]), "{step}");
            let whole = words(&[1, 5, 9]);
            for cut in [1, 7, 9, 23] {
                let error = parse(&whole[..cut], 3).unwrap_err();
                assert!(
                    error.contains("not a whole number"),
                    "{step} {cut}: {error}"
                );
            }
            let mut odd = whole.clone();
            odd.push(0);
            assert!(parse(&odd, 3)
                .unwrap_err()
                .contains("25 bytes, not a whole number"));
            for (bad, count, says) in [
                (words(&[1, 5]), 3, "2 IDs where 3"),
                (words(&[1, 5, 9, 10]), 3, "more than the 3 IDs"),
                (words(&[]), 1, "0 IDs where 1"),
                (words(&[1, 1]), 2, "after a larger or equal"),
                (words(&[5, 1]), 2, "after a larger or equal"),
                (words(&[-1]), 1, "negative"),
                (words(&[i64::MIN, 1]), 2, "negative"),
                (words(&[1, -2]), 2, "negative"),
            ] {
                let error = parse(&bad, count).unwrap_err();
                assert!(error.contains(says), "{step} {bad:?}: {error}");
            }
        }
    }

    /// A text line that is no ID, holding the token (a server that echoes what it was sent):
    /// the parser's message quotes the line, and is shown as any server text is.
    #[test]
    fn a_bad_id_line_never_shows_the_token() {
        use std::io::{Read, Write};
        let token = "bd24670f9ea97c5c3e5c29254055b60e";
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = format!("http://{}", listener.local_addr().unwrap());
        let answering = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut request = [0u8; 4096];
            let _ = conn.read(&mut request).unwrap();
            let body = format!("{token}\n");
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            conn.write_all(head.as_bytes()).unwrap();
            conn.write_all(body.as_bytes()).unwrap();
        });
        let transport = Transport::new(
            Some(format!("Bearer {token}")),
            Duration::from_secs(5),
            None,
        );
        let failure = transport.fetch(&server, 2).unwrap_err();
        answering.join().unwrap();
        assert!(failure.reason.contains("<token>"), "{}", failure.reason);
        assert!(!failure.reason.contains(&token[..8]), "{}", failure.reason);
    }

    #[test]
    fn a_server_text_never_shows_the_token() {
        let transport = Transport::new(Some("Bearer s3cret".into()), Duration::from_secs(1), None);
        let shown = transport.shown("you sent s3cret\n");
        assert_eq!(shown, "you sent <token>\\n");
        assert!(transport.shown(&"x".repeat(1000)).len() <= SHOWN_CHARS);
        // A token across the cut: not even its first part.
        let token = "bd24670f9ea97c5c3e5c29254055b60e";
        let transport = Transport::new(
            Some(format!("Bearer {token}")),
            Duration::from_secs(1),
            None,
        );
        for before in [150, SHOWN_CHARS - 20, SHOWN_CHARS - 1] {
            let shown = transport.shown(&format!("{}{token}", "x".repeat(before)));
            assert!(!shown.contains(&token[..8]), "{before}: {shown}");
        }
    }
}
