//! One module per subcommand.

pub(crate) mod floor;
pub(crate) mod serve;
