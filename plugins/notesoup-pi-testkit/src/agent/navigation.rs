//! `/tree` navigation: `session_before_tree`, the leaf move, the branch
//! summary, `session_tree`.

use notesoup_pi::host::{PiExtension, SessionBeforeTreeEvent, SessionTreeEvent, TreePreparation};
use notesoup_pi::session::Entry;

use super::Harness;

impl<E: PiExtension> Harness<E> {
    /// `/tree` navigation to `target`, with or without a summary of the
    /// abandoned branch. The reference host cannot generate summaries: a
    /// requested summary the extension does not supply is a fixed text.
    pub fn navigate(&mut self, target: &str, summarize: bool) {
        let old_leaf = self.host.session.leaf_id().map(str::to_owned);
        let abandoned: Vec<Entry> = self.host.session.branch().into_iter().cloned().collect();
        let event = SessionBeforeTreeEvent {
            preparation: TreePreparation {
                target_id: target.to_owned(),
                old_leaf_id: old_leaf.clone(),
                common_ancestor_id: None,
                entries_to_summarize: abandoned,
                user_wants_summary: summarize,
                custom_instructions: None,
                replace_instructions: None,
                label: None,
            },
        };
        let result = self.without_usage("session_before_tree", |extension, host| {
            extension.session_before_tree(host, &event)
        });
        let supplied = result.summary.is_some();
        if result.cancel == Some(true) {
            return;
        }
        self.host.session.set_leaf(Some(target));
        let summary = match (summarize, result.summary) {
            (false, _) => None,
            (true, Some(summary)) => Some(summary.summary),
            (true, None) => Some("Summary of the abandoned branch (reference host).".to_owned()),
        };
        let mut summary_entry = None;
        if let Some(text) = summary.filter(|text| !text.is_empty()) {
            let from = old_leaf.clone().unwrap_or_else(|| "root".to_owned());
            let id = self.append_branch_summary(&from, &text);
            summary_entry = id;
        }
        let summary_entry = summary_entry.and_then(|id| {
            self.host
                .session
                .entries()
                .iter()
                .find_map(|entry| match entry {
                    Entry::BranchSummary(summary) if summary.id == id => Some(summary.clone()),
                    _ => None,
                })
        });
        let event = SessionTreeEvent {
            new_leaf_id: self.host.session.leaf_id().map(str::to_owned),
            old_leaf_id: old_leaf,
            from_extension: summary_entry.as_ref().map(|_| supplied),
            summary_entry,
        };
        self.without_usage("session_tree", |extension, host| {
            extension.session_tree(host, &event);
        });
    }

    pub(super) fn append_branch_summary(&mut self, from: &str, text: &str) -> Option<String> {
        let id = self.host.session.append_branch_summary(from, text);
        let ok = id.as_ref().ok().cloned();
        self.host.record(id);
        ok
    }
}
