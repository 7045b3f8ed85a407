//! What the audit exporter keeps in the history: a destination's cursor (kept across opens,
//! never moving back), one sender per destination among the processes on a file, the
//! history's identity, and which entries may still change.
//!
//! Two `History` values on one file stand for two processes: each has its own journal and
//! lock, which is all the liveness check looks at.

use serde_json::json;
use toolgate_history::{AuditDecision, AuditEntry, DecidedBy, History};

fn entry(decision: AuditDecision) -> AuditEntry {
    AuditEntry::new("srv", "echo", json!({"n": 1}), decision, DecidedBy::Rule)
}

#[test]
fn a_cursor_starts_at_the_end_moves_only_forward_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let history = History::open(&path).unwrap();
    let identity = history.identity().unwrap();
    assert_eq!(identity.len(), 32);
    for _ in 0..3 {
        history.record_audit(&entry(AuditDecision::Denied)).unwrap();
    }
    // A new destination gets what happens from now on.
    assert_eq!(
        history.claim_export("http://c/v1/logs").wait().unwrap(),
        Some(3)
    );
    assert_eq!(
        history
            .export_backlog("http://c/v1/logs")
            .unwrap()
            .unwrap()
            .waiting,
        0
    );
    for _ in 0..2 {
        history.record_audit(&entry(AuditDecision::Denied)).unwrap();
    }
    let after: Vec<i64> = history
        .audit_after(3, 10)
        .unwrap()
        .iter()
        .map(|r| r.row.id)
        .collect();
    assert_eq!(after, vec![4, 5]);
    assert_eq!(
        history
            .export_backlog("http://c/v1/logs")
            .unwrap()
            .unwrap()
            .waiting,
        2
    );
    history
        .acknowledge_export("http://c/v1/logs", 5)
        .wait()
        .unwrap();
    history
        .acknowledge_export("http://c/v1/logs", 4)
        .wait()
        .unwrap();
    assert!(history.export_backlog("http://other").unwrap().is_none());
    drop(history);

    let history = History::open(&path).unwrap();
    assert_eq!(
        history.identity().unwrap(),
        identity,
        "the identity is the file's"
    );
    assert_eq!(
        history.claim_export("http://c/v1/logs").wait().unwrap(),
        Some(5)
    );
    let other = tempfile::tempdir().unwrap();
    let elsewhere = History::open(&other.path().join("h.sqlite3")).unwrap();
    assert_ne!(elsewhere.identity().unwrap(), identity);
}

#[test]
fn one_process_sends_to_a_destination_until_it_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let first = History::open(&path).unwrap();
    let second = History::open(&path).unwrap();
    assert_eq!(first.claim_export("d").wait().unwrap(), Some(0));
    assert_eq!(
        second.claim_export("d").wait().unwrap(),
        None,
        "the first still runs"
    );
    assert_eq!(
        first.claim_export("d").wait().unwrap(),
        Some(0),
        "its own again"
    );
    first.release_export("d").wait().unwrap();
    assert_eq!(second.claim_export("d").wait().unwrap(), Some(0));
    // The second goes away without releasing (as a killed process would): its journal's lock
    // is gone with it, and the first takes over at once.
    drop(second);
    assert_eq!(first.claim_export("d").wait().unwrap(), Some(0));
}

#[test]
fn an_allowed_call_runs_while_its_process_lives_and_is_complete_once_it_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let caller = History::open(&path).unwrap();
    let exporter = History::open(&path).unwrap();
    let running = caller.journal_audit(entry(AuditDecision::Allowed)).unwrap();
    caller.flush();
    let mut review = entry(AuditDecision::Allowed);
    review.reason = Some("result review: passed".into());
    caller.record_audit(&review).unwrap();
    caller.record_audit(&entry(AuditDecision::Denied)).unwrap();
    let rows = exporter.audit_after(0, 10).unwrap();
    let states: Vec<bool> = rows.iter().map(|r| r.running).collect();
    assert_eq!(
        states,
        vec![true, false, false],
        "a review or a refusal runs nothing"
    );
    assert!(caller.audit_after(0, 1).unwrap()[0].running, "its own call");

    caller.finish_audit_later(&running, 5, Some(10), false, None);
    caller.flush();
    assert!(!exporter.audit_by_ids(&[1]).unwrap()[0].running, "finished");

    let left = caller.journal_audit(entry(AuditDecision::Allowed)).unwrap();
    caller.flush();
    drop(left);
    assert!(exporter.audit_after(3, 10).unwrap()[0].running);
    drop(caller);
    assert!(
        !exporter.audit_after(3, 10).unwrap()[0].running,
        "its process is gone: it will never finish, so it is sent as it is"
    );
}
