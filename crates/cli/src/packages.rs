//! `toolgate servers versions` and `servers update`: the exact versions Toolgate installed for
//! npx and uvx servers, what their registries offer now, and an update taken only when asked.

use anyhow::Result;

use crate::context::Context;

pub async fn versions(ctx: &Context, json: bool) -> Result<u8> {
    let views = ctx.host.packages().await;
    if json {
        println!("{}", serde_json::to_string_pretty(&views)?);
        return Ok(0);
    }
    if views.is_empty() {
        println!(
            "No installed servers yet: an npx or uvx server is installed at an exact version at \
             its first start."
        );
        return Ok(0);
    }
    for view in views {
        let offer = match (&view.available, &view.problem) {
            (Some(v), _) if *v == view.installed => "up to date".to_owned(),
            (Some(v), _) => format!(
                "{v} available: `toolgate servers update {}` installs it",
                view.server
            ),
            (None, Some(problem)) => format!("could not ask its registry: {problem}"),
            (None, None) => String::new(),
        };
        println!(
            "{}: {} {} ({offer})",
            view.server, view.package, view.installed
        );
    }
    Ok(0)
}

pub async fn update(ctx: &Context, id: &str, version: Option<&str>) -> Result<u8> {
    let said = |line: &str| eprintln!("  {line}");
    let installed = ctx.host.update_package(id, version, &said).await?;
    println!(
        "{id} now runs {installed} from its next start (the version before stays installed). \
         If its tools changed, they are held until you accept them: `toolgate tools changes`."
    );
    Ok(0)
}
