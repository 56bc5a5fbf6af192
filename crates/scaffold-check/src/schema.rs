//! The vendored schemas (`schemas/`, see schemas/SOURCES.md) and a validator for the subset
//! of OpenAPI v3 / JSON Schema they use: types, properties, required, strict unknown fields,
//! items, enum, patterns, lengths and bounds, `$ref`, anyOf/oneOf/allOf, int-or-string and
//! preserve-unknown-fields. Schemas are parsed on first use, one API group at a time.
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use include_dir::{Dir, include_dir};
use regex::Regex;
use serde_json::Value as Json;

static SCHEMAS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../schemas");

/// The vendored files of a `schemas/` subdirectory (Terraform provider schemas, chart
/// values), as path and text.
pub fn vendored(dir: &str) -> impl Iterator<Item = (&'static str, &'static str)> {
    SCHEMAS
        .get_dir(dir)
        .into_iter()
        .flat_map(|d| d.files())
        .filter_map(|f| Some((f.path().to_str()?, f.contents_utf8()?)))
}

/// What is known about an apiVersion/kind.
pub enum Lookup {
    /// Validate with this schema.
    Schema(&'static Json),
    /// The group is known, but not this kind/version; the message says what is.
    Unknown(String),
    /// No schema for the group at all.
    NoSchema,
}

/// The built-in kinds: `group/version/Kind` (no group for core) → definition name, and each
/// definition as JSON text, parsed only when an object needs it.
#[derive(Debug, Default, serde::Deserialize)]
struct Kubernetes {
    kinds: HashMap<String, String>,
    defs: HashMap<String, String>,
}

fn kubernetes() -> &'static Kubernetes {
    static K8S: OnceLock<Kubernetes> = OnceLock::new();
    K8S.get_or_init(|| {
        SCHEMAS
            .get_file("kubernetes.json")
            .and_then(|f| serde_json::from_slice(f.contents()).ok())
            .unwrap_or_default()
    })
}

/// Parses once and keeps for the life of the process (like the embedded bytes it comes
/// from) the schema `key` of `cache`.
fn cached(
    cache: &'static OnceLock<Mutex<HashMap<String, Option<&'static Json>>>>,
    key: &str,
    parse: impl FnOnce() -> Option<Json>,
) -> Option<&'static Json> {
    let cache = cache.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    *cache
        .entry(key.to_string())
        .or_insert_with(|| parse().map(|parsed| &*Box::leak(Box::new(parsed))))
}

/// A Kubernetes definition by name (the target of a `$ref`).
fn definition(name: &str) -> Option<&'static Json> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<&'static Json>>>> = OnceLock::new();
    cached(&CACHE, name, || {
        serde_json::from_str(kubernetes().defs.get(name)?).ok()
    })
}

pub fn is_builtin_group(group: &str) -> bool {
    kubernetes().kinds.keys().any(|k| {
        let mut parts = k.rsplitn(3, '/');
        let (_, _) = (parts.next(), parts.next());
        parts.next().unwrap_or("") == group
    })
}

/// The CRDs vendored for `group`, parsed once.
fn crd_group(group: &str) -> Option<&'static Json> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<&'static Json>>>> = OnceLock::new();
    cached(&CACHE, group, || {
        let file = SCHEMAS.get_file(format!("crds/{group}.json"))?;
        serde_json::from_slice(file.contents()).ok()
    })
}

pub fn lookup(api_version: &str, kind: &str) -> Lookup {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    if let Some(kinds) = crd_group(group) {
        let Some(versions) = kinds.get(kind).and_then(|k| k.get("versions")) else {
            let known: Vec<&String> = kinds
                .as_object()
                .map(|m| m.keys().collect())
                .unwrap_or_default();
            return Lookup::Unknown(format!("{group} has no kind {kind} (known: {known:?})"));
        };
        return match versions.get(version) {
            Some(v) if v.get("served") != Some(&Json::Bool(false)) => {
                Lookup::Schema(v.get("schema").unwrap_or(&Json::Null))
            }
            _ => {
                let served: Vec<&String> = versions
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .filter(|(_, v)| v.get("served") != Some(&Json::Bool(false)))
                            .map(|(k, _)| k)
                            .collect()
                    })
                    .unwrap_or_default();
                Lookup::Unknown(format!(
                    "{kind} {api_version} is not served (served: {served:?})"
                ))
            }
        };
    }
    if let Some(schema) = kubernetes()
        .kinds
        .get(&format!("{api_version}/{kind}"))
        .and_then(|name| definition(name))
    {
        return Lookup::Schema(schema);
    }
    if is_builtin_group(group) {
        return Lookup::Unknown(format!("Kubernetes v1.33 has no {kind} in {api_version}"));
    }
    Lookup::NoSchema
}

/// A violation: the path of keys to the value, and what is wrong.
#[derive(Debug)]
pub struct Violation {
    pub path: Vec<String>,
    pub message: String,
}

pub fn validate(value: &Json, schema: &Json) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut path = Vec::new();
    walk(value, schema, &mut path, &mut out);
    out
}

thread_local! {
    static PATTERNS: RefCell<HashMap<String, Option<Regex>>> = RefCell::new(HashMap::new());
}

fn matches(pattern: &str, text: &str) -> bool {
    PATTERNS.with(|cache| {
        cache
            .borrow_mut()
            .entry(pattern.to_string())
            .or_insert_with(|| Regex::new(pattern).ok())
            .as_ref()
            .is_none_or(|re| re.is_match(text))
    })
}

/// A `$ref` to a Kubernetes definition is followed; other schemas are themselves.
fn resolve(schema: &Json) -> &Json {
    schema
        .get("$ref")
        .and_then(Json::as_str)
        .and_then(|r| r.rsplit('/').next())
        .and_then(definition)
        .unwrap_or(schema)
}

/// The `max*`/`min*` keywords of `limits` that `actual` breaks.
fn bounds(
    schema: &Json,
    actual: f64,
    limits: [(&str, &str); 2],
    path: &[String],
    out: &mut Vec<Violation>,
) {
    for (keyword, message) in limits {
        if let Some(limit) = schema.get(keyword).and_then(Json::as_f64) {
            let broken = if keyword.starts_with("max") {
                actual > limit
            } else {
                actual < limit
            };
            if broken {
                out.push(Violation {
                    path: path.to_vec(),
                    message: format!("{message} ({actual}, limit {limit})"),
                });
            }
        }
    }
}

/// A whole-value `${VAR}` is substituted by Flux before the API server sees it.
fn is_substituted(value: &Json) -> bool {
    value
        .as_str()
        .is_some_and(|s| s.starts_with("${") && s.ends_with('}') && s.matches("${").count() == 1)
}

fn type_ok(value: &Json, ty: &str) -> bool {
    match ty {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn walk(value: &Json, schema: &Json, path: &mut Vec<String>, out: &mut Vec<Violation>) {
    let schema = resolve(schema);
    let fail = |out: &mut Vec<Violation>, path: &[String], message: String| {
        out.push(Violation {
            path: path.to_vec(),
            message,
        })
    };
    if schema.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) {
        if !(value.is_string() || value.is_i64() || value.is_u64()) {
            fail(out, path, "must be an integer or a string".into());
        }
        return;
    }
    if is_substituted(value) {
        return;
    }
    if let Some(message) = no_alternative_fits(value, schema) {
        fail(out, path, message);
        return;
    }
    if let Some(Json::Array(all)) = schema.get("allOf") {
        for s in all {
            walk(value, s, path, out);
        }
    }
    let types = declared_types(schema);
    let nullable = schema.get("nullable") == Some(&Json::Bool(true));
    if value.is_null() && (nullable || types.is_empty() || types.contains(&"null")) {
        return;
    }
    if !types.is_empty() && !types.iter().any(|t| type_ok(value, t)) {
        let message = format!("is {}, must be {}", type_name(value), types.join(" or "));
        fail(out, path, message);
        return;
    }
    if let Some(Json::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        let message = format!("{value} is not one of {}", Json::Array(allowed.clone()));
        fail(out, path, message);
    }
    match value {
        // Flux substitutes `${VAR}`s inside a string before the API server validates it.
        Json::String(s) if s.contains("${") => {}
        Json::String(s) => walk_string(s, schema, path, out),
        Json::Number(n) => {
            let limits = [
                ("maximum", "is above the maximum"),
                ("minimum", "is below the minimum"),
            ];
            bounds(schema, n.as_f64().unwrap_or(0.0), limits, path, out);
        }
        Json::Array(items) => walk_array(items, schema, path, out),
        Json::Object(map) => walk_object(map, schema, path, out),
        _ => {}
    }
}

/// Structural CRDs use anyOf/oneOf for validation only; Kubernetes' own schemas for
/// int-or-string and quantities: a value fits when any typed branch accepts it. The
/// message when none does.
fn no_alternative_fits(value: &Json, schema: &Json) -> Option<String> {
    ["anyOf", "oneOf"].into_iter().find_map(|key| {
        let Some(Json::Array(options)) = schema.get(key) else {
            return None;
        };
        let typed = options.iter().any(|o| resolve(o).get("type").is_some());
        (typed && !options.iter().any(|o| validate(value, o).is_empty()))
            .then(|| format!("matches none of the allowed forms of {key}"))
    })
}

/// The schema's `type`: one name or a list of them (none when it says nothing).
fn declared_types(schema: &Json) -> Vec<&str> {
    match schema.get("type") {
        Some(Json::String(t)) => vec![t.as_str()],
        Some(Json::Array(ts)) => ts.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The JSON type of `value`, as a schema's `type` names it.
fn type_name(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn walk_string(s: &str, schema: &Json, path: &[String], out: &mut Vec<Violation>) {
    if let Some(p) = schema.get("pattern").and_then(Json::as_str)
        && !matches(p, s)
    {
        out.push(Violation {
            path: path.to_vec(),
            message: format!("\"{s}\" does not match {p}"),
        });
    }
    let len = s.chars().count() as f64;
    let limits = [("maxLength", "is too long"), ("minLength", "is too short")];
    bounds(schema, len, limits, path, out);
}

fn walk_array(items: &[Json], schema: &Json, path: &mut Vec<String>, out: &mut Vec<Violation>) {
    if schema
        .get("maxItems")
        .and_then(Json::as_u64)
        .is_some_and(|m| items.len() as u64 > m)
    {
        out.push(Violation {
            path: path.clone(),
            message: "has too many items".into(),
        });
    }
    if let Some(item_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            path.push(i.to_string());
            walk(item, item_schema, path, out);
            path.pop();
        }
    }
}

fn walk_object(
    map: &serde_json::Map<String, Json>,
    schema: &Json,
    path: &mut Vec<String>,
    out: &mut Vec<Violation>,
) {
    for key in schema
        .get("required")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
    {
        if !map.contains_key(key) {
            out.push(Violation {
                path: path.clone(),
                message: format!("required field `{key}` is missing"),
            });
        }
    }
    let preserve = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Json::Bool(true));
    let properties = schema.get("properties").and_then(Json::as_object);
    if preserve && schema.get("properties").is_none() {
        return;
    }
    let additional = schema.get("additionalProperties");
    for (key, child) in map {
        path.push(key.clone());
        if let Some(s) = properties.and_then(|p| p.get(key)) {
            walk(child, s, path, out);
        } else if let Some(s) = additional.filter(|a| a.is_object()) {
            walk(child, s, path, out);
        } else if !preserve && (properties.is_some() || additional == Some(&Json::Bool(false))) {
            out.push(Violation {
                path: path.clone(),
                message: "unknown field".into(),
            });
        }
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use super::validate;

    /// Each violation as `path: message`.
    fn found(value: Json, schema: Json) -> Vec<String> {
        validate(&value, &schema)
            .into_iter()
            .map(|v| format!("{}: {}", v.path.join("."), v.message))
            .collect()
    }

    fn object_schema() -> Json {
        json!({
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 3},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "port": {"x-kubernetes-int-or-string": true},
                "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "size": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "note": {"type": "string", "nullable": true},
                "both": {"allOf": [{"type": "object", "required": ["x"]}, {"type": "object", "required": ["y"]}]}
            }
        })
    }

    #[test]
    fn every_keyword_reports_at_its_path() {
        let value = json!({
            "name": "Toolong",
            "replicas": 9,
            "mode": "c",
            "port": true,
            "tags": ["a", 1, "c"],
            "labels": {"k": 2},
            "size": [1],
            "both": {},
            "unknown": 1
        });
        assert_eq!(
            found(value, object_schema()),
            [
                "name: \"Toolong\" does not match ^[a-z]+$",
                "name: is too long (7, limit 5)",
                "replicas: is above the maximum (9, limit 3)",
                "mode: \"c\" is not one of [\"a\",\"b\"]",
                "port: must be an integer or a string",
                "tags: has too many items",
                "tags.1: is number, must be string",
                "labels.k: is number, must be string",
                "size: matches none of the allowed forms of anyOf",
                "both: required field `x` is missing",
                "both: required field `y` is missing",
                "unknown: unknown field",
            ]
        );
        assert_eq!(
            found(json!({}), object_schema()),
            [": required field `name` is missing"]
        );
    }

    #[test]
    fn substitutions_nulls_preserved_fields_and_fitting_values_pass() {
        let value = json!({
            "name": "${NAME}",
            "replicas": "${REPLICAS}",
            "mode": "a",
            "port": "http",
            "tags": ["a"],
            "labels": {"k": "v"},
            "extra": {"anything": {"goes": 1}},
            "size": "1Gi",
            "note": null,
            "both": {"x": 1, "y": 2}
        });
        assert_eq!(found(value, object_schema()), Vec::<String>::new());
    }
}
