//! Property tests (proptest, a bounded number of cases per run): the --set and --values
//! parsers, answer parsing, manifest and record parsing never panic and keep what they
//! are given; and no path a blueprint renders, whatever the answers, escapes the target.
use std::path::{Component, Path};

use proptest::prelude::*;
use scaffold_core::flags::{parse_pairs, parse_values};
use scaffold_model::answers::{Sources, gather};
use scaffold_model::blueprint::{Blueprint, Manifest, Question};
use scaffold_model::plan::RelPath;
use scaffold_model::record::Record;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn question(kind: &str) -> Question {
    serde_norway::from_str(&format!(
        "key: k\nprompt: K\ntype: {kind}\nallow_empty: true\n"
    ))
    .expect("question")
}

/// A path inside the target: only normal components, none of them `.git`.
fn stays_inside(path: &str) -> bool {
    let root = Path::new("/target");
    let joined = root.join(path);
    joined.starts_with(root)
        && Path::new(path).components().all(|c| match c {
            Component::Normal(s) => !s.to_string_lossy().eq_ignore_ascii_case(".git"),
            _ => false,
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn set_pairs_split_at_the_first_equals(key in "[^=]{0,12}", value in ".{0,24}") {
        let pair = format!("{key}={value}");
        match parse_pairs(std::slice::from_ref(&pair), "--set") {
            Ok(pairs) => {
                prop_assert!(!key.trim().is_empty());
                prop_assert_eq!(pairs, vec![(key.trim().to_string(), value)]);
            }
            Err(e) => {
                prop_assert!(key.trim().is_empty());
                prop_assert_eq!(e.exit_code(), 2);
            }
        }
    }

    #[test]
    fn set_without_equals_is_refused(text in "[^=]{0,24}") {
        let err = parse_pairs(&[text], "--set").expect_err("no =");
        prop_assert!(err.to_string().contains("use KEY=VALUE"));
    }

    #[test]
    fn values_files_never_panic_and_keep_string_keys(text in ".{0,200}") {
        // Any text: parsed or refused as input (exit 2), never a panic.
        if let Err(e) = parse_values(&text, Path::new("v.yaml")) {
            prop_assert_eq!(e.exit_code(), 2);
        }
    }

    #[test]
    fn values_mappings_round_trip(map in proptest::collection::btree_map("[a-z_]{1,10}", "[a-zA-Z0-9 ./-]{0,20}", 0..8)) {
        let text = serde_norway::to_string(&map).expect("yaml");
        let parsed = parse_values(&text, Path::new("v.yaml")).expect("mapping");
        let keys: Vec<&String> = parsed.keys().collect();
        prop_assert_eq!(keys, map.keys().collect::<Vec<_>>());
    }

    #[test]
    fn answers_parse_by_type_without_panicking(text in ".{0,64}") {
        for kind in ["string", "int", "bool", "list", "map", "cidr"] {
            let _ = scaffold_model::answers::parse_text(&question(kind), &text);
        }
    }

    #[test]
    fn whole_numbers_and_lists_round_trip(n in any::<i64>(), items in proptest::collection::vec("[a-z0-9.-]{1,12}", 0..6)) {
        let parsed = scaffold_model::answers::parse_text(&question("int"), &n.to_string());
        prop_assert_eq!(parsed, Ok(serde_json::json!(n)));
        let parsed = scaffold_model::answers::parse_text(&question("list"), &items.join(","));
        prop_assert_eq!(parsed, Ok(serde_json::json!(items)));
    }

    #[test]
    fn manifests_and_records_never_panic(text in ".{0,300}") {
        let _ = serde_norway::from_str::<Manifest>(&text);
        if let Err(e) = Record::parse(&text) {
            prop_assert!(e.to_string().starts_with(".scaffold/answers.yaml: "));
        }
    }

    #[test]
    fn a_repo_path_never_escapes_the_target(path in "[a-zA-Z0-9./\\\\_-]{0,40}") {
        if RelPath::new(&path).is_ok() {
            prop_assert!(stays_inside(&path), "{path}");
        }
    }
}

/// A blueprint whose file paths are made of answers.
fn path_blueprint() -> (tempfile::TempDir, Blueprint) {
    let dir = tempfile::TempDir::new().expect("dir");
    std::fs::write(
        dir.path().join("blueprint.yaml"),
        "name: paths\nversion: 0.1.0\ndescription: paths from answers\nquestions:\n  - key: a\n    prompt: A\n    type: string\n    allow_empty: true\n  - key: b\n    prompt: B\n    type: string\n    allow_empty: true\n",
    )
    .expect("manifest");
    let files = dir.path().join("files/[[ a ]]");
    std::fs::create_dir_all(&files).expect("mkdir");
    std::fs::write(files.join("[[ b ]].txt"), "x\n").expect("file");
    std::fs::write(dir.path().join("files/[[ a ]]-[[ b ]].tera"), "[[ a ]]\n").expect("file");
    let blueprint = Blueprint::load(&dir.path().display().to_string()).expect("load");
    (dir, blueprint)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_rendered_path_escapes_the_target(a in "[a-z./\\\\ -]{0,12}|\\.\\.|\\.git|\\.GIT|/etc", b in "[a-zA-Z./\\\\ -]{0,12}|\\.\\.|\\.GIT") {
        let (_dir, blueprint) = path_blueprint();
        let renderer = scaffold_model::generate::renderer_for(&blueprint).expect("renderer");
        let answers = gather(&blueprint, &renderer, Sources {
            set: vec![("a".into(), a.clone()), ("b".into(), b.clone())],
            values: Default::default(),
            prompter: None,
            builtins: Default::default(),
            recorded_environments: Default::default(),
        });
        let Ok(answers) = answers else { return Ok(()) };
        let record = scaffold_model::generate::record_for(&blueprint, &answers, Default::default());
        // Either refused (a blueprint error naming the path) or every path stays inside.
        if let Ok(rendered) = scaffold_model::generate::render(&blueprint, &renderer, &answers, &record) {
            for path in rendered.plan.files.keys() {
                prop_assert!(stays_inside(path.as_str()), "{a:?} {b:?} → {}", path.as_str());
            }
        }
    }
}
