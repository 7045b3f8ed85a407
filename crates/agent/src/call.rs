//! One call on the gated path: resolved in the offer's catalog, decided by the user's rules or
//! the user, audited, run on its server, and its result shaped for the model or the client.

use serde_json::Value;
use toolgate_llm::{ContentPart, Message, ToolCall};
use toolgate_mcp::{CallOptions, CallProgress, McpError, ToolOutput};
use toolgate_policy::{Subject, ToolCall as PolicyCall};

use crate::gatekeeper::{self, Announce, Next, Settlement};
use crate::offer::Offer;
use crate::output::{images_of, json_size, truncate};
use crate::resource::{self, Action};
use crate::wait::{PendingCall, RequestKind};
use crate::{
    approval, apps, Agent, AgentError, CallOutcome, ShownImage, ToolTarget, TurnEvent, TurnOptions,
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

    /// A connected client's `resources/read` of `uri` on `server_id`, on the same gated path as
    /// a call ([`crate::resource`]): decided, asked when the rules say so, audited, reviewed
    /// when the user asked to, and scrubbed of secrets. The read's result comes back as the
    /// gate's [`ToolOutput`]; [`crate::resource::as_read`] makes it a read result again.
    pub async fn read_for_client(
        &self,
        server_id: &str,
        uri: &str,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<CallOutcome, AgentError> {
        let offer = self.offer().await?;
        let (entry, call) = resource::entry_and_call(&offer, server_id, uri);
        Ok(self
            .pseudo(&offer, &entry, &call, (options, Action::Read), on_event)
            .await)
    }

    /// A connected client's `prompts/get` of prompt `name` of `server_id`, on the same gated
    /// path ([`crate::resource`]); the server's questions while it makes the prompt go to
    /// `options.asker`. [`crate::resource::as_prompt`] makes the result a prompt again.
    pub async fn prompt_for_client(
        &self,
        server_id: &str,
        name: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<CallOutcome, AgentError> {
        let offer = self.offer().await?;
        let (entry, call) = resource::prompt_entry_and_call(&offer, server_id, name, arguments);
        Ok(self
            .pseudo(&offer, &entry, &call, (options, Action::Prompt), on_event)
            .await)
    }

    /// One of the pseudo-tools ([`crate::resource`]) through steps 2 to 5, as the server's
    /// fingerprint binds it.
    async fn pseudo(
        &self,
        offer: &Offer,
        entry: &toolgate_catalog::Entry,
        call: &ToolCall,
        (options, action): (&TurnOptions, Action),
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> CallOutcome {
        let subject = approval::subject(
            entry,
            offer.fingerprint(&entry.server_id),
            &approval::tool_print(entry),
            &call.arguments,
        );
        self.decide_and_run(offer, (entry, &subject), call, options, on_event, action)
            .await
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
                                result: serde_json::to_value(&output.result).unwrap_or_default(),
                            })
                        }),
                    Err(_) => None,
                };
                self.result_message(call, outcome, options, on_event, app)
            }
        }
    }

    /// [`Self::gated_call`] up to the server's answer: the gate's five steps.
    pub(crate) async fn gated(
        &self,
        offer: &Offer,
        call: &ToolCall,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> CallOutcome {
        // 1. Which tool, with what: a name or arguments that make no sense end here.
        let (entry, asked) = match self.resolve(offer, call) {
            Ok(resolved) => resolved,
            Err(told) => return CallOutcome::Refused(told),
        };
        let Subject::ToolCall(subject) = &asked else {
            return CallOutcome::Refused("Toolgate could not describe this call.".into());
        };
        self.decide_and_run(
            offer,
            (entry, subject),
            call,
            options,
            on_event,
            Action::Call,
        )
        .await
    }

    /// Steps 2 to 5 for a request resolved to `entry` and `subject`: what the rules say, what
    /// the user says, what that comes to, and then `action` run or the request refused.
    async fn decide_and_run(
        &self,
        offer: &Offer,
        (entry, subject): (&toolgate_catalog::Entry, &PolicyCall),
        call: &ToolCall,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
        action: Action,
    ) -> CallOutcome {
        let asked = Subject::ToolCall(subject.clone());
        // 2. What the rules say, knowing what this conversation has read.
        let verdict = self.keeper.verdict(entry, &offer.facts, &asked);
        // 3. What the user says, when the rules leave it to them.
        let answer = match verdict.decision {
            toolgate_policy::Decision::Ask => Some(
                self.keeper
                    .gate
                    .ask(
                        PendingCall {
                            chat: self.chat_title().await,
                            ..self.card(
                                entry,
                                call,
                                subject,
                                (&verdict, gatekeeper::ask_reason(&verdict)),
                            )
                        },
                        &options.cancel,
                        options.approval_timeout,
                        |held| on_event(TurnEvent::ApprovalRequested(held)),
                    )
                    .await,
            ),
            _ => None,
        };
        // 4. What that comes to.
        let held = match action {
            Action::Call => gatekeeper::Held::ToolCall,
            Action::Read => gatekeeper::Held::ResourceRead,
            Action::Prompt => gatekeeper::Held::PromptGet,
        };
        let settled =
            gatekeeper::settle(held, Some(&verdict), answer.as_ref(), self.keeper.asker());
        // 5. Announced, remembered, audited; then run or refused.
        self.carry_out(
            offer,
            (entry, subject),
            call,
            &verdict,
            settled,
            (options, action),
            on_event,
        )
        .await
    }

    /// Step 5: what a settlement says, done in order: the window told of a decision the rules
    /// made, the user's rule saved, the decision audited (an allowed one in the journal before
    /// the call is sent), then the call run or refused.
    #[allow(clippy::too_many_arguments)]
    async fn carry_out(
        &self,
        offer: &Offer,
        (entry, subject): (&toolgate_catalog::Entry, &PolicyCall),
        call: &ToolCall,
        verdict: &toolgate_policy::Verdict,
        settled: Settlement,
        (options, action): (&TurnOptions, Action),
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> CallOutcome {
        if let Some(announce) = settled.announce {
            let card = self.card(entry, call, subject, (verdict, verdict.reason.clone()));
            on_event(match announce {
                Announce::DecidedByRule { allowed } => TurnEvent::DecidedByRule {
                    call: card,
                    allowed,
                },
                Announce::Unattended => TurnEvent::Unattended { call: card },
            });
        }
        if let Some(rule) = settled.rule_to_save {
            self.keeper.remember(subject, rule).await;
        }
        match settled.next {
            Next::Refuse { shown, told } => {
                self.keeper
                    .audit
                    .refused(subject, &call.arguments, settled.audit);
                on_event(TurnEvent::ToolDenied {
                    call_id: call.id.clone(),
                    reason: shown,
                });
                CallOutcome::Refused(told)
            }
            Next::Run { edited } => {
                if let Some(edited) = &edited {
                    // What the user typed is the user's own words; what they left is not.
                    for typed in toolgate_gate::provenance::typed(&call.arguments, edited) {
                        self.keeper.exposure.observe_user(typed);
                    }
                }
                let original = edited.is_some().then_some(&call.arguments);
                let arguments = edited.unwrap_or_else(|| call.arguments.clone());
                let audit = self
                    .keeper
                    .audit
                    .allowed(subject, &arguments, original, settled.audit);
                self.run(
                    offer,
                    entry,
                    call,
                    arguments,
                    audit,
                    (options, action),
                    on_event,
                )
                .await
            }
        }
    }

    /// Step 1: the catalog entry `call` names (models sometimes swap `-` and `_` or change
    /// case; the catalog's names are unique even so, so the loose match can only find the tool
    /// meant) and the policy's view of the call. A refusal here is audited as Toolgate's.
    fn resolve<'o>(
        &self,
        offer: &'o Offer,
        call: &ToolCall,
    ) -> Result<(&'o toolgate_catalog::Entry, Subject), String> {
        let catalog = &offer.catalog;
        let Some(entry) = catalog
            .resolve(&call.name)
            .or_else(|| catalog.resolve_loose(&call.name))
        else {
            self.keeper.audit.refused_early(
                "",
                &call.name,
                &call.arguments,
                "no tool of that name is offered".to_owned(),
            );
            return Err(format!(
                "There is no tool named '{}'. Use one of the tools offered.",
                call.name
            ));
        };
        if !matches!(call.arguments, Value::Object(_)) {
            self.keeper.audit.refused_early(
                &entry.server_id,
                &entry.tool.name,
                &call.arguments,
                "the arguments are not a JSON object".to_owned(),
            );
            return Err(format!(
                "The arguments for '{}' must be a JSON object; got: {}",
                call.name, call.arguments
            ));
        }
        let subject = approval::subject(
            entry,
            offer.fingerprint(&entry.server_id),
            &offer.tool_print(entry),
            &call.arguments,
        );
        Ok((entry, Subject::ToolCall(subject)))
    }

    /// The title of this agent's chat, for a question shown where the chat is not (the tray,
    /// a notification, *Activity*); `None` for a connected client's calls, or when the history
    /// cannot say.
    pub(crate) async fn chat_title(&self) -> Option<String> {
        if self.keeper.audit.client.is_some() {
            return None;
        }
        let history = self.keeper.audit.history.clone()?;
        let id = self.keeper.audit.conversation.clone()?;
        match tokio::task::spawn_blocking(move || history.get(&id)).await {
            Ok(Ok(conversation)) => Some(conversation.title),
            Ok(Err(e)) => {
                tracing::debug!("the chat's title for its question: {e}");
                None
            }
            Err(_) => None,
        }
    }

    /// The call as the window, the tray and the terminal show it.
    fn card(
        &self,
        entry: &toolgate_catalog::Entry,
        call: &ToolCall,
        subject: &PolicyCall,
        (verdict, reason): (&toolgate_policy::Verdict, String),
    ) -> PendingCall {
        PendingCall {
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
            beyond_rules: verdict.beyond_rules,
            client: self.keeper.audit.client.clone(),
            chat: None,
            link: None,
            description: Some(entry.tool.description.clone()).filter(|d| !d.trim().is_empty()),
            deadline: None,
        }
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
        (options, action): (&TurnOptions, Action),
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
            conversation: self.keeper.audit.conversation.clone(),
            asker: options.asker.clone(),
            logs: options.server_logs,
            ..CallOptions::default()
        };
        let running = async {
            match action {
                Action::Call => {
                    self.servers
                        .call_tool_with(&entry.server_id, &entry.tool.name, arguments, call_options)
                        .await
                }
                Action::Read => resource::run(&self.servers, &entry.server_id, &arguments).await,
                Action::Prompt => {
                    resource::get_prompt(
                        &self.servers,
                        &entry.server_id,
                        &arguments,
                        options.asker.as_ref(),
                    )
                    .await
                }
            }
        };
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
            Ok(output) => self.keeper.audit.finish(
                audit.as_ref(),
                millis,
                json_size(&output.result),
                output.is_error.then_some("the tool reported an error"),
            ),
            Err(e) => self
                .keeper
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
                let images = images_of(&output.result);
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
