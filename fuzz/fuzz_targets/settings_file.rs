//! The settings file as the app and the CLI read it, whatever is on disk (a hand edit, a
//! half-written file from another program, a byte order mark). No panic, and settings that load
//! are valid and read back the same after they are written (`{"settings": …}`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_settings::file::read_bytes;

fuzz_target!(|data: &[u8]| {
    let Ok(Some(settings)) = read_bytes(data) else {
        return;
    };
    settings.validate().expect("loaded settings are valid");
    let written = serde_json::to_vec(&serde_json::json!({ "settings": settings }))
        .expect("settings serialize");
    let again = read_bytes(&written)
        .expect("written settings read back")
        .expect("and are not empty");
    assert_eq!(again, settings);
});
