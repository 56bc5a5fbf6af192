//! kops templates in the model: each template a Makefile renders with `kops toolbox
//! template` (or any kops template, with the values.yaml beside it), rendered with its
//! values files; a values file the repo does not hold (e.g. tf-outputs.json) stands for the
//! outputs of the Terraform module whose Makefile writes it, whose values are unknown offline.
use serde_json::{Map, Value as Json};

use super::gotemplate::{self, RenderError};
use super::model::{self, Repo};
use super::yaml::{self, Doc};

/// Marks a value only known once Terraform has run; the template engine treats it as unknown.
pub use gotemplate::UNKNOWN;

#[derive(Debug)]
pub struct Rendered {
    pub template: String,
    pub values_files: Vec<String>,
    pub result: Result<Vec<Doc>, RenderError>,
}

pub fn render_all(repo: &Repo) -> Vec<Rendered> {
    let mut out = Vec::new();
    for (path, text) in repo.texts() {
        if !model::is_yaml(path) || !model::is_kops_template(text) {
            continue;
        }
        let values_files = values_files_for(repo, path);
        let mut data = Map::new();
        for values in &values_files {
            if let Some(text) = repo.text(values) {
                if let Ok(Json::Object(m)) = yaml::parse_one(text).or_else(|_| {
                    serde_json::from_str(text).map_err(|e| yaml::ParseError {
                        line: 0,
                        column: 0,
                        message: e.to_string(),
                    })
                }) {
                    data.extend(m);
                }
            } else {
                for output in outputs_written_to(repo, values) {
                    data.insert(output, Json::String(UNKNOWN.into()));
                }
            }
        }
        let result = gotemplate::render(text, &Json::Object(data)).and_then(|rendered| {
            yaml::parse(&rendered).map_err(|e| RenderError {
                line: 0,
                message: format!(
                    "renders to invalid YAML: {} (rendered line {})",
                    e.message, e.line
                ),
            })
        });
        out.push(Rendered {
            template: path.to_string(),
            values_files,
            result,
        });
    }
    out
}

/// Words of the Makefile recipe lines that run `needle`, with the Makefile's directory.
pub fn commands<'a>(
    repo: &'a Repo,
    needle: &'a str,
) -> impl Iterator<Item = (&'a str, usize, Vec<String>)> + 'a {
    repo.makefiles().flat_map(move |(path, text)| {
        text.lines()
            .enumerate()
            .filter(move |(_, l)| l.contains(needle))
            .map(move |(i, l)| {
                (
                    path,
                    i + 1,
                    l.split_whitespace().map(str::to_string).collect(),
                )
            })
    })
}

/// The values files a Makefile passes with the template, else the values.yaml beside it.
fn values_files_for(repo: &Repo, template: &str) -> Vec<String> {
    for (makefile, _, words) in commands(repo, "kops toolbox template") {
        let dir = model::parent(makefile);
        let flag = |name: &str| -> Vec<String> {
            let mut found = Vec::new();
            for (i, w) in words.iter().enumerate() {
                if w == name {
                    found.extend(words.get(i + 1).cloned());
                } else if let Some(v) = w.strip_prefix(&format!("{name}=")) {
                    found.push(v.to_string());
                }
            }
            found
                .into_iter()
                .filter_map(|f| model::join(dir, &f))
                .collect()
        };
        if flag("--template").iter().any(|t| t == template) {
            return flag("--values");
        }
    }
    let beside = model::join(model::parent(template), "values.yaml").unwrap_or_default();
    if repo.exists(&beside) {
        vec![beside]
    } else {
        Vec::new()
    }
}

/// The outputs of the Terraform module whose Makefile runs `terraform output ... > file`;
/// if none does, the outputs of every module outside the file's directory.
fn outputs_written_to(repo: &Repo, file: &str) -> Vec<String> {
    for (makefile, _, words) in commands(repo, "terraform output") {
        let dir = model::parent(makefile);
        if let Some(i) = words.iter().position(|w| w == ">")
            && words
                .get(i + 1)
                .and_then(|t| model::join(dir, t))
                .as_deref()
                == Some(file)
            && let Some(module) = repo.terraform.iter().find(|m| m.dir == dir)
        {
            return module.labels("output");
        }
    }
    let own = model::parent(file);
    repo.terraform
        .iter()
        .filter(|m| m.dir != own)
        .flat_map(|m| m.labels("output"))
        .collect()
}
