//! What a call leaves behind for the model and the audit log: ids unique in the conversation,
//! results cut to a limit with a note, the images a provider can look at, and sizes.

use std::collections::HashSet;

use toolgate_llm::{ContentPart, Message, ToolCall};

/// The size of a value as JSON, counted while writing it nowhere: tool results can be tens of
/// megabytes, and only their size is needed for the audit log.
pub(crate) fn json_size(value: &impl serde::Serialize) -> Option<u64> {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).ok()?;
    Some(count.0)
}

/// The images of a tool result, for providers that can look at them. Everything else is in the
/// text rendering already (with a placeholder where each image was).
pub(crate) fn images_of(result: &rmcp::model::CallToolResult) -> Vec<ContentPart> {
    // What Anthropic and OpenAI accept in a request; anything else stays a placeholder in text.
    const KINDS: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
    // Base64 of about 5 MB, the largest image Anthropic takes.
    const MAX_BASE64: usize = 6_900_000;
    result
        .content
        .iter()
        .filter_map(|block| match block {
            rmcp::model::ContentBlock::Image(image)
                if KINDS.contains(&image.mime_type.as_str()) && image.data.len() <= MAX_BASE64 =>
            {
                Some(ContentPart::Image {
                    mime_type: image.mime_type.clone(),
                    data: image.data.clone(),
                })
            }
            _ => None,
        })
        .collect()
}

/// Gives every call of a reply an id of its own in the conversation. Everything downstream (the
/// gate's cards, the results sent back, the CLI's trace, the history) pairs a call with its
/// outcome by this id, and a model can send two calls under one id, none, or (as some
/// OpenAI-compatible servers do, numbering from `call_0` each round) an id an earlier call of the
/// conversation had: the second would then be shown, answered and reported as the first. Such an
/// id is replaced, before the reply is kept, by one that is unique in the conversation and valid
/// for every provider (`[A-Za-z0-9_-]`), so the history sent back stays consistent with what ran.
pub(crate) fn unique_call_ids(calls: &mut [ToolCall], earlier: &HashSet<String>) {
    let mut seen: HashSet<String> = HashSet::new();
    let in_reply: HashSet<String> = calls.iter().map(|c| c.id.clone()).collect();
    let free = |id: &str, seen: &HashSet<String>| {
        !id.is_empty() && !earlier.contains(id) && !seen.contains(id)
    };
    for (index, call) in calls.iter_mut().enumerate() {
        if free(&call.id, &seen) {
            seen.insert(call.id.clone());
            continue;
        }
        let stem: String = call
            .id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
            .collect();
        let stem = if stem.is_empty() {
            "toolgate_call".to_owned()
        } else {
            stem
        };
        let mut n = index + 1;
        let fresh = loop {
            let candidate = format!("{stem}_{n}");
            if free(&candidate, &seen) && !in_reply.contains(&candidate) {
                break candidate;
            }
            n += 1;
        };
        tracing::warn!(
            "the model sent call id {:?} again (or empty); call {} of its reply is now {fresh}",
            call.id,
            index + 1
        );
        seen.insert(fresh.clone());
        call.id = fresh;
    }
}

/// The ids of every call already in the conversation.
pub(crate) fn call_ids(history: &[Message]) -> HashSet<String> {
    history
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .map(|c| c.id.clone())
        .collect()
}

/// Cuts a tool result to `limit` characters, telling the model what was left out.
pub(crate) fn truncate(text: String, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text;
    }
    let kept: String = text.chars().take(limit).collect();
    format!(
        "{kept}\n\n[Toolgate cut this result: it was {total} characters and the limit is {limit}. Ask for a smaller part if you need the rest.]"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.to_owned(),
            name: "echo".to_owned(),
            arguments: serde_json::json!({}),
        }
    }

    #[test]
    fn repeated_and_empty_call_ids_are_made_unique_and_the_first_keeps_its_own() {
        let mut calls = vec![
            call("same"),
            call("same"),
            call(""),
            call("same_2"),
            call(""),
        ];
        unique_call_ids(&mut calls, &HashSet::new());
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids[0], "same");
        assert_eq!(
            ids[3], "same_2",
            "an id the model chose is kept when it is unique"
        );
        let distinct: HashSet<&str> = ids.iter().copied().collect();
        assert_eq!(distinct.len(), ids.len(), "{ids:?}");
        assert!(ids.iter().all(|id| !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')));
        let mut clean = vec![call("a"), call("b")];
        unique_call_ids(&mut clean, &HashSet::new());
        assert_eq!(
            clean,
            vec![call("a"), call("b")],
            "unique ids are left alone"
        );
    }

    #[test]
    fn an_id_an_earlier_call_of_the_conversation_had_is_replaced() {
        let earlier: HashSet<String> = ["call_0".to_owned(), "call_0_1".to_owned()].into();
        let mut calls = vec![call("call_0"), call("call_1")];
        unique_call_ids(&mut calls, &earlier);
        assert_eq!(calls[1].id, "call_1");
        assert!(
            !earlier.contains(&calls[0].id) && calls[0].id.starts_with("call_0_"),
            "{calls:?}"
        );
    }
}
