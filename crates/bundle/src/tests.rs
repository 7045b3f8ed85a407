//! Bundles built in the test: zips written here, signed with certificates made by the
//! `openssl` command (a self-signed one, and a leaf issued by a test authority), whose
//! `cms -sign` writes the same detached SignedData `mcpb sign` does, with its attributes in
//! DER order where node-forge leaves them unsorted (that order is the CLI test's).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::Command;

use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

use super::*;

const MANIFEST: &str = r#"{
  "manifest_version": "0.3", "name": "weather", "display_name": "Weather", "version": "1.2.0",
  "description": "Forecasts", "author": {"name": "Ann Example"},
  "server": {"type": "binary", "entry_point": "bin/weather",
    "mcp_config": {"command": "${__dirname}/bin/weather",
      "args": ["--units", "${user_config.units}", "${user_config.dirs}", "${user_config.extra}"],
      "env": {"WEATHER_API_KEY": "${user_config.api_key}", "OPTIONAL": "${user_config.extra}",
              "NODE_PATH": "${__dirname}/lib"},
      "platform_overrides": {"linux": {"env": {"WEATHER_API_KEY": "${user_config.api_key}",
              "ON": "linux", "NODE_PATH": "${__dirname}/lib"}},
        "win32": {"command": "${__dirname}\\bin\\weather.exe"}}}},
  "user_config": {
    "api_key": {"type": "string", "title": "API key", "description": "", "sensitive": true, "required": true},
    "units": {"type": "string", "title": "Units", "description": "", "default": "metric"},
    "dirs": {"type": "directory", "title": "Folders", "description": "", "multiple": true},
    "extra": {"type": "string", "title": "Extra", "description": ""}
  }
}"#;

/// A zip of `(name, content, mode)`, stored (so a test can change a byte of a file).
pub(crate) fn zip_of(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, content, mode) in files {
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .unix_permissions(*mode);
        writer.start_file(*name, options).unwrap();
        writer.write_all(content).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

fn weather() -> Vec<u8> {
    zip_of(&[
        ("manifest.json", MANIFEST.as_bytes(), 0o644),
        ("bin/weather", b"#!/bin/sh\necho weather\n", 0o755),
        ("lib/util.js", b"module.exports = 1;\n", 0o4644),
    ])
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl command is installed (the README's set-up installs it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `content` with a signature block of `openssl cms -sign` by `cert`/`key`, carrying `extra`.
fn signed(dir: &Path, content: &[u8], cert: &str, key: &str, extra: Option<&str>) -> Vec<u8> {
    std::fs::write(dir.join("content"), content).unwrap();
    let mut args = vec![
        "cms",
        "-sign",
        "-binary",
        "-md",
        "sha256",
        "-nosmimecap",
        "-outform",
        "DER",
        "-in",
        "content",
        "-signer",
        cert,
        "-inkey",
        key,
        "-out",
        "sig.der",
    ];
    if let Some(extra) = extra {
        args.extend(["-certfile", extra]);
    }
    openssl(dir, &args);
    let der = std::fs::read(dir.join("sig.der")).unwrap();
    let mut out = content.to_vec();
    out.extend(b"MCPB_SIG_V1");
    out.extend((der.len() as u32).to_le_bytes());
    out.extend(der);
    out.extend(b"MCPB_SIG_END");
    out
}

fn self_signed_cert(dir: &Path, name: &str) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.pem"),
            "-subj",
            &format!("/CN={name}/O=Toolgate Tests"),
        ],
    );
}

#[cfg(unix)]
#[test]
fn an_unsigned_bundle_previews_and_unpacks_with_only_execute_bits_kept() {
    let bundle = Bundle::from_bytes(weather()).unwrap();
    let preview = bundle.preview();
    assert_eq!(preview.display_name, "Weather");
    assert_eq!(preview.author, "Ann Example");
    assert_eq!(preview.signature, Signature::Unsigned);
    assert_eq!(preview.files, 3);
    assert!(preview.unsupported.is_none());
    let keys: Vec<&str> = preview.user_config.iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys, ["api_key", "dirs", "extra", "units"]);

    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("weather");
    bundle.unpack(&target, Limits::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(target.join("bin/weather")).unwrap(),
        "#!/bin/sh\necho weather\n"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &str| {
        std::fs::metadata(target.join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!(mode("bin/weather"), 0o755);
    assert_eq!(mode("lib/util.js"), 0o644, "no set-id bit");
    // Into a folder that exists: refused, nothing overwritten.
    assert!(matches!(
        bundle.unpack(&target, Limits::default()),
        Err(BundleError::Io(_))
    ));
}

#[test]
fn unsafe_names_links_sizes_and_damage_are_refused() {
    let manifest = ("manifest.json", MANIFEST.as_bytes(), 0o644);
    let entry = ("bin/weather", b"x".as_slice(), 0o755);
    for bad in ["../evil", "bin/../../evil", "/etc/evil", "C:/evil"] {
        let zip = zip_of(&[manifest, entry, (bad, b"x", 0o644)]);
        let error = Bundle::from_bytes(zip).unwrap_err();
        assert!(matches!(error, BundleError::Unsafe(_)), "{bad}: {error}");
    }
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, content, mode) in [manifest, entry] {
        writer
            .start_file(name, SimpleFileOptions::default().unix_permissions(mode))
            .unwrap();
        writer.write_all(content).unwrap();
    }
    writer
        .add_symlink("lib", "/etc", SimpleFileOptions::default())
        .unwrap();
    let linked = writer.finish().unwrap().into_inner();
    let error = Bundle::from_bytes(linked).unwrap_err();
    assert!(error.to_string().contains("symbolic link"), "{error}");

    let no_entry = zip_of(&[manifest]);
    assert!(matches!(
        Bundle::from_bytes(no_entry),
        Err(BundleError::NotABundle(_))
    ));
    assert!(matches!(
        Bundle::from_bytes(b"not a zip".to_vec()),
        Err(BundleError::NotABundle(_))
    ));

    let big = zip_of(&[manifest, ("bin/weather", &[7u8; 4096], 0o755)]);
    let dir = tempfile::tempdir().unwrap();
    let small = Limits {
        entries: 10,
        unpacked_bytes: 4000,
    };
    let error = Bundle::from_bytes(big)
        .unwrap()
        .unpack(&dir.path().join("a"), small)
        .unwrap_err();
    assert!(matches!(error, BundleError::TooLarge(_)), "{error}");

    // One byte of a stored file changed: its CRC-32 no longer matches.
    let mut damaged = weather();
    let at = damaged
        .windows(13)
        .position(|w| w == b"echo weather\n")
        .unwrap();
    damaged[at] = b'E';
    let bundle = Bundle::from_bytes(damaged).unwrap();
    assert_eq!(bundle.signature(), &Signature::Unsigned);
    let error = bundle
        .unpack(&dir.path().join("b"), Limits::default())
        .unwrap_err();
    assert!(matches!(error, BundleError::Damaged(_)), "{error}");
}

#[test]
fn a_self_signed_bundle_shows_its_signer_and_a_changed_one_is_tampered() {
    let dir = tempfile::tempdir().unwrap();
    self_signed_cert(dir.path(), "Test Signer");
    let bytes = signed(
        dir.path(),
        &weather(),
        "Test Signer.pem",
        "Test Signer.key",
        None,
    );
    let bundle = Bundle::from_bytes(bytes.clone()).unwrap();
    let Signature::Signed(signer) = bundle.signature() else {
        panic!("{:?}", bundle.signature());
    };
    assert_eq!(signer.name, "Test Signer");
    assert!(
        signer.subject.contains("O=Toolgate Tests"),
        "{}",
        signer.subject
    );
    assert_eq!(signer.issuer, "Test Signer");
    assert!(signer.self_signed && signer.chain_valid && !signer.trusted);
    assert_eq!(signer.fingerprint.len(), 64);
    bundle
        .unpack(&dir.path().join("ok"), Limits::default())
        .unwrap();

    // A byte of the zip changed after signing.
    let mut changed = bytes.clone();
    let at = changed
        .windows(13)
        .position(|w| w == b"echo weather\n")
        .unwrap();
    changed[at] = b'E';
    let bundle = Bundle::from_bytes(changed).unwrap();
    assert!(
        matches!(bundle.signature(), Signature::Tampered { reason } if reason.contains("does not match")),
        "{:?}",
        bundle.signature()
    );
    let error = bundle
        .unpack(&dir.path().join("no"), Limits::default())
        .unwrap_err();
    assert!(matches!(error, BundleError::Tampered(_)), "{error}");
    assert!(!dir.path().join("no").exists());

    // A byte of the signature itself, or of its footer.
    for from_end in [40, 3] {
        let mut changed = bytes.clone();
        let at = changed.len() - from_end;
        changed[at] ^= 0x55;
        let signature = Bundle::from_bytes(changed).unwrap().signature().clone();
        assert!(
            matches!(signature, Signature::Tampered { .. }),
            "{from_end}: {signature:?}"
        );
    }
    // The block removed whole: unsigned, as it is.
    let zip_len = weather().len();
    let stripped = Bundle::from_bytes(bytes[..zip_len].to_vec()).unwrap();
    assert_eq!(stripped.signature(), &Signature::Unsigned);
}

#[test]
fn a_chain_is_followed_to_the_authority_the_bundle_carries() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    self_signed_cert(d, "Test CA");
    // A version 3 leaf, as authorities issue them (`x509 -req` without extensions writes a
    // version 1 certificate, which the path validator refuses).
    std::fs::write(
        d.join("leaf.ext"),
        "keyUsage = digitalSignature\nextendedKeyUsage = codeSigning\n",
    )
    .unwrap();
    openssl(
        d,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "leaf.key",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=Leaf Signer",
        ],
    );
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "Test CA.pem",
            "-CAkey",
            "Test CA.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-sha256",
            "-extfile",
            "leaf.ext",
            "-out",
            "leaf.pem",
        ],
    );

    let with_ca = signed(d, &weather(), "leaf.pem", "leaf.key", Some("Test CA.pem"));
    let Signature::Signed(signer) = Bundle::from_bytes(with_ca).unwrap().signature().clone() else {
        panic!("signed");
    };
    assert_eq!(
        (signer.name.as_str(), signer.issuer.as_str()),
        ("Leaf Signer", "Test CA")
    );
    assert!(
        !signer.self_signed && signer.chain_valid && !signer.trusted,
        "{signer:?}"
    );

    let alone = signed(d, &weather(), "leaf.pem", "leaf.key", None);
    let Signature::Signed(signer) = Bundle::from_bytes(alone).unwrap().signature().clone() else {
        panic!("signed");
    };
    assert!(!signer.chain_valid, "{signer:?}");
    assert!(signer.problem.unwrap().contains("not in the bundle"));

    // The authority as a trust anchor of this computer: trusted.
    let der = |name: &str| {
        openssl(
            d,
            &[
                "x509",
                "-in",
                &format!("{name}.pem"),
                "-outform",
                "DER",
                "-out",
                &format!("{name}.der"),
            ],
        );
        <x509_cert::Certificate as der::Decode>::from_der(
            &std::fs::read(d.join(format!("{name}.der"))).unwrap(),
        )
        .unwrap()
    };
    let (ca, leaf) = (der("Test CA"), der("leaf"));
    let ca = rustls_pki_types::CertificateDer::from(der::Encode::to_der(&ca).unwrap());
    let signer = chain::describe_with(&leaf, &[], &[ca], std::time::SystemTime::now());
    assert!(signer.chain_valid && signer.trusted, "{signer:?}");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5 * 86400);
    let signer = chain::describe_with(&leaf, &[], &[], later);
    assert!(signer.problem.unwrap().contains("expired"));
}

fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in pairs {
        map.entry((*k).to_owned())
            .or_default()
            .push((*v).to_owned());
    }
    map
}

#[test]
fn the_manifest_becomes_a_server_with_its_secret_in_the_keychain() {
    let bundle = Bundle::from_bytes(weather()).unwrap();
    let dir = Path::new("/data/bundles/wx");
    let built = build(
        bundle.manifest(),
        dir,
        "wx",
        &values(&[("api_key", "k-123"), ("dirs", "/srv/a"), ("dirs", "/srv/b")]),
    )
    .unwrap();
    assert_eq!(
        built.secrets,
        [("WX_API_KEY".to_owned(), "k-123".to_owned())]
    );
    let config = &built.config;
    assert_eq!(config.name, "Weather");
    let toolgate_settings::Transport::Stdio {
        command, args, env, ..
    } = &config.transport
    else {
        panic!("stdio");
    };
    assert_eq!(command, "/data/bundles/wx/bin/weather");
    // The default, each folder its own argument, the optional empty one dropped.
    assert_eq!(args, &["--units", "metric", "/srv/a", "/srv/b"]);
    // The linux override replaced the env whole; the secret is a reference.
    assert_eq!(env["WEATHER_API_KEY"], "${secret:WX_API_KEY}");
    assert_eq!(env["ON"], "linux");
    assert!(!env.contains_key("OPTIONAL"));
    assert_eq!(config.allow_env, ["NODE_PATH"]);
    let sandbox = config.sandbox.as_ref().unwrap();
    assert!(sandbox.enabled && sandbox.read == [dir.to_path_buf()] && sandbox.write.is_empty());
    assert!(!serde_json::to_string(config).unwrap().contains("k-123"));

    let error = build(bundle.manifest(), dir, "wx", &values(&[])).unwrap_err();
    assert_eq!(
        error,
        BundleError::Missing(vec![("api_key".into(), "API key".into())])
    );
    assert!(error.to_string().contains("api_key (API key)"));
    let error = build(
        bundle.manifest(),
        dir,
        "wx",
        &values(&[("api_key", "k"), ("colour", "red")]),
    )
    .unwrap_err();
    assert!(error.to_string().contains("no setting colour"), "{error}");
    let error = build(
        bundle.manifest(),
        dir,
        "wx",
        &values(&[("api_key", "k"), ("dirs", "rel/x")]),
    )
    .unwrap_err();
    assert!(error.to_string().contains("path from the root"), "{error}");
}

#[test]
fn a_manifest_that_reads_toolgates_secrets_or_leaks_one_on_the_command_line_is_refused() {
    let manifest = |mcp_config: &str| -> Manifest {
        serde_json::from_str(&format!(
            r#"{{"manifest_version": "0.3", "name": "x", "version": "1", "author": {{"name": "a"}},
                "server": {{"type": "node", "entry_point": "i.js", "mcp_config": {mcp_config}}},
                "user_config": {{"key": {{"type": "string", "title": "Key", "description": "", "sensitive": true}},
                  "n": {{"type": "number", "title": "N", "description": "", "min": 1, "max": 5}}}}}}"#
        ))
        .unwrap()
    };
    let dir = Path::new("/b");
    let reads = manifest(r#"{"command": "node", "env": {"T": "${secret:GITHUB_TOKEN}"}}"#);
    assert!(matches!(
        build(&reads, dir, "x", &values(&[])),
        Err(BundleError::Unsafe(_))
    ));
    let env = manifest(r#"{"command": "node", "args": ["${env:ANTHROPIC_API_KEY}"]}"#);
    assert!(matches!(
        build(&env, dir, "x", &values(&[])),
        Err(BundleError::Unsafe(_))
    ));
    let leaks = manifest(r#"{"command": "node", "args": ["--key=${user_config.key}"]}"#);
    let error = build(&leaks, dir, "x", &values(&[("key", "s")])).unwrap_err();
    assert!(
        error.to_string().contains("secret key on the command line"),
        "{error}"
    );
    let hijack = manifest(r#"{"command": "node", "env": {"LD_PRELOAD": "/tmp/evil.so"}}"#);
    assert!(matches!(
        build(&hijack, dir, "x", &values(&[])),
        Err(BundleError::Unsafe(_))
    ));
    let ok = manifest(r#"{"command": "node", "args": ["${__dirname}/i.js", "${user_config.n}"]}"#);
    assert!(build(&ok, dir, "x", &values(&[("n", "9")])).is_err());
    assert!(build(&ok, dir, "x", &values(&[("n", "x")])).is_err());
    let built = build(&ok, dir, "x", &values(&[("n", "3")])).unwrap();
    let toolgate_settings::Transport::Stdio { args, .. } = &built.config.transport else {
        panic!("stdio");
    };
    assert_eq!(args, &["/b/i.js", "3"]);
}

mod signer_chain;
