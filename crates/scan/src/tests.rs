use serde_json::json;

use super::*;

// Test values shaped like real credentials, made up here (not live keys).
const GITHUB: &str = "ghp_0123456789abcdefABCDEF0123456789abcd";
const AWS_ID: &str = "AKIAIOSFODNN7EXAMPLQ";
const PRIVATE_KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----";

#[test]
fn providers_tokens_and_key_blocks_are_found_and_plain_text_is_not() {
    let s = Scanner::new();
    let text = format!("token {GITHUB} and id {AWS_ID}\n{PRIVATE_KEY}\nthe weather is fine");
    let found = s.scan(&text);
    let rules: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
    assert!(rules.iter().any(|r| r.contains("GitHub")), "{rules:?}");
    assert!(rules.iter().any(|r| r.contains("AWS")), "{rules:?}");
    assert!(rules.iter().any(|r| r.contains("Private Key")), "{rules:?}");
    assert_eq!(&text[found[0].start..found[0].end], GITHUB);
    assert!(s
        .scan("Meeting notes: ship on Tuesday, commit 3f2a9c1b7d4e5f60718293a4b5c6d7e8f9012345.")
        .is_empty());
}

#[test]
fn a_password_assignment_counts_only_when_the_value_looks_secret() {
    let s = Scanner::new();
    assert!(!s.scan(r#"password = "Xk9#mQ2$vL7pR4wZ""#).is_empty());
    assert!(
        s.scan(r#"password = "changeme""#).is_empty(),
        "a placeholder"
    );
    assert!(s.scan(r#"password = "your-password-here""#).is_empty());
}

#[test]
fn toolgate_s_own_values_are_matched_exactly_and_short_ones_ignored() {
    let s = Scanner::new().with_known([
        ("MAIL_KEY".to_owned(), "plainlooking-but-ours".to_owned()),
        ("PORT".to_owned(), "8080".to_owned()),
    ]);
    let found = s.scan("send plainlooking-but-ours to port 8080");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].rule, "a secret Toolgate keeps (MAIL_KEY)");
}

#[test]
fn redaction_replaces_each_finding_and_json_findings_name_their_string() {
    let s = Scanner::new();
    let (text, found) = s.redact(&format!("key: {GITHUB}."));
    assert_eq!(found.len(), 1);
    assert_eq!(text, format!("key: [secret removed: {}].", found[0].rule));
    let args = json!({"to": "a@example.com", "attachments": [{"body": format!("here {GITHUB}")}]});
    let located = s.scan_json(&args);
    assert_eq!(located.len(), 1);
    assert_eq!(located[0].pointer, "/attachments/0/body");
}

#[test]
fn values_learnt_later_are_matched_too() {
    let s = Scanner::new();
    let extra = [("NOTES_KEY".to_owned(), "plain-looking-value-42".to_owned())];
    assert!(s.scan("key plain-looking-value-42").is_empty());
    let (text, found) = s.redact_with("key plain-looking-value-42", &extra);
    assert_eq!(found.len(), 1);
    assert_eq!(
        text,
        "key [secret removed: a secret Toolgate keeps (NOTES_KEY)]"
    );
    assert_eq!(
        s.scan_json_with(&json!({"a": "plain-looking-value-42"}), &extra)[0].pointer,
        "/a"
    );
}
