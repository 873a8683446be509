//! The crate's top-level modules form layers: each may use those below
//! it, never one above (no import circles). This test reads the sources,
//! collects every `crate::<module>` a module names outside its tests, and
//! fails on a cycle, naming it and a file on each of its edges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// module -> (module it uses -> a file that uses it)
type Uses = BTreeMap<String, BTreeMap<String, PathBuf>>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules (`tests` aside) and the files of each.
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(src()).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if stem == "lib" || stem == "tests" {
            continue;
        }
        let files = match path.is_dir() {
            true => rust_files(&path),
            false if path.extension().is_some_and(|e| e == "rs") => vec![path.clone()],
            false => continue,
        };
        out.entry(stem.to_string())
            .or_insert_with(Vec::new)
            .extend(files);
    }
    out
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a module directory is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The source without its `#[cfg(test)]` part and comments.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every module name `code` reaches as `crate::name` or inside
/// `crate::{a, b::c, ...}`.
fn named(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => out.extend(group_heads(group)),
            None => out.extend(ident(rest)),
        }
    }
    out
}

/// The first path segment of each item of a `{...}` group (up to its
/// closing brace).
fn group_heads(group: &str) -> Vec<String> {
    let (mut depth, mut start, mut heads) = (0usize, true, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            c if start && (c.is_alphanumeric() || c == '_') => {
                heads.extend(ident(&group[i..]));
                start = false;
            }
            _ => {}
        }
    }
    heads
}

fn ident(s: &str) -> Option<String> {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (end > 0).then(|| s[..end].to_string())
}

fn uses() -> Uses {
    let mods = modules();
    let mut uses = Uses::new();
    for (m, files) in &mods {
        let edges = uses.entry(m.clone()).or_default();
        for f in files {
            let text = std::fs::read_to_string(f).expect("a source file is readable");
            for n in named(&code_of(&text)) {
                if &n != m && mods.contains_key(&n) {
                    edges.entry(n).or_insert_with(|| f.clone());
                }
            }
        }
    }
    uses
}

/// A cycle through `from`, as the modules on it, if there is one.
fn cycle_from(uses: &Uses, from: &str) -> Option<Vec<String>> {
    fn walk(
        uses: &Uses,
        at: &str,
        from: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in uses.get(at).into_iter().flat_map(|e| e.keys()) {
            if next == from {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(uses, next, from, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![from.to_string()];
    let found = walk(uses, from, from, &mut path, &mut BTreeSet::new());
    found.then_some(path)
}

#[test]
fn modules_form_layers_without_circles() {
    let uses = uses();
    assert!(
        uses.len() > 5,
        "the module list was read: {:?}",
        uses.keys()
    );
    for m in uses.keys() {
        let Some(cycle) = cycle_from(&uses, m) else {
            continue;
        };
        let edges: Vec<String> = cycle
            .iter()
            .zip(cycle.iter().cycle().skip(1))
            .map(|(a, b)| format!("{a} -> {b} ({})", uses[a][b].display()))
            .collect();
        panic!(
            "import circle among the modules of sql:\n  {}",
            edges.join("\n  ")
        );
    }
}

#[test]
fn the_reader_sees_grouped_and_plain_paths() {
    let code = "use crate::{expr::{eval, Env}, plan};\nlet x = crate::exec::run();";
    let found: Vec<String> = named(code).into_iter().collect();
    assert_eq!(found, ["exec", "expr", "plan"]);
    let mut uses = Uses::new();
    uses.entry("a".into())
        .or_default()
        .insert("b".into(), "x".into());
    uses.entry("b".into())
        .or_default()
        .insert("a".into(), "y".into());
    assert_eq!(
        cycle_from(&uses, "a"),
        Some(vec!["a".to_string(), "b".to_string()])
    );
}
