//! The component table (`schemas/components.yaml`): which chart installs which CRD groups
//! and makes which layer, and which kops field installs the same component.
use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value as Json;

use super::yaml;
use crate::model::Object;

#[derive(Debug, Default, Deserialize)]
pub struct Chart {
    #[serde(default)]
    pub crds: Vec<String>,
    #[serde(default)]
    pub crds_when: Vec<String>,
    #[serde(default)]
    pub crds_unless: Vec<String>,
    pub layer: Option<String>,
    pub kops: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Components {
    pub charts: BTreeMap<String, Chart>,
    pub git_crds: BTreeMap<String, Vec<String>>,
}

pub fn table() -> &'static Components {
    static TABLE: OnceLock<Components> = OnceLock::new();
    TABLE.get_or_init(|| {
        yaml::parse_one(include_str!("../../../schemas/components.yaml"))
            .ok()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default()
    })
}

fn value_at<'a>(values: &'a Json, dotted: &str) -> Option<&'a Json> {
    yaml::at(values, &dotted.replace('.', "/"))
}

/// The CRD groups a HelmRelease of a known chart installs, as its values set them.
pub fn crds_of(chart: &str, release: &Object) -> Vec<String> {
    let Some(entry) = table().charts.get(chart) else {
        return Vec::new();
    };
    if release.spec("install/crds").and_then(Json::as_str) == Some("Skip")
        && entry.crds_when.is_empty()
        && entry.crds_unless.is_empty()
        && entry.layer.as_deref() != Some("crds")
    {
        return Vec::new();
    }
    let values = release.spec("values").cloned().unwrap_or(Json::Null);
    let on = entry.crds_when.is_empty()
        || entry
            .crds_when
            .iter()
            .any(|k| value_at(&values, k) == Some(&Json::Bool(true)));
    let off = entry
        .crds_unless
        .iter()
        .any(|k| value_at(&values, k) == Some(&Json::Bool(false)));
    if on && !off {
        entry.crds.clone()
    } else {
        Vec::new()
    }
}
