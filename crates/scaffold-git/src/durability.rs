//! What of a commit git syncs to disk as it writes it: `core.fsync`'s components, read as
//! git 2.47 reads them (config.c `parse_fsync_components`, write-or-die.h), and the
//! deprecated `core.fsyncObjectFiles`. By default git syncs packs and their indexes and
//! nothing else: not loose objects, not refs, not the index. `new` syncs what git would
//! for its pack, refs and index, and no more.

/// git's `enum fsync_component` bits.
const LOOSE_OBJECT: u8 = 1 << 0;
const PACK: u8 = 1 << 1;
const PACK_METADATA: u8 = 1 << 2;
const COMMIT_GRAPH: u8 = 1 << 3;
const INDEX: u8 = 1 << 4;
const REFERENCE: u8 = 1 << 5;
const OBJECTS: u8 = LOOSE_OBJECT | PACK;
const DERIVED_METADATA: u8 = PACK_METADATA | COMMIT_GRAPH;
const COMMITTED: u8 = OBJECTS | REFERENCE;
const ADDED: u8 = COMMITTED | INDEX;
const ALL: u8 = OBJECTS | DERIVED_METADATA | INDEX | REFERENCE;
/// `FSYNC_COMPONENTS_DEFAULT` (and `_PLATFORM_DEFAULT` off Windows).
const DEFAULT: u8 = (OBJECTS | DERIVED_METADATA) & !LOOSE_OBJECT;

/// config.c's `fsync_component_names`, in its order.
const NAMES: &[(&str, u8)] = &[
    ("loose-object", LOOSE_OBJECT),
    ("pack", PACK),
    ("pack-metadata", PACK_METADATA),
    ("commit-graph", COMMIT_GRAPH),
    ("index", INDEX),
    ("objects", OBJECTS),
    ("reference", REFERENCE),
    ("derived-metadata", DERIVED_METADATA),
    ("committed", COMMITTED),
    ("added", ADDED),
    ("all", ALL),
];

/// The parts of a repository git syncs to disk as it writes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fsync {
    components: u8,
    /// `core.fsyncObjectFiles=true`: loose objects are synced whatever `core.fsync` says.
    object_files: bool,
}

impl Default for Fsync {
    fn default() -> Self {
        Fsync {
            components: DEFAULT,
            object_files: false,
        }
    }
}

impl Fsync {
    /// What git syncs given `core.fsync` (None: unset) and `core.fsyncObjectFiles`.
    pub fn from_config(components: Option<&str>, object_files: Option<bool>) -> Fsync {
        Fsync {
            components: components.map_or(DEFAULT, parse_components),
            object_files: object_files.unwrap_or(false),
        }
    }

    /// Every part synced: for a caller that cannot ask git's configuration.
    pub fn all() -> Fsync {
        Fsync {
            components: ALL,
            object_files: true,
        }
    }

    /// A pack file (`pack`).
    pub fn packs(self) -> bool {
        self.components & PACK != 0
    }

    /// A pack's `.idx` (`pack-metadata`).
    pub fn pack_indexes(self) -> bool {
        self.components & PACK_METADATA != 0
    }

    /// What libgit2 writes for a commit: refs and reflogs (and loose objects, which `new`
    /// writes only under a filter driver). libgit2 has one switch for all of its files
    /// (`GIT_OPT_ENABLE_FSYNC_GITDIR`), so it is on when git would sync any of them.
    pub fn libgit2_files(self) -> bool {
        self.components & (REFERENCE | LOOSE_OBJECT) != 0 || self.object_files
    }

    /// The index (`index`): libgit2 never syncs it, so the caller does.
    pub fn index(self) -> bool {
        self.components & INDEX != 0
    }
}

/// git's `parse_fsync_components`, quirks kept: a name matches any component it is a
/// prefix of (`pack` also names `pack-metadata`), a name given wins over its removal,
/// `none` clears the default only as the
/// value's last name, `-NAME` removes, a name is taken with its spaces (`index ` names
/// nothing), unknown names are ignored (git warns).
fn parse_components(value: &str) -> u8 {
    let mut current = DEFAULT;
    let (mut positive, mut negative) = (0u8, 0u8);
    let mut rest = value;
    loop {
        rest = rest.trim_start_matches([',', ' ', '\t', '\n', '\r']);
        let end = rest.find(',').unwrap_or(rest.len());
        if rest == "none" {
            current = 0;
        } else {
            let (negated, name) = match rest[..end].strip_prefix('-') {
                Some(name) => (true, name),
                None => (false, &rest[..end]),
            };
            if name.is_empty() {
                break;
            }
            let bits = NAMES
                .iter()
                .filter(|(known, _)| known.starts_with(name))
                .fold(0, |bits, (_, component)| bits | component);
            match negated {
                true => negative |= bits,
                false => positive |= bits,
            }
        }
        if end == rest.len() {
            break;
        }
        rest = &rest[end..];
    }
    (current & !negative) | positive
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(value: &str) -> u8 {
        Fsync::from_config(Some(value), None).components
    }

    #[test]
    fn git_syncs_packs_and_their_indexes_by_default_and_not_refs_or_the_index() {
        let default = Fsync::from_config(None, None);
        assert_eq!(default, Fsync::default());
        assert!(default.packs() && default.pack_indexes());
        assert!(!default.libgit2_files() && !default.index());
    }

    #[test]
    fn components_read_as_git_reads_them() {
        assert_eq!(parsed("none"), 0);
        assert_eq!(parsed("reference"), DEFAULT | REFERENCE);
        assert_eq!(parsed("reference,none"), REFERENCE);
        assert_eq!(parsed("none,reference"), DEFAULT | REFERENCE);
        assert_eq!(parsed("committed"), DEFAULT | LOOSE_OBJECT | REFERENCE);
        // A name given wins over a removal, wherever each stands (git ORs the positives last).
        assert_eq!(parsed("all,-pack-metadata"), ALL);
        assert_eq!(parsed("-pack-metadata"), DEFAULT & !PACK_METADATA);
        assert_eq!(parsed("-pack"), DEFAULT & !(PACK | PACK_METADATA));
        assert_eq!(
            parsed(" index,\tloose-object"),
            DEFAULT | INDEX | LOOSE_OBJECT
        );
        assert_eq!(parsed("index ,reference"), DEFAULT | REFERENCE);
        assert_eq!(parsed("-"), DEFAULT);
        assert_eq!(parsed("no-such-part"), DEFAULT);
        let added = Fsync::from_config(Some("added"), None);
        assert!(added.libgit2_files() && added.index());
        assert!(!Fsync::from_config(Some("index"), None).libgit2_files());
        assert!(!Fsync::from_config(Some("none"), None).packs());
    }

    #[test]
    fn fsync_object_files_syncs_what_libgit2_writes() {
        assert!(Fsync::from_config(None, Some(true)).libgit2_files());
        assert!(Fsync::all().libgit2_files() && Fsync::all().index());
    }
}
