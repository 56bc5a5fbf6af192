//! Names and versions the command line takes, checked once and typed from there on: an
//! addon's name, a new environment's name, an exact chart version, a namespace, a chart
//! and its repository. Each refuses in one line naming what it is and its rule; a value of
//! one of these types has passed it.
use std::sync::LazyLock;

use regex::Regex;

/// A pattern of this module's own; one that does not compile is a bug in scaffold (a
/// panic, exit 70), never the user's input.
fn pattern(re: &str) -> Regex {
    #[allow(clippy::expect_used)]
    Regex::new(re).expect("a pattern of scaffold compiles")
}

/// Defines a newtype over a string that matches `$re`, refused as "`WHAT: `v` is not RULE`".
macro_rules! checked_string {
    ($(#[$doc:meta])* $name:ident, $re:literal, $what:literal, $rule:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name(String);

        impl $name {
            pub fn parse(text: &str) -> Result<Self, String> {
                static RE: LazyLock<Regex> = LazyLock::new(|| pattern($re));
                if RE.is_match(text) {
                    Ok($name(text.to_string()))
                } else {
                    Err(format!(concat!($what, ": `{}` is not ", $rule), text))
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

checked_string!(
    /// An addon's name: a DNS-1123 label short enough for the names made from it.
    AddonName,
    r"^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$",
    "NAME",
    "a DNS-1123 label of at most 53 characters"
);
checked_string!(
    /// A new environment's name: a DNS-1123 label of at most 20 characters, starting
    /// with a letter (cluster and bucket names are made from it).
    EnvironmentName,
    r"^[a-z]([-a-z0-9]{0,18}[a-z0-9])?$",
    "NAME",
    "a DNS-1123 label of at most 20 characters"
);
checked_string!(
    /// An exact chart version (`--version`).
    Version,
    r"^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$",
    "--version",
    "an exact version such as 1.2.3"
);
checked_string!(
    /// A Kubernetes namespace (`--namespace`).
    Namespace,
    r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
    "--namespace",
    "a DNS-1123 label (at most 63 characters: lowercase letters, digits and `-`, starting and ending with a letter or digit)"
);
checked_string!(
    /// A chart repository URL (`--repo`): HelmRepository over https, OCIRepository over oci.
    ChartRepoUrl,
    r"^(https://|oci://)[^\s/]+(/\S*)?$",
    "--repo",
    "an https:// or oci:// URL"
);
checked_string!(
    /// A chart's name in its repository (`--chart`).
    ChartName,
    r"^[a-z0-9]([-a-z0-9._]*[a-z0-9])?$",
    "--chart",
    "a chart name"
);
