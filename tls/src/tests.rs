use super::*;

/// A directory of its own for each test, removed at its end.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("flakery-tls-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SECRET: &str = "c2VjcmV0LWtleS1ieXRlcw";

/// A missing file is said so by each reader, with the file and io's reason, never taken for a
/// PEM problem (the SQL coordinator's key once read "cannot read a private key (PEM)").
#[test]
fn a_missing_file_names_itself_and_the_io_reason() {
    let dir = Dir::new("missing");
    let missing = dir.0.join("missing.pem");
    let said = [
        chain(&missing).unwrap_err(),
        roots_of_file(&missing).unwrap_err(),
        private_key(&missing).unwrap_err(),
    ];
    for e in said {
        assert_eq!(e.path(), missing);
        assert_eq!(e.io_error().unwrap().kind(), io::ErrorKind::NotFound, "{e}");
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("{}: cannot read it: ", missing.display())),
            "{shown}"
        );
    }
}

/// A directory opens but cannot be read: io's reason too.
#[test]
fn a_directory_is_unreadable() {
    let dir = Dir::new("directory");
    let e = private_key(&dir.0).unwrap_err();
    assert!(e.io_error().is_some(), "{e}");
    let e = roots_of_file(&dir.0).unwrap_err();
    assert!(e.io_error().is_some(), "{e}");
}

/// A key file that holds no key, or a broken one, is named; what it holds is not shown.
#[test]
fn a_bad_key_is_named_not_shown() {
    let dir = Dir::new("badkey");
    for (name, text) in [
        (
            "broken.pem",
            format!("-----BEGIN PRIVATE KEY-----\n{SECRET}!!\n-----END PRIVATE KEY-----\n"),
        ),
        (
            "unended.pem",
            format!("-----BEGIN PRIVATE KEY-----\n{SECRET}\n"),
        ),
        ("plain.pem", format!("{SECRET}\n")),
    ] {
        let path = dir.file(name, &text);
        let e = private_key(&path).unwrap_err();
        assert!(e.io_error().is_none(), "{e}");
        let shown = format!("{e} {e:?}");
        assert!(shown.contains(name), "{shown}");
        assert!(shown.contains("no private key"), "{shown}");
        assert!(!shown.contains(SECRET) && !shown.contains("!!"), "{shown}");
    }
}

/// A certificate file without a certificate (a key given for it, an empty file) is refused
/// by the chain and the roots alike.
#[test]
fn a_file_without_a_certificate_is_refused() {
    let dir = Dir::new("nocert");
    let key = dir.file(
        "key.pem",
        &format!("-----BEGIN PRIVATE KEY-----\n{SECRET}\n-----END PRIVATE KEY-----\n"),
    );
    let empty = dir.file("empty.pem", "");
    for path in [&key, &empty] {
        for e in [chain(path).unwrap_err(), roots_of_file(path).unwrap_err()] {
            assert_eq!(
                e.to_string(),
                format!("{}: holds no certificate (PEM)", path.display())
            );
        }
    }
}

/// PEM that is not a certificate webpki takes: the chain is bytes (the handshake checks
/// them), the roots are refused at once.
#[test]
fn a_bad_ca_certificate_is_refused_as_a_root() {
    let dir = Dir::new("badcert");
    let path = dir.file(
        "ca.pem",
        "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n",
    );
    assert_eq!(chain(&path).unwrap().len(), 1);
    let e = roots_of_file(&path).unwrap_err();
    assert!(e.to_string().contains("holds a bad certificate"), "{e}");
    let broken = dir.file(
        "broken.pem",
        "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n",
    );
    let e = chain(&broken).unwrap_err();
    assert!(e.to_string().contains(": not PEM: "), "{e}");
}

#[test]
fn the_builders_take_ring() {
    assert!(client_builder().is_ok());
    assert!(server_builder().is_ok());
    install_default_provider();
    assert!(CryptoProvider::get_default().is_some());
}
