//! `${secret:NAME}` / `${env:NAME}` references in a server's env and headers. No panic; listing
//! and expanding agree on what is valid; expansion only ever replaces references (text outside
//! them comes through unchanged) and asks for exactly the references listed, in order.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(text) = toolgate_fuzz::text(data) else {
        return;
    };
    let listed = toolgate_settings::references(text);
    let mut asked = Vec::new();
    let expanded = toolgate_settings::expand(text, |r| {
        asked.push(format!("{r:?}"));
        Ok::<_, std::convert::Infallible>(String::new())
    });
    assert_eq!(
        listed.is_ok(),
        expanded.is_ok(),
        "listing and expanding agree"
    );
    if let (Ok(listed), Ok(expanded)) = (listed, expanded) {
        let listed: Vec<String> = listed.iter().map(|r| format!("{r:?}")).collect();
        assert_eq!(listed, asked);
        if listed.is_empty() {
            assert_eq!(expanded, text, "text without references is left alone");
        }
        assert!(
            expanded.len() <= text.len(),
            "references are replaced, nothing added"
        );
    }
});
