//! Importing another host's config (Claude Desktop, Cursor, `.mcp.json`, VS Code, a bare map, a
//! single server): any text, detected or read as each format. No panic, and a plan that is
//! made applies (with or without its secrets moved) only to settings that validate.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_hosts::import::{plan_import, Format, ImportChoices, ImportOptions};
use toolgate_settings::Settings;

fuzz_target!(|data: &[u8]| {
    let Some((first, rest)) = data.split_first() else {
        return;
    };
    let Some(text) = toolgate_fuzz::text(rest) else {
        return;
    };
    let format = match first % 5 {
        0 => Some(Format::McpServers),
        1 => Some(Format::VsCode),
        2 => Some(Format::ServerMap),
        3 => Some(Format::SingleServer),
        _ => None,
    };
    let existing = Settings::first_run(toolgate_settings::example_server(None));
    let options = ImportOptions {
        format,
        name: Some("pasted".into()),
    };
    let Ok(plan) = plan_import(&existing, text, &options) else {
        return;
    };
    // As the user leaves it (nothing moved) and with every secret-looking value moved.
    let everything = ImportChoices {
        move_secrets: plan.move_all_secrets(),
        ..ImportChoices::default()
    };
    for choices in [ImportChoices::default(), everything] {
        if let Ok(applied) = plan.apply(&existing, &choices, 0) {
            applied
                .settings
                .validate()
                .expect("imported settings validate");
        }
    }
});
