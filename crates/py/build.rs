//! Embeds `MOBMEM_SOURCE_HASH`: a SHA-256 of the workspace's Rust sources, manifests and lock
//! file, the compiler's version and the build profile. Results of runs are keyed by it (with the
//! package's data files, in `mobmem.session.provenance.code_version`), so a run made on another
//! machine or in another checkout of the same code is recognised as the same code; a hash of the
//! compiled library would not be (it holds the checkout's paths in its debug information).

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                collect(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs" || x == "toml") {
            out.push(p);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![root.join("Cargo.toml"), root.join("Cargo.lock")];
    collect(&root.join("crates"), &mut files);
    files.sort();
    let mut h = Sha256::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap_or(f);
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        h.update(std::fs::read(f).unwrap_or_default());
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc).arg("-V").output().map(|o| o.stdout).unwrap_or_default();
    h.update(&version);
    h.update(std::env::var("PROFILE").unwrap_or_default().as_bytes());
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=MOBMEM_SOURCE_HASH={hex}");
    println!("cargo:rerun-if-changed={}", root.join("crates").display());
    println!("cargo:rerun-if-changed={}", root.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed={}", root.join("Cargo.lock").display());
}
