//! One pipeline per subcommand: translate arguments, call the pure core, then write,
//! commit and report. Printing happens here and nowhere below.
pub mod addon;
pub(crate) mod addon_envs;
pub mod apply;
pub mod blueprint;
pub mod check;
pub mod docs;
pub mod env;
pub mod list;
pub mod new;
pub mod promote;
pub mod update;
