//! A conversation resumed after a restart learns again what untrusted content it read.

use toolgate_catalog::Catalog;
use toolgate_gate::exposure::{source, Facts};
use toolgate_history::AuditDecision;

use crate::Agent;

impl Agent {
    /// A conversation resumed after a restart: the calls that ran in it are in the audit log,
    /// so what untrusted content it read is known again (counting results later withheld at
    /// review too, which can only make the gate ask more).
    pub(crate) fn recall_exposure(&self, catalog: &Catalog, facts: &Facts) {
        let (Some(history), Some(conversation)) =
            (&self.keeper.audit.history, &self.keeper.audit.conversation)
        else {
            return;
        };
        let filter = toolgate_history::AuditFilter {
            conversation_id: Some(conversation.clone()),
            decision: Some(AuditDecision::Allowed),
            ..toolgate_history::AuditFilter::default()
        };
        let Ok(rows) = history.audit(&filter) else {
            return;
        };
        for row in rows {
            let found = catalog
                .entries_for_server(&row.entry.server_id)
                .find(|e| e.tool.name == row.entry.tool);
            if let Some(what) = found.and_then(|e| source(e, facts)) {
                self.keeper.exposure.mark(what);
                return;
            }
        }
    }
}
