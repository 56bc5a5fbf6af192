//! Readers over `serde_json` values that the core shares (answers, the record, addons).
//! Pure.
use serde_json::Value as Json;

/// The strings of a JSON list (an addons or environments answer); anything else reads as
/// none, and non-string items are skipped.
pub fn strings(value: Option<&Json>) -> Vec<String> {
    value
        .and_then(Json::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Json::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_strings_of_a_list_only() {
        let list = serde_json::json!(["a", 1, "b"]);
        assert_eq!(strings(Some(&list)), ["a", "b"]);
        assert!(strings(Some(&serde_json::json!("a"))).is_empty());
        assert!(strings(None).is_empty());
    }
}
