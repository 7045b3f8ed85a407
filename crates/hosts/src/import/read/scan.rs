//! The `${…}` references in an entry's strings: rewritten where Toolgate will fill them in
//! (Claude Code's `${NAME}` becomes `${env:NAME}`), checked (a VS Code `${input:id}` must name
//! an input), and reported as warnings where the server will receive them as written.

use std::collections::{BTreeMap, BTreeSet};

use super::inputs::InputDef;
use crate::import::error::ImportError;
use crate::import::vars::{self, Reference};

/// Where a string sits. Toolgate fills in references only in env values and HTTP headers; in
/// the command, its arguments, the working folder and the URL the text is used as written.
#[derive(Clone, Copy)]
pub(super) enum Place {
    Filled,
    Verbatim(&'static str),
}

/// Rewrites the references in one string and remembers what it saw.
pub(super) struct Scan<'a> {
    vscode: bool,
    inputs: &'a BTreeMap<String, InputDef>,
    used: BTreeSet<String>,
    /// Claude Code's `${NAME}`, written as `${env:NAME}`.
    bare: BTreeSet<String>,
    /// References kept in env values and headers that Toolgate does not fill in.
    other: BTreeSet<String>,
    /// References kept where nothing is filled in, by field.
    verbatim: BTreeMap<&'static str, BTreeSet<String>>,
    /// Password inputs used where nothing is filled in, by field.
    secrets_verbatim: BTreeMap<&'static str, BTreeSet<String>>,
}

impl<'a> Scan<'a> {
    /// A scan of one entry; `vscode` when it comes from VS Code, whose `${input:…}` it knows.
    pub(super) fn new(vscode: bool, inputs: &'a BTreeMap<String, InputDef>) -> Self {
        Self {
            vscode,
            inputs,
            used: BTreeSet::new(),
            bare: BTreeSet::new(),
            other: BTreeSet::new(),
            verbatim: BTreeMap::new(),
            secrets_verbatim: BTreeMap::new(),
        }
    }

    /// The VS Code inputs the entry's strings refer to.
    pub(super) fn into_used(self) -> BTreeSet<String> {
        self.used
    }

    pub(super) fn process(
        &mut self,
        s: &str,
        at: &str,
        place: Place,
    ) -> Result<String, ImportError> {
        let mut failure = None;
        let out = vars::rewrite(s, |inner| match (vars::classify(inner), place) {
            (Reference::Input(id), _) if self.vscode => {
                match self.inputs.get(id) {
                    Some(def) => {
                        self.used.insert(id.to_owned());
                        if let (true, Place::Verbatim(field)) = (def.password, place) {
                            self.secrets_verbatim
                                .entry(field)
                                .or_default()
                                .insert(id.to_owned());
                        }
                    }
                    None => {
                        failure.get_or_insert(ImportError::Invalid {
                            at: at.to_owned(),
                            problem: format!("`${{input:{id}}}` names no entry of `inputs`"),
                        });
                    }
                }
                None
            }
            (Reference::Malformed, Place::Filled) => {
                failure.get_or_insert(ImportError::Invalid {
                    at: at.to_owned(),
                    problem: format!(
                        "`{}` does not name a variable or secret: a name starts with a letter or \
                         `_` and has only letters, digits, `_`, `.` and `-`",
                        vars::shown(inner)
                    ),
                });
                None
            }
            (Reference::Env | Reference::Secret(_), Place::Filled) => None,
            (Reference::Bare(name), Place::Filled) if !self.vscode => {
                self.bare.insert(name.to_owned());
                Some(format!("${{env:{name}}}"))
            }
            (_, Place::Filled) => {
                self.other.insert(vars::shown(inner));
                None
            }
            (_, Place::Verbatim(field)) => {
                self.verbatim
                    .entry(field)
                    .or_default()
                    .insert(vars::shown(inner));
                None
            }
        });
        match failure {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    pub(super) fn warnings(&self) -> Vec<String> {
        let listed = |set: &BTreeSet<String>| {
            set.iter()
                .map(|r| format!("`{r}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut warnings: Vec<String> = self
            .bare
            .iter()
            .map(|name| {
                format!(
                    "read `${{{name}}}` as the environment variable {name} (Claude Code's \
                     spelling) and wrote it as `${{env:{name}}}`"
                )
            })
            .collect();
        if !self.other.is_empty() {
            warnings.push(format!(
                "kept {} as written: Toolgate fills in only `${{env:NAME}}` and \
                 `${{secret:NAME}}`, so replace it if the server needs a real value",
                listed(&self.other)
            ));
        }
        for (field, references) in &self.verbatim {
            warnings.push(format!(
                "kept {} in `{field}` as written: Toolgate fills in references only in env \
                 values and headers, so the server receives this text as it is",
                listed(references)
            ));
        }
        for (field, ids) in &self.secrets_verbatim {
            let ids: BTreeSet<String> = ids.iter().map(|id| format!("${{input:{id}}}")).collect();
            warnings.push(format!(
                "the password input {} in `{field}` became a keychain reference, but Toolgate \
                 fills in secrets only in env values and headers: the server receives the \
                 reference, not the secret; pass the secret in `env` if the server reads it there",
                listed(&ids)
            ));
        }
        warnings
    }
}
