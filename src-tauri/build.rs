// Declares the app's own commands so capabilities can allow exactly these and nothing else.
fn main() {
    let commands = &[
        "list_servers",
        "restart_server",
        "call_tool",
        "get_provider",
        "set_provider",
        "set_api_key",
        "clear_api_key",
        "send_message",
        "answer_approval",
        "pending_approvals",
        "reset_conversation",
        "tool_catalog",
        "stop_turn",
        "approval_rules",
        "revoke_rule",
        "set_paused",
        "answer_all",
        "audit_log",
        "set_approval_options",
        "export_audit",
        "current_conversation",
        "list_conversations",
        "open_conversation",
        "rename_conversation",
        "delete_conversation",
        "list_secrets",
        "set_secret",
        "clear_secret",
        "startup_notices",
        "import_sources",
        "preview_import",
        "apply_import",
        "export_servers",
        "set_server_enabled",
        "remove_server",
        "server_log",
        "set_tool_enabled",
        "set_server_roots",
        "provider_presets",
        "list_models",
        "diagnostics",
        "tool_settings",
        "set_tool_settings",
        "read_resource",
        "start_at_login",
        "set_start_at_login",
        "server_config",
        "update_server",
    ];
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(commands));
    if let Err(e) = tauri_build::try_build(attributes) {
        eprintln!("tauri-build failed: {e:#}");
        std::process::exit(1);
    }
}
