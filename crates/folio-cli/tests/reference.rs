//! The generated reference is the code's: the committed docs/reference,
//! man page and completion scripts equal what this build writes, and the
//! bash completion completes folio's own commands, flags and values.

use std::path::{Path, PathBuf};
use std::process::Command;

fn folio() -> Command {
    Command::new(env!("CARGO_BIN_EXE_folio"))
}

fn source_tree() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_committed_reference_is_what_this_build_generates() {
    let out = folio()
        .args(["__reference", "--check"])
        .arg(source_tree())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\nRun `cargo run -p folio-cli -- __reference` at the top of the source tree and commit \
         the result.",
        String::from_utf8_lossy(&out.stderr)
    );
    // A file that drifts is named, and nothing is written while checking.
    let copy = tempfile::tempdir().unwrap();
    let written = folio()
        .arg("__reference")
        .arg(copy.path())
        .output()
        .unwrap();
    assert!(written.status.success());
    let cli = copy.path().join("docs/reference/cli.md");
    let text = std::fs::read_to_string(&cli).unwrap();
    std::fs::write(&cli, text.replace("folio ingest", "folio eat")).unwrap();
    let stale = folio()
        .args(["__reference", "--check"])
        .arg(copy.path())
        .output()
        .unwrap();
    assert_eq!(stale.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&stale.stderr);
    assert!(stderr.contains("docs/reference/cli.md"), "{stderr}");
    assert!(!stderr.contains("tools.md"), "{stderr}");
    assert!(std::fs::read_to_string(&cli).unwrap().contains("folio eat"));
}

/// What bash completes for `words` (the last one being typed), through
/// the script `folio completions bash` prints.
fn bash_completes(script: &Path, words: &[&str]) -> Vec<String> {
    let words_quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_LINE='{}'\nCOMP_POINT=${{#COMP_LINE}}\n\
         _folio folio '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        words_quoted.join(" "),
        words.len() - 1,
        words.join(" "),
        words[words.len() - 1],
        words
            .get(words.len().wrapping_sub(2))
            .copied()
            .unwrap_or("folio"),
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn bash_completes_commands_flags_and_their_values() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("folio.bash");
    let out = folio().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    std::fs::write(&script, &out.stdout).unwrap();

    assert_eq!(bash_completes(&script, &["folio", "ing"]), ["ingest"]);
    let commands = bash_completes(&script, &["folio", ""]);
    for command in ["ingest", "search", "serve", "sync", "completions", "man"] {
        assert!(
            commands.iter().any(|c| c == command),
            "{command}: {commands:?}"
        );
    }
    // The source tree's generator is not offered.
    assert!(
        !commands.iter().any(|c| c.starts_with("__")),
        "{commands:?}"
    );
    let flags = bash_completes(&script, &["folio", "search", "--mo"]);
    assert!(
        flags.contains(&"--mode".to_string()) && flags.contains(&"--model".to_string()),
        "{flags:?}"
    );
    assert_eq!(
        bash_completes(&script, &["folio", "search", "--mode", "le"]),
        ["lexical"]
    );
    assert_eq!(
        bash_completes(&script, &["folio", "completions", "fi"]),
        ["fish"]
    );
}

#[test]
fn the_man_page_is_roff_with_every_command() {
    let out = folio().arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq") || page.starts_with(".TH"),
        "{}",
        &page[..200]
    );
    assert!(page.contains(".TH folio 1"), "{}", &page[..300]);
    for command in [
        "FOLIO INGEST",
        "FOLIO SERVE",
        "FOLIO KEYS CREATE",
        "FOLIO MODELS PULL",
    ] {
        assert!(page.contains(&format!(".SH \"{command}\"")), "{command}");
    }
    // man reads it (scripts/setup.sh installs man-db).
    let mut child = Command::new("man")
        .args(["-l", "-"])
        .env("MANWIDTH", "100")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("man (Debian's man-db; scripts/setup.sh installs it)");
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(page.as_bytes())
            .unwrap();
    }
    let rendered = child.wait_with_output().unwrap();
    assert!(
        rendered.status.success(),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    let text = String::from_utf8_lossy(&rendered.stdout);
    assert!(text.contains("--response-mode"), "{text}");
    assert!(text.contains("folio ingest [OPTIONS]"), "{text}");
}
