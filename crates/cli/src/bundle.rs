//! `toolgate servers add ID FILE.mcpb`: an MCP bundle previewed (who signed it, or plainly
//! "unsigned"), its values taken from `--config` or asked, then installed through the host.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal};
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use toolgate_host::{BundleError, BundleInstallError};

use crate::context::Context;

/// What the signature says, in the words the terminal and the window use.
fn signature_lines(signature: &toolgate_bundle::Signature) -> Vec<String> {
    use toolgate_bundle::Signature;
    match signature {
        Signature::Unsigned => vec![
            "unsigned: nothing says who made it; only its zip's checksums are checked".to_owned(),
        ],
        Signature::Signed(s) => {
            let mut lines = vec![format!(
                "signed by {} ({}), issued by {}; certificate SHA-256 {}",
                s.name, s.subject, s.issuer, s.fingerprint
            )];
            if s.self_signed {
                lines.push(
                    "  self-signed: anyone can make a certificate with this name; it shows only that the bundle is unchanged since this key signed it"
                        .to_owned(),
                );
            } else if s.trusted {
                lines.push("  its chain ends at an authority this computer trusts".to_owned());
            }
            if let Some(problem) = &s.problem {
                lines.push(format!("  {problem}"));
            }
            lines
        }
        Signature::Tampered { reason } => vec![format!("TAMPERED: {reason}")],
    }
}

pub async fn add(ctx: &mut Context, id: &str, file: &Path, pairs: &[String]) -> Result<u8> {
    let preview = ctx.host.inspect_bundle(file).await?;
    let b = &preview.bundle;
    println!(
        "{} {} by {} ({} server, manifest {})",
        b.display_name,
        b.version,
        b.author,
        serde_json::to_value(b.server_type)?.as_str().unwrap_or(""),
        b.manifest_version
    );
    for line in signature_lines(&b.signature) {
        println!("{line}");
    }
    if let toolgate_bundle::Signature::Tampered { reason } = &b.signature {
        bail!(
            "{} was changed after it was signed, or is damaged ({reason}); it is not installed",
            file.display()
        );
    }
    if let Some(why) = &b.unsupported {
        bail!("{why}");
    }
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pair in pairs {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| anyhow!("--config {pair}: write it as KEY=VALUE"))?;
        values
            .entry(key.to_owned())
            .or_default()
            .push(value.to_owned());
    }
    let terminal = std::io::stdin().is_terminal();
    let mut lines = std::io::stdin().lock().lines();
    for field in &b.user_config {
        let option = &field.option;
        if values.contains_key(&field.key) || (!option.sensitive && !terminal) {
            continue;
        }
        if !option.sensitive && option.default.is_some() {
            continue;
        }
        let label = format!(
            "{} [{}]{}",
            option.title,
            field.key,
            if option.description.is_empty() {
                String::new()
            } else {
                format!(" ({})", option.description)
            }
        );
        let value = if option.sensitive && terminal {
            rpassword::prompt_password(format!(
                "{label}, not shown{}: ",
                if option.required {
                    ""
                } else {
                    ", empty to skip"
                }
            ))?
        } else if option.sensitive {
            lines.next().transpose()?.unwrap_or_default()
        } else {
            eprint!("{label}: ");
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)?;
            line
        };
        let value = value.trim();
        if !value.is_empty() {
            values.insert(field.key.clone(), vec![value.to_owned()]);
        }
    }
    let installed = match ctx.host.install_bundle(file, id, &values).await {
        Ok(installed) => installed,
        Err(BundleInstallError::Bundle(e @ BundleError::Missing(_))) => {
            let secret = b
                .user_config
                .iter()
                .any(|f| f.option.sensitive && f.option.required && !values.contains_key(&f.key));
            bail!(
                "{e}: give each with --config KEY=VALUE{}",
                if secret {
                    " (a secret one is better typed at the prompt, or given one line each on stdin)"
                } else {
                    ""
                }
            )
        }
        Err(e) => return Err(e.into()),
    };
    ctx.settings = ctx.host.settings().clone();
    println!(
        "Installed {id}: {} {} into {}.",
        installed.name,
        installed.version,
        installed.folder.display()
    );
    if installed.secrets > 0 {
        println!(
            "{} secret value(s) are stored in the OS keychain.",
            installed.secrets
        );
    }
    println!("The app starts it the next time its settings are read (restart the app); `toolgate servers restart {id}` starts it now.");
    Ok(0)
}
