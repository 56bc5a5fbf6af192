//! The catalog facts `check` judges a repo with: those of the blueprint its answers record
//! names (from where it was loaded, else by name), else the embedded default's. A record
//! naming a blueprint that does not load here is said, not skipped.
use super::Blueprint;
use crate::check::facts::{CatalogFacts, Unavailable};
use crate::record::{self, Record};

/// The facts for a repo whose answers record reads `record_text` (none: a hand-made repo,
/// judged by the catalog scaffold ships).
pub fn for_record(record_text: Option<&str>) -> CatalogFacts {
    let Some(text) = record_text else {
        return default_facts(None);
    };
    let record = match Record::parse(text) {
        Ok(record) => record,
        Err(e) => {
            return default_facts(Some(format!(
                "the answers record does not parse ({e}), so the embedded default catalog stood in for its blueprint's"
            )));
        }
    };
    let id = record.blueprint;
    let from_source = id
        .source
        .as_deref()
        .map(|source| Blueprint::load(source.strip_prefix("embedded:").unwrap_or(source)));
    match from_source {
        Some(Ok(loaded)) => loaded.catalog.facts(),
        _ => match Blueprint::load(&id.name) {
            Ok(loaded) => loaded.catalog.facts(),
            Err(e) => default_facts(Some(format!(
                "blueprint `{}`{} does not load here ({e}), so the embedded default catalog stood in for its charts' CRDs and features",
                id.name,
                id.source
                    .map(|s| format!(" (from {s})"))
                    .unwrap_or_default()
            ))),
        },
    }
}

fn default_facts(unavailable: Option<String>) -> CatalogFacts {
    let mut facts = Blueprint::load("default")
        .map(|b| b.catalog.facts())
        .unwrap_or_default();
    facts.unavailable = unavailable.map(|reason| Unavailable {
        file: record::PATH.to_string(),
        reason,
    });
    facts
}
