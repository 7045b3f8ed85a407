//! One call on the gated path: resolved in the offer's catalog, decided by the user's rules or
//! the user, audited, run on its server, and its result shaped for the model or the client.

use serde_json::Value;
use toolgate_history::{AuditDecision, DecidedBy};
use toolgate_llm::{ContentPart, Message, ToolCall};
use toolgate_mcp::{CallOptions, CallProgress, McpError, ToolOutput};

use crate::gate::{Decision, Lasting, PendingCall, RequestKind};
use crate::offer::Offer;
use crate::output::{images_of, json_size, truncate};
use crate::{
    approval, apps, exposure, Agent, AgentError, CallOutcome, ShownImage, ToolTarget, TurnEvent,
    TurnOptions,
};

impl Agent {
    /// One tool call through exactly the path a model's call takes in a turn, without a model: the
    /// catalog of the ready servers (built as at the start of a turn) resolves `call.name`, the
    /// user's rules decide (asking at the gate when they say to), the decision is audited, and an
    /// allowed call runs on its server. For the benchmarks, which measure that path per call.
    pub async fn gated_call_alone(
        &self,
        call: &ToolCall,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<Message, AgentError> {
        let offer = self.offer().await?;
        Ok(self.gated_call(&offer, call, options, on_event).await)
    }

    /// One call from a connected client (through the gateway), on the path a model's call takes:
    /// `call.name` is resolved in the catalog built from the ready servers and `tools` (the
    /// client's profile), the user's rules decide (asking at the gate when they say to), the
    /// decision is audited, and an allowed call runs. The server's whole result comes back, not
    /// the text a model gets; progress arrives as [`TurnEvent::ToolProgress`].
    pub async fn call_for_client(
        &self,
        call: &ToolCall,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<CallOutcome, AgentError> {
        let offer = self.offer().await?;
        Ok(self.gated(&offer, call, options, on_event).await)
    }

    /// Decides one call by the user's rules, asking the user when they say to; then runs it or
    /// reports why not. Always yields a result message, and writes the decision to the audit log.
    pub(crate) async fn gated_call(
        &self,
        offer: &Offer,
        call: &ToolCall,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Message {
        match self.gated(offer, call, options, on_event).await {
            CallOutcome::Refused(told) => Message::tool_text(call.id.clone(), told, true),
            CallOutcome::Ran(outcome) => {
                // A tool that links an MCP App has its result shown there too.
                let app = match &outcome {
                    Ok(output) => offer
                        .catalog
                        .resolve(&call.name)
                        .or_else(|| offer.catalog.resolve_loose(&call.name))
                        .and_then(|entry| {
                            let key = (entry.server_id.clone(), entry.tool.name.clone());
                            Some(apps::ToolApp {
                                resource_uri: offer.apps.get(&key)?.clone(),
                                server_id: entry.server_id.clone(),
                                arguments: call.arguments.clone(),
                                result: output.raw.clone(),
                            })
                        }),
                    Err(_) => None,
                };
                self.result_message(call, outcome, options, on_event, app)
            }
        }
    }

    /// [`Self::gated_call`] up to the server's answer.
    pub(crate) async fn gated(
        &self,
        offer: &Offer,
        call: &ToolCall,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> CallOutcome {
        let error = CallOutcome::Refused;
        let catalog = &offer.catalog;
        // Models sometimes swap `-` and `_` or change case; the catalog's names are unique even
        // so, so the loose match can only find the tool meant.
        let Some(entry) = catalog
            .resolve(&call.name)
            .or_else(|| catalog.resolve_loose(&call.name))
        else {
            self.audit.refused_early(
                "",
                &call.name,
                &call.arguments,
                "no tool of that name is offered".to_owned(),
            );
            return error(format!(
                "There is no tool named '{}'. Use one of the tools offered.",
                call.name
            ));
        };
        if !matches!(call.arguments, Value::Object(_)) {
            self.audit.refused_early(
                &entry.server_id,
                &entry.tool.name,
                &call.arguments,
                "the arguments are not a JSON object".to_owned(),
            );
            return error(format!(
                "The arguments for '{}' must be a JSON object; got: {}",
                call.name, call.arguments
            ));
        }
        let fingerprint = offer
            .fingerprints
            .get(&entry.server_id)
            .map(String::as_str)
            .unwrap_or("");
        let asked = toolgate_policy::Subject::ToolCall(approval::subject(
            entry,
            fingerprint,
            &offer.tool_print(entry),
            &call.arguments,
        ));
        // The policy's view of the call, borrowed from the subject the decision takes.
        let toolgate_policy::Subject::ToolCall(subject) = &asked else {
            return error("Toolgate could not describe this call to the approval rules.".into());
        };
        let conversation = self.audit.conversation.as_deref();
        let client = self.audit.client.as_deref();
        let untrusted = self.exposure.untrusted();
        let egress = exposure::egress(entry, &offer.facts);
        let verdict = toolgate_policy::decide_in(
            &asked,
            &self.policy.settings(),
            &toolgate_policy::Context {
                conversation_id: conversation,
                client,
                now_ms: approval::now_ms(),
                untrusted: untrusted.as_deref(),
                egress: egress.as_deref(),
            },
        );
        let by_policy = match verdict.basis {
            toolgate_policy::Basis::Paused => DecidedBy::Pause,
            toolgate_policy::Basis::Rule => DecidedBy::Rule,
            _ => DecidedBy::Default,
        };
        // An allowed call's decision is in the audit journal before the call is sent (no
        // database commit on its path); a decision that runs nothing is only queued.
        let allowed = |by, arguments: &Value, original, reason: Option<String>| {
            self.audit.allowed(approval::Decided {
                call: subject,
                arguments,
                original,
                decision: AuditDecision::Allowed,
                by,
                rule_id: (by == DecidedBy::Rule)
                    .then(|| verdict.rule_id.clone())
                    .flatten(),
                reason,
            })
        };
        let decided = |decision, by, arguments: &Value, original, reason: Option<String>| {
            drop(
                self.audit.record(approval::Decided {
                    call: subject,
                    arguments,
                    original,
                    decision,
                    by,
                    rule_id: (by == DecidedBy::Rule)
                        .then(|| verdict.rule_id.clone())
                        .flatten(),
                    reason,
                }),
            );
        };
        // Every call that will not run ends here: the card shows `shown`, the model gets `told`.
        let denied = |shown: Option<String>, told: String| {
            on_event(TurnEvent::ToolDenied {
                call_id: call.id.clone(),
                reason: shown,
            });
            error(told)
        };
        let refused = |reason: String| {
            let told = format!("Toolgate did not run this call: {reason}");
            denied(Some(reason), told)
        };
        let shown = |reason: String| PendingCall {
            id: String::new(),
            request: RequestKind::ToolCall,
            message: None,
            call_id: call.id.clone(),
            server_id: entry.server_id.clone(),
            server_name: entry.server_name.clone(),
            tool: entry.tool.name.clone(),
            arguments: call.arguments.clone(),
            read_only: subject.annotations.read_only,
            destructive: subject.annotations.destructive,
            input_schema: entry.tool.input_schema.clone(),
            reason,
            client: self.audit.client.clone(),
            link: None,
        };
        let arguments = match verdict.decision {
            toolgate_policy::Decision::Deny => {
                on_event(TurnEvent::DecidedByRule {
                    call: shown(verdict.reason.clone()),
                    allowed: false,
                });
                decided(
                    AuditDecision::Denied,
                    by_policy,
                    &call.arguments,
                    None,
                    Some(verdict.reason.clone()),
                );
                return refused(verdict.reason.clone());
            }
            toolgate_policy::Decision::Allow => {
                on_event(TurnEvent::DecidedByRule {
                    call: shown(verdict.reason.clone()),
                    allowed: true,
                });
                let audit = allowed(
                    by_policy,
                    &call.arguments,
                    None,
                    Some(verdict.reason.clone()),
                );
                return self
                    .run(
                        offer,
                        entry,
                        call,
                        call.arguments.clone(),
                        audit,
                        options,
                        on_event,
                    )
                    .await;
            }
            toolgate_policy::Decision::Ask => {
                if let Some(why) = self.gate.nobody_to_ask() {
                    on_event(TurnEvent::Unattended {
                        call: shown(verdict.reason.clone()),
                    });
                    decided(
                        AuditDecision::Denied,
                        DecidedBy::Unattended,
                        &call.arguments,
                        None,
                        Some(why.to_owned()),
                    );
                    return denied(
                        Some(why.to_owned()),
                        format!("Toolgate did not run this call: nobody could be asked to approve it ({why})."),
                    );
                }
                let mut reason = verdict.reason.clone();
                for changed in &verdict.changed {
                    let what = match changed.what {
                        toolgate_policy::ChangeKind::ServerChanged => {
                            "the server's command or address changed"
                        }
                        toolgate_policy::ChangeKind::ToolChanged => {
                            "the tool's description or inputs changed"
                        }
                    };
                    reason.push_str(&format!(" Asking again: {what} since you allowed it."));
                }
                let (pending, answer) = self.gate.hold(shown(reason));
                let gate_id = pending.id.clone();
                on_event(TurnEvent::ApprovalRequested(pending));
                let answer = tokio::select! {
                    // Stop wins a tie with an approval: nothing may start after the user stopped.
                    biased;
                    () = options.cancel.cancelled() => {
                        self.gate.withdraw(&gate_id);
                        decided(AuditDecision::Cancelled, DecidedBy::User, &call.arguments, None,
                            Some("the user stopped the turn".to_owned()));
                        return refused("the user stopped the turn".to_owned());
                    }
                    answer = tokio::time::timeout(options.approval_timeout, answer) => answer,
                };
                let Ok(answer) = answer else {
                    self.gate.withdraw(&gate_id);
                    let reason = format!(
                        "nobody answered within {} s",
                        options.approval_timeout.as_secs()
                    );
                    decided(
                        AuditDecision::TimedOut,
                        DecidedBy::Timeout,
                        &call.arguments,
                        None,
                        Some(reason.clone()),
                    );
                    return refused(reason);
                };
                // An "always" answer becomes a rule before the call runs.
                let remembered = match &answer {
                    // A client's call belongs to no chat: "in this chat" is this call only,
                    // never quietly "always".
                    Decision::Allow {
                        lasting: Lasting::Conversation,
                        ..
                    } if conversation.is_none() && client.is_some() => None,
                    Decision::Allow { reach, lasting } => Some((true, *reach, *lasting)),
                    Decision::DenyAlways { reach } => Some((false, *reach, Lasting::Always)),
                    _ => None,
                };
                if let Some((allow, reach, lasting)) = remembered {
                    let rule = approval::rule_for(
                        subject,
                        allow,
                        reach,
                        lasting,
                        conversation,
                        client,
                        approval::now_ms(),
                    );
                    if let Err(e) = self.policy.add_rule(rule) {
                        tracing::error!("could not save the rule the user asked for: {e}");
                    }
                }
                match answer {
                    Decision::Deny { reason } => {
                        decided(
                            AuditDecision::Denied,
                            DecidedBy::User,
                            &call.arguments,
                            None,
                            reason.clone(),
                        );
                        let told = match &reason {
                            Some(r) if !r.trim().is_empty() => {
                                format!("The user denied this tool call: {r}")
                            }
                            _ => "The user denied this tool call.".to_owned(),
                        };
                        return denied(reason, told);
                    }
                    Decision::DenyAlways { .. } => {
                        decided(
                            AuditDecision::Denied,
                            DecidedBy::User,
                            &call.arguments,
                            None,
                            Some("denied, and from now on".to_owned()),
                        );
                        return denied(
                            None,
                            "The user denied this tool call, and will not allow it.".to_owned(),
                        );
                    }
                    Decision::ApproveEdited { arguments } => {
                        let audit = allowed(
                            DecidedBy::User,
                            &arguments,
                            Some(&call.arguments),
                            Some("approved with edited arguments".to_owned()),
                        );
                        (arguments, audit)
                    }
                    Decision::Approve | Decision::Allow { .. } => {
                        let audit = allowed(DecidedBy::User, &call.arguments, None, None);
                        (call.arguments.clone(), audit)
                    }
                }
            }
        };
        let (arguments, audit) = arguments;
        self.run(offer, entry, call, arguments, audit, options, on_event)
            .await
    }

    /// Runs an approved call on its server, reporting progress, and completes its audit entry.
    /// The result is then reviewed when the user asked to, and noted as untrusted content when
    /// it is.
    #[allow(clippy::too_many_arguments)]
    async fn run(
        &self,
        offer: &Offer,
        entry: &toolgate_catalog::Entry,
        call: &ToolCall,
        arguments: Value,
        audit: Option<toolgate_history::AuditRef>,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> CallOutcome {
        on_event(TurnEvent::ToolStarted {
            call_id: call.id.clone(),
        });
        let started = std::time::Instant::now();
        let (progress, mut updates) = tokio::sync::mpsc::unbounded_channel();
        let call_options = CallOptions {
            cancel: Some(options.cancel.child_token()),
            progress: Some(progress),
            conversation: self.audit.conversation.clone(),
            ..CallOptions::default()
        };
        let running = self.servers.call_tool_with(
            &entry.server_id,
            &entry.tool.name,
            arguments,
            call_options,
        );
        tokio::pin!(running);
        let outcome = loop {
            tokio::select! {
                outcome = &mut running => break outcome,
                Some(CallProgress { progress, total, message, task }) = updates.recv() => {
                    on_event(TurnEvent::ToolProgress {
                        call_id: call.id.clone(),
                        progress,
                        total,
                        message,
                        task,
                    });
                }
            }
        };
        let millis = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match &outcome {
            Ok(output) => self.audit.finish(
                audit.as_ref(),
                millis,
                json_size(&output.raw),
                output.is_error.then_some("the tool reported an error"),
            ),
            Err(e) => self
                .audit
                .finish(audit.as_ref(), millis, None, Some(&e.to_string())),
        }
        self.after_run(offer, entry, call, outcome, options, on_event)
            .await
    }

    /// What the model gets back from a call that ran, announced to the UI.
    fn result_message(
        &self,
        call: &ToolCall,
        outcome: Result<ToolOutput, McpError>,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
        app: Option<apps::ToolApp>,
    ) -> Message {
        let mut shown = Vec::new();
        let (is_error, content, images) = match outcome {
            Ok(output) => {
                let images = images_of(&output.raw);
                shown = images
                    .iter()
                    .filter_map(|part| match part {
                        ContentPart::Image { mime_type, data } => Some(ShownImage {
                            mime_type: mime_type.clone(),
                            data: data.clone(),
                        }),
                        _ => None,
                    })
                    .collect();
                (
                    output.is_error,
                    truncate(output.text, options.result_limit),
                    // Endpoints that copy OpenAI's API often serve text-only models, which fail
                    // on an image; only providers known to take images get them.
                    if matches!(self.target, ToolTarget::Anthropic | ToolTarget::OpenAi) {
                        images
                    } else {
                        Vec::new()
                    },
                )
            }
            Err(e) => (true, e.to_string(), Vec::new()),
        };
        on_event(TurnEvent::ToolFinished {
            call_id: call.id.clone(),
            is_error,
            output: content.clone(),
            images: shown,
            app,
        });
        let mut parts = vec![ContentPart::text(content)];
        parts.extend(images);
        Message::ToolResult {
            call_id: call.id.clone(),
            content: parts,
            is_error,
        }
    }
}
