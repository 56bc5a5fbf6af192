//! A line-based three-way merge that keeps what the user wrote: `theirs` is the new
//! rendering, `base` the rendering the repo was made from, `ours` the file as it is now.
//! The renderer's insertions and deletions are replayed onto the user's file; only a
//! change to a line the user also changed is a conflict. Pure.
use similar::{Algorithm, DiffOp, capture_diff_slices};

/// None: a line both sides changed.
pub fn merge3(base: &str, ours: &str, theirs: &str) -> Option<String> {
    if ours == base {
        return Some(theirs.to_string());
    }
    if theirs == base || ours == theirs {
        return Some(ours.to_string());
    }
    let base: Vec<&str> = base.split_inclusive('\n').collect();
    let ours: Vec<&str> = ours.split_inclusive('\n').collect();
    let theirs: Vec<&str> = theirs.split_inclusive('\n').collect();

    // Where each base line sits in the user's file (None: the user changed or removed it).
    let base_to_ours = positions(&base, &ours);
    let base_kept_by_user: Vec<bool> = base_to_ours.iter().map(Option::is_some).collect();
    let mut ours_to_base: Vec<Option<usize>> = vec![None; ours.len()];
    for (i, position) in base_to_ours.iter().enumerate() {
        if let Some(j) = position {
            ours_to_base[*j] = Some(i);
        }
    }
    // What the new rendering does to each base line: keep or drop it, and what it inserts
    // after it (index 0 = before the first line).
    let mut dropped = vec![false; base.len()];
    let mut inserted: Vec<Vec<&str>> = vec![Vec::new(); base.len() + 1];
    for op in capture_diff_slices(Algorithm::Myers, &base, &theirs) {
        match op {
            DiffOp::Equal { .. } => {}
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                dropped[old_index..old_index + old_len].fill(true);
            }
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => {
                inserted[old_index].extend_from_slice(&theirs[new_index..new_index + new_len]);
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                dropped[old_index..old_index + old_len].fill(true);
                inserted[old_index + old_len]
                    .extend_from_slice(&theirs[new_index..new_index + new_len]);
            }
        }
    }
    // The renderer changed a line the user changed too.
    if (0..base.len()).any(|i| dropped[i] && !base_kept_by_user[i]) {
        return None;
    }

    let mut out: Vec<&str> = Vec::with_capacity(ours.len() + theirs.len());
    out.extend(&inserted[0]);
    let mut next_base = 0;
    for (j, line) in ours.iter().enumerate() {
        match ours_to_base[j] {
            Some(i) => {
                for skipped in next_base..i {
                    out.extend(&inserted[skipped + 1]);
                }
                if !dropped[i] {
                    out.push(line);
                }
                out.extend(&inserted[i + 1]);
                next_base = i + 1;
            }
            None => out.push(line),
        }
    }
    for skipped in next_base..base.len() {
        out.extend(&inserted[skipped + 1]);
    }
    Some(out.concat())
}

/// Where two versions of a file part: the lines of each side in the first region that
/// cannot be merged, for a refusal a person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// 1-based line in `ours` (the file as it is on disk) where the region starts.
    pub line: usize,
    /// The lines scaffold wrote there (empty when there is no common base).
    pub base: Vec<String>,
    /// The lines there now.
    pub ours: Vec<String>,
    /// The lines scaffold would write there now.
    pub theirs: Vec<String>,
}

/// Where each line of `old` sits in `new` (None: changed or removed).
fn positions(old: &[&str], new: &[&str]) -> Vec<Option<usize>> {
    let mut map = vec![None; old.len()];
    for op in capture_diff_slices(Algorithm::Myers, old, new) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                map[old_index + k] = Some(new_index + k);
            }
        }
    }
    map
}

/// The lines of `side` between the anchors around base lines `start..end`.
fn between(map: &[Option<usize>], side: &[&str], start: usize, end: usize) -> (usize, Vec<String>) {
    let from = map[..start]
        .iter()
        .rev()
        .find_map(|p| *p)
        .map_or(0, |p| p + 1);
    let to = map[end..].iter().find_map(|p| *p).unwrap_or(side.len());
    let lines = side[from..to.max(from)]
        .iter()
        .map(|l| l.trim_end_matches('\n').to_string())
        .collect();
    (from, lines)
}

/// The first region where `merge3` fails: a base line both sides changed.
pub fn conflict(base: &str, ours: &str, theirs: &str) -> Option<Hunk> {
    let base: Vec<&str> = base.split_inclusive('\n').collect();
    let ours: Vec<&str> = ours.split_inclusive('\n').collect();
    let theirs: Vec<&str> = theirs.split_inclusive('\n').collect();
    let to_ours = positions(&base, &ours);
    let to_theirs = positions(&base, &theirs);
    let start = (0..base.len()).find(|&i| to_ours[i].is_none() && to_theirs[i].is_none())?;
    let mut end = start + 1;
    while end < base.len() && (to_ours[end].is_none() || to_theirs[end].is_none()) {
        end += 1;
    }
    let (from, ours_lines) = between(&to_ours, &ours, start, end);
    let (_, theirs_lines) = between(&to_theirs, &theirs, start, end);
    Some(Hunk {
        line: from + 1,
        base: base[start..end]
            .iter()
            .map(|l| l.trim_end_matches('\n').to_string())
            .collect(),
        ours: ours_lines,
        theirs: theirs_lines,
    })
}

/// The first region where `ours` and `theirs` differ (no common base).
pub fn first_difference(ours: &str, theirs: &str) -> Option<Hunk> {
    let ours: Vec<&str> = ours.split_inclusive('\n').collect();
    let theirs: Vec<&str> = theirs.split_inclusive('\n').collect();
    let lines = |side: &[&str]| -> Vec<String> {
        side.iter()
            .map(|l| l.trim_end_matches('\n').to_string())
            .collect()
    };
    capture_diff_slices(Algorithm::Myers, &ours, &theirs)
        .into_iter()
        .find(|op| !matches!(op, DiffOp::Equal { .. }))
        .map(|op| {
            let (old, new) = (op.old_range(), op.new_range());
            Hunk {
                line: old.start + 1,
                base: Vec::new(),
                ours: lines(&ours[old]),
                theirs: lines(&theirs[new]),
            }
        })
}

#[cfg(test)]
mod tests {
    use super::{Hunk, conflict, first_difference, merge3};

    const BASE: &str = "resources:\n  - a/\n  - c/\n";

    #[test]
    fn untouched_files_take_the_new_rendering() {
        assert_eq!(
            merge3(BASE, BASE, "resources:\n  - a/\n  - b/\n  - c/\n").as_deref(),
            Some("resources:\n  - a/\n  - b/\n  - c/\n")
        );
    }

    #[test]
    fn user_lines_and_comments_survive_an_insert_next_to_them() {
        let ours = "# mine\nresources:\n  - a/\n  - c/\n  - zz-mine/\n";
        let theirs = "resources:\n  - a/\n  - c/\n  - d/\n";
        assert_eq!(
            merge3(BASE, ours, theirs).as_deref(),
            Some("# mine\nresources:\n  - a/\n  - c/\n  - d/\n  - zz-mine/\n")
        );
    }

    #[test]
    fn removal_next_to_a_user_line_keeps_the_user_line() {
        let base = "resources:\n  - a/\n  - c/\n  - d/\n";
        let ours = "resources:\n  - a/\n  - c/\n  - zz-mine/\n  - d/\n";
        assert_eq!(
            merge3(base, ours, BASE).as_deref(),
            Some("resources:\n  - a/\n  - c/\n  - zz-mine/\n")
        );
    }

    #[test]
    fn a_line_changed_on_both_sides_conflicts() {
        let ours = "resources:\n  - a/ # pinned\n  - c/\n";
        let theirs = "resources:\n  - c/\n";
        assert_eq!(merge3(BASE, ours, theirs), None);
    }

    #[test]
    fn empty_list_becomes_a_list() {
        let base = "kind: Kustomization\nresources: []\n";
        let ours = "# note\nkind: Kustomization\nresources: []\n";
        let theirs = "kind: Kustomization\nresources:\n  - a/\n";
        assert_eq!(
            merge3(base, ours, theirs).as_deref(),
            Some("# note\nkind: Kustomization\nresources:\n  - a/\n")
        );
    }

    #[test]
    fn a_conflict_names_the_line_and_each_side() {
        let ours = "resources:\n  - a/ # pinned\n  - c/\n";
        let theirs = "resources:\n  - c/\n";
        assert_eq!(
            conflict(BASE, ours, theirs),
            Some(Hunk {
                line: 2,
                base: vec!["  - a/".into()],
                ours: vec!["  - a/ # pinned".into()],
                theirs: vec![],
            })
        );
    }

    #[test]
    fn the_first_difference_is_found_past_equal_lines() {
        let hunk = first_difference("a\nb\nc\n", "a\nB\nc\n").expect("differs");
        assert_eq!(
            (hunk.line, hunk.ours, hunk.theirs),
            (2, vec!["b".into()], vec!["B".into()])
        );
        assert_eq!(first_difference("a\n", "a\n"), None);
    }
}
