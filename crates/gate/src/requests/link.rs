//! A server's question that is a page to open (URL-mode elicitation), such as a sign-in or a
//! payment page whose data must not pass through Toolgate. The user sees the server's message,
//! the page's domain (prominently, as the browser will reach it) and the whole address; the
//! page opens in the user's browser only when the user chooses to open it, never before and
//! never otherwise. Every such question is in the audit log with its address and what became
//! of it (opened, declined, withdrawn).

use rmcp::model::{ElicitResult, ElicitationAction};
use serde_json::json;
use toolgate_history::{AuditDecision, DecidedBy};
use toolgate_policy::{Effect, Subject};

use super::{pending, Asker, ServerRequestGate, ELICITATION, NO_CALLER};
use crate::approval::now_ms;
use crate::gatekeeper::{AuditNote, Held, Next};
use crate::wait::{Asked, Link, RequestKind};

/// Why no browser could be started on a page.
#[derive(Debug, thiserror::Error)]
#[error("could not start a browser: {0}")]
pub struct BrowserError(pub std::io::Error);

/// Why a page a server asks to open is refused unseen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("not a web address ({0})")]
    NotAnAddress(url::ParseError),
    /// Any scheme but `https` and `http` (named here without its colon).
    #[error("only https and http pages are opened, not {0}:")]
    Scheme(String),
    #[error("the address names no host")]
    NoHost,
}

/// Opens a page in the user's browser (`xdg-open` and the like, through the `open` crate).
pub fn open_in_browser(url: &str) -> Result<(), BrowserError> {
    open::that_detached(url).map_err(BrowserError)
}

/// The page, if it is one a browser should be given: `https` or `http`, with a host. Anything
/// else (`file:`, `javascript:`, a custom scheme that starts a program) is refused unseen.
pub fn link_of(url: &str) -> Result<Link, LinkError> {
    let parsed = url::Url::parse(url).map_err(LinkError::NotAnAddress)?;
    if !matches!(parsed.scheme(), "https" | "http") {
        return Err(LinkError::Scheme(parsed.scheme().to_owned()));
    }
    let domain = parsed
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or(LinkError::NoHost)?
        .to_owned();
    Ok(Link {
        url: parsed.to_string(),
        domain,
    })
}

impl ServerRequestGate {
    /// Asks the user whether to open the page; opens it only on a yes.
    pub(super) async fn open_link(
        &self,
        asker: &Asker,
        message: &str,
        url: &str,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> ElicitResult {
        let shown = json!({ "message": message, "url": url });
        let log = |decision, by, reason: String| {
            self.audit(asker, ELICITATION, &shown, decision, by, Some(reason))
        };
        let link = match link_of(url) {
            Ok(link) => link,
            Err(why) => {
                log(
                    AuditDecision::Denied,
                    DecidedBy::Default,
                    format!("a page Toolgate does not open: {why}"),
                )
                .await;
                return ElicitResult::new(ElicitationAction::Decline);
            }
        };
        let subject = Subject::Elicitation {
            server_id: asker.id.clone(),
            server_fingerprint: asker.fingerprint.clone(),
        };
        let verdict = toolgate_policy::decide(&subject, &self.policy.settings(), None, now_ms());
        let mut request = pending(
            asker,
            RequestKind::Elicitation,
            json!({}),
            json!({"type": "object"}),
        );
        request.message = Some(message.to_owned());
        request.reason = format!(
            "{} asks you to open a page on {}. It opens in your browser only if you choose to open it; what you enter there goes to that site, not through Toolgate.",
            asker.name, link.domain
        );
        request.link = Some(link.clone());
        // Rules can refuse a page, never open one: an allow rule still asks.
        let asked = match verdict.decision {
            toolgate_policy::Decision::Deny => None,
            _ => Some(self.ask(request, cancel).await),
        };
        if let Some(Asked::Unattended(why)) = &asked {
            tracing::warn!(
                "{} asked you to open a page on {} and nobody could be asked ({why}); it was not opened",
                asker.name,
                link.domain
            );
        }
        let settled =
            crate::gatekeeper::settle(Held::Link, Some(&verdict), asked.as_ref(), NO_CALLER);
        if settled.rule_to_save.is_some() {
            self.remember(&subject, Effect::Deny).await;
        }
        let (note, action) = match settled.next {
            Next::Run { .. } => match open_in_browser(&link.url) {
                Ok(()) => (
                    AuditNote {
                        reason: Some(format!("opened {} in the browser", link.domain)),
                        ..settled.audit
                    },
                    ElicitationAction::Accept,
                ),
                Err(why) => (
                    AuditNote {
                        decision: AuditDecision::Cancelled,
                        by: DecidedBy::User,
                        rule_id: None,
                        reason: Some(why.to_string()),
                    },
                    ElicitationAction::Cancel,
                ),
            },
            Next::Refuse { .. } => {
                let action = super::not_answered(settled.audit.decision);
                (settled.audit, action)
            }
        };
        self.audit
            .committed(&asker.id, ELICITATION, &shown, note)
            .await;
        ElicitResult::new(action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_pages_with_a_host_are_offered_and_the_domain_is_the_ascii_host() {
        let link = link_of("https://accounts.example.com/signin?session=abc").unwrap();
        assert_eq!(link.domain, "accounts.example.com");
        assert_eq!(link.url, "https://accounts.example.com/signin?session=abc");
        // A look-alike international name shows as what the browser reaches.
        assert_eq!(
            link_of("https://аpple.com/").unwrap().domain,
            "xn--pple-43d.com"
        );
        assert_eq!(
            link_of("https://user:pw@example.com@evil.test/")
                .unwrap()
                .domain,
            "evil.test"
        );
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "vscode://x",
            "not a url",
        ] {
            assert!(link_of(bad).is_err(), "{bad}");
        }
    }
}
