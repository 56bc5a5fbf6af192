//! The embedded blueprints' YAML files that every run reads (each `blueprint.yaml` and
//! catalog entry), read into JSON once by `build.rs`: a file whose bytes are an embedded
//! one's is deserialized from that JSON instead of parsing its YAML. Anything else (a
//! blueprint on disk, a file that differs by a byte, a value the JSON does not give back)
//! is parsed as YAML, with its errors' places. The tests hold both readings to the same
//! value for every embedded file. Each embedded blueprint's layer digest is made there too.
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

/// (a file's bytes, its JSON), for every embedded file build.rs read.
static FILES: &[(&[u8], &str)] = include!(concat!(env!("OUT_DIR"), "/prebuilt_json.rs"));

/// (an embedded blueprint's name, its layer digest), as build.rs computed them.
static LAYER_DIGESTS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/layer_digests.rs"));

/// `blueprint::layer_digest` of the embedded blueprint `name`, computed at build time.
pub fn layer_digest(name: &str) -> Option<&'static str> {
    LAYER_DIGESTS
        .iter()
        .find(|(embedded, _)| *embedded == name)
        .map(|(_, digest)| *digest)
}

/// The JSON of an embedded file with exactly these bytes.
fn json_of(bytes: &[u8]) -> Option<&'static str> {
    FILES
        .iter()
        .find(|(yaml, _)| *yaml == bytes)
        .map(|(_, json)| *json)
}

/// `bytes` as a `T`, when they are an embedded file's and its JSON reads as one.
pub fn typed<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    serde_json::from_str(json_of(bytes)?).ok()
}

/// `bytes` as JSON and as a `T` (one JSON parse), when they are an embedded file's.
pub fn json_and_typed<T: DeserializeOwned>(bytes: &[u8]) -> Option<(Json, T)> {
    let json: Json = serde_json::from_str(json_of(bytes)?).ok()?;
    let typed = T::deserialize(&json).ok()?;
    Some((json, typed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file build.rs read gives the same JSON (key order included) and the same
    /// typed value from its JSON as from its YAML: otherwise an embedded blueprint would
    /// render differently from the same files on disk.
    #[test]
    fn embedded_files_read_from_json_as_from_yaml() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../blueprints");
        let (mut manifests, mut entries) = (0, 0);
        for blueprint in std::fs::read_dir(root).expect("blueprints/") {
            let blueprint = blueprint.expect("entry").path();
            let manifest = std::fs::read(blueprint.join("blueprint.yaml")).expect("manifest");
            let typed: crate::manifest::Manifest =
                super::typed(&manifest).unwrap_or_else(|| panic!("{blueprint:?}: no JSON"));
            let parsed: crate::manifest::Manifest =
                crate::yaml::from_slice(&manifest).expect("parses");
            assert_eq!(format!("{typed:?}"), format!("{parsed:?}"), "{blueprint:?}");
            manifests += 1;
            for file in std::fs::read_dir(blueprint.join("addons"))
                .into_iter()
                .flatten()
            {
                let path = file.expect("entry").path();
                let bytes = std::fs::read(&path).expect("read");
                let (json, spec): (Json, crate::catalog::EntrySpec) =
                    json_and_typed(&bytes).unwrap_or_else(|| panic!("{path:?}: no JSON"));
                let yaml: Json = crate::yaml::from_slice(&bytes).expect("parses");
                let yaml_spec: crate::catalog::EntrySpec =
                    crate::yaml::from_slice(&bytes).expect("parses");
                assert_eq!(
                    serde_json::to_string(&json).expect("json"),
                    serde_json::to_string(&yaml).expect("json"),
                    "{path:?}"
                );
                assert_eq!(format!("{spec:?}"), format!("{yaml_spec:?}"), "{path:?}");
                entries += 1;
            }
        }
        assert!(
            manifests >= 1 && entries >= 16,
            "{manifests} manifests, {entries} entries"
        );
        assert_eq!(manifests + entries, FILES.len());
        // Anything else is parsed as YAML.
        assert!(json_of(b"name: x\n").is_none());
    }

    /// Each embedded blueprint's digest from build.rs is the one its loaded files give.
    #[test]
    fn embedded_layer_digests_are_the_run_time_ones() {
        let names = crate::blueprint::embedded_names();
        assert!(!names.is_empty());
        assert_eq!(names.len(), LAYER_DIGESTS.len());
        for name in names {
            let computed = crate::blueprint::embedded_layer_digest_at_run_time(&name);
            assert_eq!(layer_digest(&name), Some(computed.as_str()), "{name}");
        }
    }
}
