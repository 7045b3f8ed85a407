//! Reading other hosts' JSON, in steps: the text (`jsonc`), its shape and where its entries are
//! (`shape`), VS Code's `inputs` (`inputs`), and each server entry (`entry`). An entry's fields
//! are read through `fields`, the references in its strings through `scan`, a name for a server
//! pasted without one from `names`, and its sign-in choices by `oauth`.
//!
//! Everything here is strict about types (a wrong type is an error naming the field) and lenient
//! about extras (an unknown field is ignored with a warning). Messages name fields and kinds of
//! value, never values: a misplaced value may be a secret.

mod entry;
mod fields;
mod inputs;
mod jsonc;
mod names;
mod oauth;
mod scan;
mod shape;

pub(super) use entry::{read_entry, ReadEntry, ReadKind};
pub(super) use inputs::InputDef;
pub(super) use jsonc::parse_text;
pub(super) use shape::find_servers;
pub use shape::Format;
