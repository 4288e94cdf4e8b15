//! What folio says about itself: shell completions and the man page (from
//! the clap definitions), and the generated reference of docs/reference
//! (every command and flag, every configuration key, every MCP tool and
//! error code), written or checked by `folio __reference`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Arg, ArgAction, Args, Command};
use clap_complete::Shell;
use folio_core::ErrorCode;
use serde_json::Value;

use crate::common::Outcome;
use crate::config::FileConfig;

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    pub shell: Shell,
}

/// The argument that runs the generator, `folio __reference [--check]
/// [ROOT]`: a command for folio's own source tree, kept out of the command
/// line's help, completions and man page (and unlike `references`, which
/// users type).
pub const REFERENCE_ARG: &str = "__reference";

/// What `folio __reference` was asked.
struct ReferenceArgs {
    /// The folio source tree whose docs/reference and packaging files are
    /// written.
    root: PathBuf,
    /// Write nothing: exit 1 naming each file that differs from what would
    /// be written.
    check: bool,
}

/// The CLI's exit status for an error of `code` (see main.rs).
pub fn exit_status(code: ErrorCode) -> u8 {
    if code == ErrorCode::InvalidArgument {
        2
    } else {
        1
    }
}

/// The command tree as users see it (the CLI's, given by its caller:
/// this module sits below `cli`), built so global flags reach every
/// subcommand.
fn built(mut command: Command) -> Command {
    command.build();
    command
}

/// `folio completions SHELL`: the completion script of `command` on stdout.
pub fn completions(args: &CompletionsArgs, command: Command) -> Result<Outcome> {
    use std::io::Write;
    std::io::stdout()
        .lock()
        .write_all(completion_script(args.shell, &command).as_bytes())?;
    Ok(Outcome::Success)
}

/// `folio man`: the man page of `command` on stdout.
pub fn man(command: Command) -> Result<Outcome> {
    use std::io::Write;
    std::io::stdout()
        .lock()
        .write_all(man_page(&command)?.as_bytes())?;
    Ok(Outcome::Success)
}

fn completion_script(shell: Shell, command: &Command) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut built(command.clone()), "folio", &mut out);
    String::from_utf8(out).expect("completion scripts are UTF-8")
}

/// The man page, folio(1), with every command's options in it.
fn man_page(command: &Command) -> Result<String> {
    let command = built(command.clone());
    let mut out = Vec::new();
    let man = clap_mangen::Man::new(command.clone()).date("");
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    let mut commands = String::new();
    for sub in visible_subcommands(&command) {
        write_man_command(&mut commands, &sub, &format!("folio {}", sub.get_name()));
    }
    out.extend_from_slice(commands.as_bytes());
    man.render_version_section(&mut out)?;
    let mut page = String::from_utf8(out).context("the man page is UTF-8")?;
    page.push_str(
        ".SH \"SEE ALSO\"\nThe guide and the reference: docs/ in folio's source, \
         docs/reference/cli.md for every command.\n",
    );
    Ok(page)
}

fn write_man_command(out: &mut String, command: &Command, path: &str) {
    let _ = writeln!(out, ".SH \"{}\"", roff_text(&path.to_uppercase()));
    if let Some(about) = command.get_long_about().or(command.get_about()) {
        let _ = writeln!(out, "{}", roff_text(&about.to_string()));
    }
    let _ = writeln!(
        out,
        ".PP\n\\fBUsage:\\fR {}",
        roff_text(&usage(command, path))
    );
    for arg in documented_args(command) {
        let _ = writeln!(out, ".TP\n\\fB{}\\fR", roff_text(&arg_name(arg)));
        let _ = writeln!(out, "{}", roff_text(&arg_help(arg)));
    }
    for sub in visible_subcommands(command) {
        write_man_command(out, &sub, &format!("{path} {}", sub.get_name()));
    }
}

/// Text safe in a roff line: backslashes doubled, no line starting with a
/// control character.
fn roff_text(text: &str) -> String {
    text.replace('\\', "\\\\")
        .lines()
        .map(|line| {
            let line = line.trim();
            if line.starts_with('.') || line.starts_with('\'') {
                format!("\\&{line}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn visible_subcommands(command: &Command) -> Vec<Command> {
    command
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .cloned()
        .collect()
}

/// Arguments a command documents itself: not hidden, not the global ones
/// (documented once), not help or version.
fn documented_args(command: &Command) -> Vec<&Arg> {
    command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_global_set())
        .filter(|a| {
            !matches!(
                a.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
            )
        })
        .collect()
}

fn usage(command: &Command, path: &str) -> String {
    let mut words = vec![path.to_string()];
    if command
        .get_arguments()
        .any(|a| !a.is_positional() && !a.is_hide_set())
    {
        words.push("[OPTIONS]".into());
    }
    for arg in command.get_positionals().filter(|a| !a.is_hide_set()) {
        let name = value_names(arg);
        let repeated = matches!(arg.get_action(), ArgAction::Append)
            || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
        let name = if repeated { format!("{name}...") } else { name };
        words.push(if arg.is_required_set() {
            name
        } else {
            format!("[{name}]")
        });
    }
    if command.has_subcommands() {
        words.push("<COMMAND>".into());
    }
    words.join(" ")
}

fn value_names(arg: &Arg) -> String {
    match arg.get_value_names() {
        Some(names) => names
            .iter()
            .map(|n| format!("<{n}>"))
            .collect::<Vec<_>>()
            .join(" "),
        None => format!("<{}>", arg.get_id().as_str().to_uppercase()),
    }
}

/// `--library, -l <LIBRARY>` or `<INPUTS>`.
fn arg_name(arg: &Arg) -> String {
    if arg.is_positional() {
        return value_names(arg);
    }
    let mut name = String::new();
    if let Some(long) = arg.get_long() {
        name.push_str(&format!("--{long}"));
    }
    if let Some(short) = arg.get_short() {
        if !name.is_empty() {
            name.push_str(", ");
        }
        name.push_str(&format!("-{short}"));
    }
    if arg.get_action().takes_values() {
        name.push(' ');
        name.push_str(&value_names(arg));
    }
    name
}

/// An argument's help with its choices, default and environment variable.
fn arg_help(arg: &Arg) -> String {
    let mut help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let mut notes = Vec::new();
    let choices: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect();
    if !choices.is_empty() && arg.get_action().takes_values() {
        notes.push(format!("one of {}", choices.join(", ")));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() && arg.get_action().takes_values() {
        notes.push(format!("default {}", defaults.join(",")));
    }
    if let Some(env) = arg.get_env() {
        notes.push(format!("environment {}", env.to_string_lossy()));
    }
    if arg.is_required_set() {
        notes.push("required".into());
    }
    if !notes.is_empty() {
        if !help.is_empty() {
            help.push(' ');
        }
        help.push_str(&format!("[{}]", notes.join("; ")));
    }
    help
}

/// docs/reference/cli.md: every command and flag, from clap.
fn cli_markdown(command: &Command) -> String {
    let command = built(command.clone());
    let mut out = String::from(
        "# Command line\n\n\
         Generated by `folio __reference` from the command-line definitions; do not edit by hand. \
         `folio help COMMAND` and `man folio` say the same.\n\n\
         Exit codes: 0 success; 1 when any input failed or a fatal error occurred; 2 for \
         invalid arguments. Results go to stdout (text, or JSON with `--json`); errors, logs \
         and progress to stderr.\n\n## Options of every command\n\n",
    );
    let globals: Vec<&Arg> = command
        .get_arguments()
        .filter(|a| a.is_global_set() && !a.is_hide_set())
        .collect();
    arg_table(&mut out, &globals);
    out.push_str("## Commands\n\n");
    for sub in visible_subcommands(&command) {
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "- [`folio {name}`](#folio-{name}): {}",
            one_line(&about),
            name = sub.get_name()
        );
    }
    for sub in visible_subcommands(&command) {
        command_section(&mut out, &sub, &format!("folio {}", sub.get_name()), 2);
    }
    out
}

/// `text` on one line, its runs of whitespace one space each.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn command_section(out: &mut String, command: &Command, path: &str, depth: usize) {
    let _ = writeln!(out, "\n{} `{path}`\n", "#".repeat(depth.min(4)));
    if let Some(about) = command.get_long_about().or(command.get_about()) {
        let _ = writeln!(out, "{}\n", one_line(&about.to_string()));
    }
    let _ = writeln!(out, "```text\n{}\n```\n", usage(command, path));
    let args = documented_args(command);
    if !args.is_empty() {
        arg_table(out, &args);
    }
    for sub in visible_subcommands(command) {
        command_section(out, &sub, &format!("{path} {}", sub.get_name()), depth + 1);
    }
}

fn arg_table(out: &mut String, args: &[&Arg]) {
    out.push_str("| argument | description |\n|---|---|\n");
    for arg in args {
        let _ = writeln!(
            out,
            "| `{}` | {} |",
            arg_name(arg),
            folio_server::reference::cell(&arg_help(arg))
        );
    }
    out.push('\n');
}

/// docs/reference/config.md: every key of the configuration file, from the
/// schema of its structures (their doc comments and defaults).
fn config_markdown() -> Result<String> {
    let schema = serde_json::to_value(schemars::schema_for!(FileConfig))?;
    let definitions = schema.get("$defs").cloned().unwrap_or(Value::Null);
    let mut out = String::from(
        "# Configuration\n\n\
         Generated by `folio __reference` from the configuration structures; do not edit by \
         hand.\n\n\
         folio reads `~/.config/folio/config.toml` (or `--config FILE`, or `FOLIO_CONFIG`). \
         Every key is optional; a key folio does not know is refused, naming it. Environment \
         variables override the file, and flags override both.\n\n",
    );
    let mut sections = BTreeMap::new();
    let mut top = Vec::new();
    for (key, property) in properties(&schema) {
        match resolve(&property, &definitions) {
            Some((kind, section)) => {
                let _ = sections.insert(key.clone(), (kind, section));
            }
            None => top.push((key, property)),
        }
    }
    out.push_str("## Top level\n\n");
    key_table(&mut out, &top, &[], &definitions)?;
    let mut order: Vec<String> = properties(&schema).into_iter().map(|(k, _)| k).collect();
    order.retain(|k| sections.contains_key(k));
    for key in order {
        let (kind, section) = &sections[&key];
        write_section(&mut out, &key, *kind, section, &definitions)?;
    }
    Ok(out)
}

#[derive(Clone, Copy)]
enum SectionKind {
    /// `[name]`
    Table,
    /// `[[name]]`
    ArrayOfTables,
}

fn write_section(
    out: &mut String,
    name: &str,
    kind: SectionKind,
    section: &Value,
    definitions: &Value,
) -> Result<()> {
    let header = match kind {
        SectionKind::Table => format!("[{name}]"),
        SectionKind::ArrayOfTables => format!("[[{name}]]"),
    };
    let _ = writeln!(out, "\n## `{header}`\n");
    if let Some(description) = section.get("description").and_then(Value::as_str) {
        let _ = writeln!(out, "{}\n", one_line(description));
    }
    let mut keys = Vec::new();
    let mut nested = Vec::new();
    for (key, property) in properties(section) {
        match resolve(&property, definitions) {
            Some((kind, inner)) => nested.push((format!("{name}.{key}"), kind, inner)),
            None => keys.push((key, property)),
        }
    }
    let required: Vec<&str> = section
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    key_table(out, &keys, &required, definitions)?;
    for (name, kind, inner) in nested {
        write_section(out, &name, kind, &inner, definitions)?;
    }
    Ok(())
}

fn properties(schema: &Value) -> Vec<(String, Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// The section a property opens, when it is a structure of its own (or a
/// list of them).
fn resolve(property: &Value, definitions: &Value) -> Option<(SectionKind, Value)> {
    let lookup = |reference: &str| {
        let name = reference.strip_prefix("#/$defs/")?;
        let definition = definitions.get(name)?;
        definition
            .get("properties")
            .is_some()
            .then(|| definition.clone())
    };
    if let Some(reference) = property.get("$ref").and_then(Value::as_str) {
        return lookup(reference).map(|d| (SectionKind::Table, with_description(d, property)));
    }
    if property.get("type").and_then(Value::as_str) == Some("array") {
        let reference = property.get("items")?.get("$ref")?.as_str()?;
        return lookup(reference)
            .map(|d| (SectionKind::ArrayOfTables, with_description(d, property)));
    }
    None
}

/// The definition, described by the property's own words when it has them.
fn with_description(mut definition: Value, property: &Value) -> Value {
    if let (Some(description), Some(object)) =
        (property.get("description"), definition.as_object_mut())
    {
        object.insert("description".into(), description.clone());
    }
    definition
}

fn key_table(
    out: &mut String,
    keys: &[(String, Value)],
    required: &[&str],
    definitions: &Value,
) -> Result<()> {
    out.push_str("| key | type | default | meaning |\n|---|---|---|---|\n");
    for (key, property) in keys {
        let property = match property.get("$ref").and_then(Value::as_str) {
            Some(reference) => definitions
                .get(reference.trim_start_matches("#/$defs/"))
                .cloned()
                .unwrap_or_else(|| property.clone()),
            None => property.clone(),
        };
        let Some(description) = property.get("description").and_then(Value::as_str) else {
            bail!("the configuration key {key} has no doc comment: say what it means");
        };
        let (meaning, stated) = split_default(description);
        let default = match property.get("default").filter(|d| !d.is_null()) {
            Some(value) => format!("`{}`", toml_value(value)),
            None if required.contains(&key.as_str()) => "required".to_string(),
            None => match stated {
                Some(default) => default,
                None => bail!(
                    "the configuration key {key} states no default: end its doc comment with \
                     \"(default …)\""
                ),
            },
        };
        let mut kind = folio_server::reference::type_of(&without_default(&property));
        if kind == "any" && property.get("additionalProperties").is_some() {
            kind = "table".into();
        }
        let _ = writeln!(
            out,
            "| `{key}` | {} | {} | {} |",
            folio_server::reference::cell(&kind),
            folio_server::reference::cell(&default),
            folio_server::reference::cell(&meaning)
        );
    }
    out.push('\n');
    Ok(())
}

fn without_default(property: &Value) -> Value {
    let mut property = property.clone();
    if let Some(object) = property.as_object_mut() {
        object.remove("default");
    }
    property
}

/// A doc comment's meaning, and the default it states as "(default …)".
fn split_default(description: &str) -> (String, Option<String>) {
    let text = one_line(description);
    let Some(start) = text.rfind("(default") else {
        return (text, None);
    };
    let mut depth = 0;
    let mut end = None;
    for (i, c) in text[start..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(start + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(end) = end else {
        return (text, None);
    };
    let default = text[start + "(default".len()..end]
        .trim_start_matches(':')
        .trim()
        .to_string();
    let meaning = format!("{}{}", text[..start].trim_end(), &text[end + 1..]);
    let meaning = meaning.trim().trim_end_matches([',', ';']).to_string();
    let meaning = if meaning.ends_with('.') {
        meaning
    } else {
        format!("{meaning}.")
    };
    (meaning, Some(default))
}

fn toml_value(value: &Value) -> String {
    match value {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

/// Every generated file, by its path under the source tree.
fn generated(command: &Command) -> Result<Vec<(PathBuf, String)>> {
    let share = Path::new("packaging/pypi/folio_mcp.data/data/share");
    Ok(vec![
        (
            PathBuf::from("docs/reference/cli.md"),
            cli_markdown(command),
        ),
        (
            PathBuf::from("docs/reference/config.md"),
            config_markdown()?,
        ),
        (
            PathBuf::from("docs/reference/tools.md"),
            folio_server::reference::tools_markdown(),
        ),
        (
            PathBuf::from("docs/reference/errors.md"),
            folio_server::reference::errors_markdown(exit_status),
        ),
        (share.join("man/man1/folio.1"), man_page(command)?),
        (
            share.join("bash-completion/completions/folio"),
            completion_script(Shell::Bash, command),
        ),
        (
            share.join("zsh/site-functions/_folio"),
            completion_script(Shell::Zsh, command),
        ),
        (
            share.join("fish/vendor_completions.d/folio.fish"),
            completion_script(Shell::Fish, command),
        ),
    ])
}

/// `folio __reference [--check] [ROOT]`, given the CLI's command tree and
/// the arguments after `__reference`.
pub fn main(command: Command, arguments: impl Iterator<Item = String>) -> std::process::ExitCode {
    let mut args = ReferenceArgs {
        root: PathBuf::from("."),
        check: false,
    };
    for argument in arguments {
        match argument.as_str() {
            "--check" => args.check = true,
            flag if flag.starts_with('-') => {
                eprintln!("usage: folio {REFERENCE_ARG} [--check] [ROOT]");
                return std::process::ExitCode::from(2);
            }
            root => args.root = PathBuf::from(root),
        }
    }
    match reference(&command, &args) {
        Ok(_) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}

fn reference(command: &Command, args: &ReferenceArgs) -> Result<Outcome> {
    let mut stale = Vec::new();
    for (path, text) in generated(command)? {
        let path = args.root.join(path);
        let current = std::fs::read_to_string(&path).ok();
        if current.as_deref() == Some(text.as_str()) {
            continue;
        }
        if args.check {
            stale.push(path.display().to_string());
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if !stale.is_empty() {
        bail!(
            "the generated reference is out of date: {} (run `cargo run -p folio-cli -- __reference` at the top of the source tree)",
            stale.join(", ")
        );
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stated_default_is_taken_out_of_the_meaning() {
        assert_eq!(
            split_default("A full pass at least this often, in seconds (default 300)."),
            (
                "A full pass at least this often, in seconds.".into(),
                Some("300".into())
            )
        );
        assert_eq!(
            split_default("The id (default the hub id, else folio.json (its id))."),
            (
                "The id.".into(),
                Some("the hub id, else folio.json (its id)".into())
            )
        );
        assert_eq!(
            split_default("No default stated."),
            ("No default stated.".into(), None)
        );
    }

    #[test]
    fn every_configuration_key_says_what_it_means_and_its_default() {
        let page = config_markdown().unwrap();
        for section in [
            "[model]",
            "[limits]",
            "[serve]",
            "[serve.oauth]",
            "[[watch]]",
        ] {
            assert!(page.contains(&format!("## `{section}`")), "{section}");
        }
        // The limits' defaults are the values folio uses.
        assert!(
            page.contains("| `max_pages` | integer (≥ 0) | `5000` |"),
            "{page}"
        );
    }
}
