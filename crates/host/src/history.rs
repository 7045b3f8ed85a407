//! The saved conversations and the audit log as a front end reads and edits them. SQLite calls
//! block, so each runs off the async workers; a host whose history could not be opened says
//! why at each use.

use std::path::PathBuf;
use std::sync::Arc;

use toolgate_history::{AuditFilter, AuditRow, ConversationSummary, History, HistoryError};
use toolgate_llm::Message;

use crate::Host;

/// Why the history could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum HistoryAccessError {
    /// The database was not opened at start; the reason is the one given then.
    #[error("conversations are not being saved: {0}")]
    NotSaved(String),
    #[error("a conversation needs a title")]
    NoTitle,
    #[error(transparent)]
    History(#[from] HistoryError),
    #[error(transparent)]
    Task(#[from] tokio::task::JoinError),
}

/// Runs a history operation off the async workers.
async fn blocking<T: Send + 'static>(
    op: impl FnOnce() -> Result<T, HistoryError> + Send + 'static,
) -> Result<T, HistoryAccessError> {
    Ok(tokio::task::spawn_blocking(op).await??)
}

impl Host {
    /// The text of call `call_id`'s result as the server sent it, before secrets were removed:
    /// for the user who asks to see it (the window's *Reveal*), never for the model. `None`
    /// once it is no longer among the last results kept in memory.
    pub fn reveal_result(&self, call_id: &str) -> Option<String> {
        let original = toolgate_agent::secrets::original(call_id);
        if original.is_some() {
            tracing::info!(
                call = call_id,
                "a result's removed secrets shown to the user"
            );
        }
        original
    }

    /// Why conversations are not being saved, when the history could not be opened at start.
    pub fn history_unsaved(&self) -> Option<&str> {
        self.history.as_ref().err().map(String::as_str)
    }

    /// The history, or why it is not being saved.
    pub(crate) fn saved_history(&self) -> Result<Arc<History>, HistoryAccessError> {
        self.history.clone().map_err(HistoryAccessError::NotSaved)
    }

    /// The saved conversations, newest first; `search` matches titles and message text.
    pub async fn conversations(
        &self,
        search: Option<String>,
    ) -> Result<Vec<ConversationSummary>, HistoryAccessError> {
        let h = self.saved_history()?;
        blocking(move || h.list(search.as_deref())).await
    }

    /// A saved conversation's messages, as a turn continues from them.
    pub async fn conversation_messages(
        &self,
        id: &str,
    ) -> Result<Vec<Message>, HistoryAccessError> {
        let (h, id) = (self.saved_history()?, id.to_owned());
        let stored = blocking(move || h.messages(&id)).await?;
        Ok(toolgate_agent::restore(&stored))
    }

    /// Renames a conversation; the title is trimmed and may not be empty.
    pub async fn rename_conversation(
        &self,
        id: &str,
        title: &str,
    ) -> Result<(), HistoryAccessError> {
        let title = title.trim().to_owned();
        if title.is_empty() {
            return Err(HistoryAccessError::NoTitle);
        }
        let (h, id) = (self.saved_history()?, id.to_owned());
        blocking(move || h.rename(&id, &title)).await
    }

    pub async fn delete_conversation(&self, id: &str) -> Result<(), HistoryAccessError> {
        let (h, id) = (self.saved_history()?, id.to_owned());
        blocking(move || h.delete(&id)).await
    }

    /// The approval audit log, newest first, filtered.
    pub async fn audit_log(
        &self,
        filter: AuditFilter,
    ) -> Result<Vec<AuditRow>, HistoryAccessError> {
        let h = self.saved_history()?;
        blocking(move || h.audit(&filter)).await
    }

    /// Writes the audit log (filtered) as JSON Lines into the data folder as
    /// `audit-<seconds>.jsonl`; returns the file.
    pub async fn export_audit(&self, filter: AuditFilter) -> Result<PathBuf, HistoryAccessError> {
        let h = self.saved_history()?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let path = self.data_dir().join(format!("audit-{stamp}.jsonl"));
        let target = path.clone();
        blocking(move || {
            let file =
                std::fs::File::create(&target).map_err(|source| HistoryError::Export { source })?;
            let mut out = std::io::BufWriter::new(file);
            h.export_audit_jsonl(&filter, &mut out)?;
            std::io::Write::flush(&mut out).map_err(|source| HistoryError::Export { source })
        })
        .await?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use toolgate_secrets::MemoryStore;

    use super::*;
    use crate::HostOptions;

    fn host(dir: &std::path::Path, open_history: bool) -> Arc<Host> {
        Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            open_history,
            ..HostOptions::new(dir)
        })
        .unwrap()
    }

    #[tokio::test]
    async fn conversations_are_renamed_only_to_a_title_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path(), true);
        let h = host.saved_history().unwrap();
        let id = h.create("first").unwrap().id;
        assert!(matches!(
            host.rename_conversation(&id, "  \n").await,
            Err(HistoryAccessError::NoTitle)
        ));
        host.rename_conversation(&id, "  renamed ").await.unwrap();
        let listed = host.conversations(None).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].title, "renamed");
        assert!(host.conversation_messages(&id).await.unwrap().is_empty());
        host.delete_conversation(&id).await.unwrap();
        assert!(host.conversations(None).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn the_audit_log_is_exported_into_the_data_folder() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path(), true);
        let path = host.export_audit(AuditFilter::default()).await.unwrap();
        assert_eq!(path.parent(), Some(dir.path()));
        assert!(path.is_file());
    }

    #[tokio::test]
    async fn a_host_without_its_history_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path(), false);
        let err = host.conversations(None).await.unwrap_err().to_string();
        assert!(
            err.starts_with("conversations are not being saved: "),
            "{err}"
        );
    }
}
