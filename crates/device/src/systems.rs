//! Named system configurations (`python/mobmem/data/systems.toml`): a name, one line saying what
//! the system models, and `key=value` settings in `--set` form, applied after the device profile
//! and the scenario's `[system]` table and before the user's own `--set` values.
//!
//! Values may use `${ram_mib}` (the device's RAM visible to Linux) and `${zram_mib}` (the device's
//! zram size if its profile has one, else half its RAM), resolved against the scenario's device
//! after the scenario's and the user's kernel settings — the memory a session would boot with.

use crate::input::{self, InputError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// The variables a setting's value may use.
pub const VARIABLES: &[&str] = &["ram_mib", "zram_mib"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    description: Spanned<String>,
    #[serde(default)]
    settings: Vec<Spanned<String>>,
}

/// One named system.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct System {
    pub(crate) name: String,
    pub(crate) description: String,
    /// `key=value` settings, variables unresolved.
    pub(crate) settings: Vec<String>,
    /// Line of its `[name]` header.
    pub(crate) line: usize,
}

/// The systems of `path`, in file order; a bad entry is an error naming FILE:LINE:COL and field.
pub fn load(path: &Path) -> Result<Vec<System>, InputError> {
    let file = path.to_string_lossy().into_owned();
    let text = input::read(&file)?;
    let table: BTreeMap<Spanned<String>, Entry> = input::parse(&file, &text)?;
    let mut out = Vec::new();
    for (name, e) in table {
        let at = |span: std::ops::Range<usize>, msg: String| input::at(&file, &text, span, format!("{}: {msg}", name.get_ref()));
        let n = name.get_ref();
        let well_formed = n.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !well_formed {
            return Err(at(name.span(), "system names are lower-case words (letters, digits, '-', '_')".into()));
        }
        if e.description.get_ref().trim().is_empty() {
            return Err(at(e.description.span(), "description: empty (one line saying what the system models)".into()));
        }
        for s in &e.settings {
            let (k, v) = s.get_ref().split_once('=').unwrap_or(("", ""));
            if k.trim().is_empty() || v.trim().is_empty() {
                return Err(at(s.span(), format!("settings: {:?}: expected key=value", s.get_ref())));
            }
            for var in variables(v) {
                if !VARIABLES.contains(&var) {
                    return Err(at(s.span(), format!("settings: {:?}: unknown variable ${{{var}}}; known: {}", s.get_ref(), VARIABLES.join(", "))));
                }
            }
        }
        out.push(System {
            line: input::line_col(&text, name.span().start).0,
            name: n.clone(),
            description: e.description.get_ref().trim().to_string(),
            settings: e.settings.iter().map(|s| s.get_ref().clone()).collect(),
        });
    }
    out.sort_by_key(|s| s.line);
    Ok(out)
}

/// The names of the `${name}` variables in `v`.
fn variables(v: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = v;
    while let Some(i) = rest.find("${") {
        let Some(j) = rest[i..].find('}') else { break };
        out.push(&rest[i + 2..i + j]);
        rest = &rest[i + j + 1..];
    }
    out
}

/// The parts of a name: `"fleet-rgs+zram"` → both.
pub fn parts(name: &str) -> Vec<&str> {
    name.split('+').map(str::trim).collect()
}

/// The system `name` of `path`, or the combination of `+`-joined names (each part's settings in
/// order, the descriptions joined); an unknown part or a part named twice is an error listing the
/// known systems.
pub fn get(path: &Path, name: &str) -> Result<System, String> {
    let all = load(path).map_err(|e| e.to_string())?;
    let mut found: Vec<&System> = Vec::new();
    for part in parts(name) {
        let Some(s) = all.iter().find(|s| s.name == part) else {
            let known: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
            return Err(format!("unknown system '{part}'; known (in {}): {} (combine them with +)", path.display(), known.join(", ")));
        };
        if found.iter().any(|f| f.name == part) {
            return Err(format!("'{name}' names a system twice"));
        }
        found.push(s);
    }
    if let [one] = found[..] {
        return Ok(one.clone());
    }
    Ok(System {
        name: name.to_string(),
        description: found.iter().map(|s| s.description.as_str()).collect::<Vec<_>>().join("; "),
        settings: found.iter().flat_map(|s| s.settings.iter().cloned()).collect(),
        line: found[0].line,
    })
}

/// The settings of system `name` (a `+` combination too) as pairs, variables resolved for
/// `scenario` on `data_dir` with the user's `overrides` (only their kernel settings matter). The
/// parts' runtime policies are merged into one `system.policies` setting where the first part set
/// it: `system.policies` is a list, and a later part must not drop an earlier part's policy.
pub fn settings_for(path: &Path, name: &str, scenario: &str, data_dir: &Path, overrides: &[(String, String)]) -> Result<Vec<(String, String)>, String> {
    let sys = get(path, name)?;
    let mut vars: Option<[(String, String); 2]> = None;
    let mut out: Vec<(String, String)> = Vec::new();
    for s in &sys.settings {
        let (k, v) = s.split_once('=').expect("checked when loaded");
        let mut v = v.trim().to_string();
        if !variables(&v).is_empty() {
            if vars.is_none() {
                let kernel: Vec<(String, String)> = overrides.iter().filter(|(k, _)| k.starts_with("kernel.")).cloned().collect();
                let cfg = crate::session::run::kernel_config(scenario, data_dir, &kernel)?;
                let ram = cfg.ram_pages / 256;
                let zram = if cfg.swap == mobmem_kernel::config::SwapKind::Zram && cfg.swap_pages > 0 { cfg.swap_pages / 256 } else { ram / 2 };
                vars = Some([("ram_mib".into(), ram.to_string()), ("zram_mib".into(), zram.to_string())]);
            }
            for (n, x) in vars.as_ref().expect("set above") {
                v = v.replace(&format!("${{{n}}}"), x);
            }
        }
        out.push((k.trim().to_string(), v));
    }
    Ok(merge_policies(out))
}

/// One `system.policies` setting holding every `system.policies` value's names, in order, where
/// the first one was.
fn merge_policies(pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    let at: Vec<usize> = pairs.iter().enumerate().filter(|(_, (k, _))| k == "system.policies").map(|(i, _)| i).collect();
    if at.len() < 2 {
        return pairs;
    }
    let mut names: Vec<String> = Vec::new();
    for &i in &at {
        for n in pairs[i].1.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
    }
    let mut out: Vec<(String, String)> = pairs.into_iter().enumerate().filter(|(i, _)| !at[1..].contains(i)).map(|(_, p)| p).collect();
    out[at[0]].1 = names.join(",");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn systems_load_in_file_order_and_bad_entries_name_the_line() {
        let f = write(
            "[zz]\ndescription = \"last name, first\"\nsettings = [\"kernel.swap=zram\", \"kernel.swap_mib=${zram_mib}\"]\n\n[aa]\ndescription = \"second\"\n",
        );
        let s = load(f.path()).unwrap();
        assert_eq!(s.iter().map(|s| (s.name.as_str(), s.line)).collect::<Vec<_>>(), [("zz", 1), ("aa", 5)]);
        for (text, line, why) in [
            ("[ok]\ndescription = \"x\"\n[Bad]\ndescription = \"y\"\n", 3, "lower-case"),
            ("[a]\ndescription = \"x\"\nsettings = [\"noequals\"]\n", 3, "expected key=value"),
            ("[a]\ndescription = \"x\"\nsettings = [\"k=${nope}\"]\n", 3, "unknown variable ${nope}"),
            ("[a]\ndescription = \"x\"\ncolour = 1\n", 3, "unknown field"),
            ("[a]\nsettings = []\n", 1, "description"),
        ] {
            let f = write(text);
            let e = load(f.path()).unwrap_err();
            assert_eq!(e.line, line, "{text}: {e}");
            assert!(e.msg.contains(why), "{text}: {e}");
        }
        assert!(get(f.path(), "nope").unwrap_err().contains("known"));
    }

    #[test]
    fn combined_names_join_their_parts_and_merge_policies() {
        let f = write(
            "[a]\ndescription = \"A\"\nsettings = [\"system.policies=fleet\", \"kernel.swap=zram\"]\n\n\
             [b]\ndescription = \"B\"\nsettings = [\"kernel.swappiness=60\", \"system.policies=marvin,fleet\"]\n",
        );
        let c = get(f.path(), "a + b").unwrap();
        assert_eq!((c.description.as_str(), c.settings.len(), c.line), ("A; B", 4, 1));
        assert!(get(f.path(), "a+a").unwrap_err().contains("names a system twice"));
        let e = get(f.path(), "a+zz").unwrap_err();
        assert!(e.contains("unknown system 'zz'") && e.contains("a, b") && e.contains("combine them with +"), "{e}");
        let pairs: Vec<(String, String)> = c.settings.iter().map(|s| s.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).unwrap()).collect();
        let merged = merge_policies(pairs);
        let keys: Vec<&str> = merged.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["system.policies", "kernel.swap", "kernel.swappiness"]);
        assert_eq!(merged[0].1, "fleet,marvin");
    }
}
