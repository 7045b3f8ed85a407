//! The gate as one conversation meets it: the chat's, a connected client's connection, an App's.
//!
//! A [`Gatekeeper`] holds what the gate knows of that conversation (the rules, where its
//! decisions are written, the untrusted content it has read) and the wait where its requests are
//! held. The chat's turn loop and the gateway both reach the gate through the agent, and the
//! agent asks its `Gatekeeper` for the verdict (step 2 of a call), who asks (for
//! [`settle`](crate::gatekeeper::settle), step 4) and the rule an answer made.

use std::sync::Arc;

use toolgate_catalog::Entry;
use toolgate_policy::{Subject, ToolCall as PolicyCall, Verdict};

use crate::approval::{self, Audit, PolicyStore};
use crate::exposure::{self, Exposure, Facts};
use crate::gatekeeper::{Asker, RuleToSave};
use crate::wait::Gate;

/// The gate of one conversation.
#[derive(Clone)]
pub struct Gatekeeper {
    /// Where requests wait for a person's answer (shared by the whole app).
    pub gate: Arc<Gate>,
    /// The user's rules.
    pub policy: Arc<dyn PolicyStore>,
    /// Where decisions are written, and whose they are.
    pub audit: Audit,
    /// The untrusted content this conversation has read.
    pub exposure: Arc<Exposure>,
}

impl Gatekeeper {
    /// Step 2: the rules' verdict on `asked`, with step 7 of their precedence fed what this
    /// conversation has read, whether the call could send data out and whether provenance
    /// proves its decisive arguments the user's, step 8 the secrets found in the call's
    /// arguments (unless the server's `scanSecrets` is off), and step 9 a value only outside
    /// content brought ([`crate::provenance`]).
    pub fn verdict(&self, entry: &Entry, facts: &Facts, asked: &Subject) -> Verdict {
        let untrusted = self.exposure.untrusted();
        let judged = match asked {
            Subject::ToolCall(call) => self.exposure.judge(entry, &call.arguments),
            _ => Default::default(),
        };
        // A read that is not proven says why with why it could send data out.
        let egress = exposure::egress(entry, facts).map(|e| match &judged.unproven {
            Some(unproven) => format!("{e}; {unproven}"),
            None => e,
        });
        let scanned = facts.get(&entry.server_id).is_none_or(|f| f.scan_secrets);
        let secrets = match asked {
            Subject::ToolCall(call) if scanned => crate::secrets::in_arguments(&call.arguments),
            _ => None,
        };
        toolgate_policy::decide_in(
            asked,
            &self.policy.settings(),
            &toolgate_policy::Context {
                conversation_id: self.audit.conversation.as_deref(),
                client: self.audit.client.as_deref(),
                now_ms: approval::now_ms(),
                untrusted: untrusted.as_deref(),
                egress: egress.as_deref(),
                secrets: secrets.as_deref(),
                proven: judged.proven.as_deref(),
                tainted: judged.tainted.as_deref(),
            },
        )
    }

    /// Who asks, for the settlement.
    pub fn asker(&self) -> Asker<'_> {
        Asker {
            conversation: self.audit.conversation.as_deref(),
            client: self.audit.client.as_deref(),
        }
    }

    /// Saves the rule an answer made, before the call runs (so the next call sees it). A
    /// failure is logged: the user's answer for this call stands.
    pub async fn remember(&self, subject: &PolicyCall, rule: RuleToSave) {
        let rule = approval::rule_for(
            subject,
            rule.allow,
            rule.reach,
            rule.lasting,
            self.audit.conversation.as_deref(),
            self.audit.client.as_deref(),
            approval::now_ms(),
        );
        if let Err(e) = self.policy.add_rule(rule).await {
            tracing::error!("could not save the rule the user asked for: {e}");
        }
    }
}
