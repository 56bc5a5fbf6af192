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

    // Where each base line sits in the user's file, and back (None: the user changed or
    // removed it).
    let in_ours = equal_lines(&base, &ours);
    let mut ours_to_base: Vec<Option<usize>> = vec![None; ours.len()];
    for (i, j) in in_ours.iter().enumerate() {
        if let Some(j) = j {
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
    if (0..base.len()).any(|i| dropped[i] && in_ours[i].is_none()) {
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

/// Where both sides changed the same lines: the user's file line (1-based) and the three
/// versions of the region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub line: usize,
    pub base: String,
    pub ours: String,
    pub theirs: String,
}

/// A merge that could not be made clean: the user's file with git-style conflict markers
/// around each conflicting region (the rest merged), and those regions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflicted {
    pub marked: String,
    pub hunks: Vec<Hunk>,
}

/// For a merge `merge3` refuses: splits the three texts at the lines both sides kept, merges
/// the regions between them that only one side changed, and marks the others.
pub fn conflicts(base: &str, ours: &str, theirs: &str, theirs_label: &str) -> Conflicted {
    merge_regions(base, ours, theirs, theirs_label, merge3)
}

/// A three-way merge as `git merge-file --diff3` makes it: the texts are split at the base
/// lines both sides kept; a region only one side changed (or both the same way) takes
/// that change, and any other is a conflict, two insertions at one place included. Unlike
/// [`merge3`] (which keeps a user's lines beside the renderer's), nothing is guessed.
pub fn merge_file(base: &str, ours: &str, theirs: &str, theirs_label: &str) -> Conflicted {
    merge_regions(base, ours, theirs, theirs_label, |rb, ro, rt| {
        if ro == rb || ro == rt {
            Some(rt.to_string())
        } else if rt == rb {
            Some(ro.to_string())
        } else {
            None
        }
    })
}

/// Splits the three texts at the base lines both sides kept and merges each region between
/// them with `region` (base, ours, theirs → the merged text, or None for a conflict, which
/// is marked with the three versions).
fn merge_regions(
    base: &str,
    ours: &str,
    theirs: &str,
    theirs_label: &str,
    region: impl Fn(&str, &str, &str) -> Option<String>,
) -> Conflicted {
    let base: Vec<&str> = base.split_inclusive('\n').collect();
    let ours: Vec<&str> = ours.split_inclusive('\n').collect();
    let theirs: Vec<&str> = theirs.split_inclusive('\n').collect();
    let in_ours = equal_lines(&base, &ours);
    let in_theirs = equal_lines(&base, &theirs);
    // Lines both sides kept, as (base, ours, theirs) indices; a sentinel closes the file.
    let mut anchors: Vec<(usize, usize, usize)> = (0..base.len())
        .filter_map(|i| Some((i, in_ours[i]?, in_theirs[i]?)))
        .collect();
    anchors.push((base.len(), ours.len(), theirs.len()));
    let mut out = String::new();
    let mut hunks = Vec::new();
    let (mut b, mut o, mut t) = (0, 0, 0);
    for (ab, ao, at) in anchors {
        let (rb, ro, rt) = (
            base[b..ab].concat(),
            ours[o..ao].concat(),
            theirs[t..at].concat(),
        );
        match region(&rb, &ro, &rt) {
            Some(merged) => out.push_str(&merged),
            None => {
                out.push_str("<<<<<<< yours\n");
                out.push_str(&with_newline(&ro));
                out.push_str("||||||| base\n");
                out.push_str(&with_newline(&rb));
                out.push_str("=======\n");
                out.push_str(&with_newline(&rt));
                out.push_str(&format!(">>>>>>> {theirs_label}\n"));
                hunks.push(Hunk {
                    line: o + 1,
                    base: rb,
                    ours: ro,
                    theirs: rt,
                });
            }
        }
        if ab < base.len() {
            out.push_str(ours[ao]);
        }
        (b, o, t) = (ab + 1, ao + 1, at + 1);
    }
    Conflicted { marked: out, hunks }
}

/// The first region where `ours` and `theirs` differ, for a refusal that has no common base
/// (a file in the way, or an edited file scaffold would remove); `base` is left empty.
pub fn first_difference(ours: &str, theirs: &str) -> Option<Hunk> {
    let ours: Vec<&str> = ours.split_inclusive('\n').collect();
    let theirs: Vec<&str> = theirs.split_inclusive('\n').collect();
    capture_diff_slices(Algorithm::Myers, &ours, &theirs)
        .into_iter()
        .find(|op| !matches!(op, DiffOp::Equal { .. }))
        .map(|op| {
            let (old, new) = (op.old_range(), op.new_range());
            Hunk {
                line: old.start + 1,
                base: String::new(),
                ours: ours[old].concat(),
                theirs: theirs[new].concat(),
            }
        })
}

/// For each line of `a`, its index in `b` when the diff keeps it.
fn equal_lines(a: &[&str], b: &[&str]) -> Vec<Option<usize>> {
    let mut at = vec![None; a.len()];
    for op in capture_diff_slices(Algorithm::Myers, a, b) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                at[old_index + k] = Some(new_index + k);
            }
        }
    }
    at
}

fn with_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::{conflicts, merge_file, merge3};

    #[test]
    fn merge_file_conflicts_on_two_insertions_at_one_place_and_takes_the_rest() {
        let base = "a\nb\nc\n";
        let found = merge_file(base, "a\nmine\nb\nc\n", "a\ntheirs\nb\nc\nd\n", "new");
        assert_eq!(
            found.marked,
            "a\n<<<<<<< yours\nmine\n||||||| base\n=======\ntheirs\n>>>>>>> new\nb\nc\nd\n"
        );
        assert_eq!(found.hunks.len(), 1);
        let clean = merge_file(base, "a\nmine\nb\nc\n", "a\nb\nc\nd\n", "new");
        assert!(clean.hunks.is_empty());
        assert_eq!(clean.marked, "a\nmine\nb\nc\nd\n");
    }

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
    fn conflicts_mark_only_the_region_both_sides_changed() {
        let base = "a: 1\nb: 2\nc: 3\nd: 4\n";
        let ours = "# mine\na: 1\nb: 20\nc: 3\nd: 4\n";
        let theirs = "a: 1\nb: 200\nc: 3\nd: 5\n";
        assert_eq!(merge3(base, ours, theirs), None);
        let found = conflicts(base, ours, theirs, "blueprint");
        assert_eq!(
            found.marked,
            "# mine\na: 1\n<<<<<<< yours\nb: 20\n||||||| base\nb: 2\n=======\nb: 200\n>>>>>>> blueprint\nc: 3\nd: 5\n"
        );
        assert_eq!(found.hunks.len(), 1);
        assert_eq!(found.hunks[0].line, 3);
        assert_eq!(
            (found.hunks[0].base.as_str(), found.hunks[0].theirs.as_str()),
            ("b: 2\n", "b: 200\n")
        );
    }
}
