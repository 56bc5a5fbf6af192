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
    let mut ours_to_base: Vec<Option<usize>> = vec![None; ours.len()];
    let mut base_kept_by_user = vec![false; base.len()];
    for op in capture_diff_slices(Algorithm::Myers, &base, &ours) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                ours_to_base[new_index + k] = Some(old_index + k);
                base_kept_by_user[old_index + k] = true;
            }
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

#[cfg(test)]
mod tests {
    use super::merge3;

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
}
